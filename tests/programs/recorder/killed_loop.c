/* A loop of one block that a child process interrupts with SIGSEGV sent
   by kill, which a handler counts: the signals arrive between two runs of
   the block, at its start, where a fault of its last access would leave
   the thread too. argv[1] is how many signals the child sends. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long handled;

static void on_signal(int signo) {
    (void)signo;
    handled++;
}

__attribute__((noinline)) long spin(long rounds) {
    long x = 1;
    for (long i = 0; i < rounds; i++)
        x = x * 3 + (x >> 7);
    return x;
}

int main(int argc, char **argv) {
    int signals = argc > 1 ? atoi(argv[1]) : 0;
    struct sigaction action = {0};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigaction(SIGSEGV, &action, 0);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < signals; i++) {
            usleep(1000);
            kill(parent, SIGSEGV);
        }
        _exit(0);
    }
    long x = spin(4000000);
    kill(child, SIGKILL);
    waitpid(child, 0, 0);
    return (int)(x & 0x7f);
}
