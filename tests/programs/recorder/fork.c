/* A forked child does work the parent's trace must not hold. */
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void child_work(void) {
    for (int i = 0; i < 200000; i++)
        sink += i;
}

__attribute__((noinline)) void parent_work(void) {
    for (int i = 0; i < 1000; i++)
        sink += i;
}

int main(void) {
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        _exit(0);
    }
    parent_work();
    int status;
    waitpid(pid, &status, 0);
    return WEXITSTATUS(status);
}
