/* Calls execve twice: first a program that does not exist (the call fails
 * and the program goes on), then, unless given an argument, /bin/true,
 * which replaces it. */
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void before_exec(void) {
    for (int i = 0; i < 1000; i++)
        sink += i;
}

__attribute__((noinline)) void after_failed_exec(void) {
    for (int i = 0; i < 2000; i++)
        sink += i;
}

int main(int argc, char** argv) {
    (void)argv;
    before_exec();
    execl("/nonexistent/program", "program", (char*)0);
    after_failed_exec();
    if (argc > 1)
        return 0;
    execl("/bin/true", "true", (char*)0);
    return 1;
}
