/* A signal handler run many times, doing work of its own. */
#include <signal.h>

static volatile long handled;

__attribute__((noinline)) void handler_work(int n) {
    for (int i = 0; i < 500; i++)
        handled += i ^ n;
}

static void on_signal(int signo) { handler_work(signo); }

__attribute__((noinline)) long main_work(int n) {
    long s = 0;
    for (int i = 0; i < 1000; i++)
        s += i * n;
    return s;
}

int main(void) {
    signal(SIGUSR1, on_signal);
    long total = 0;
    for (int i = 0; i < 300; i++) {
        total += main_work(i);
        raise(SIGUSR1);
    }
    return (int)((total + handled) & 0x7f);
}
