/* Calls interrupted by timer signals: Valgrind delivers a pending signal
 * between two blocks, also between a block that ends in a call and the
 * callee's first block. Prints how many times main called leaf. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile int signals;
static volatile long handled;

__attribute__((noinline)) void handler_work(int n) {
    for (int i = 0; i < 20; i++)
        handled += i ^ n;
}

static void on_alarm(int signo) {
    handler_work(signo);
    signals++;
}

__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }

int main(void) {
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &every, 0);
    long calls = 0, sum = 0;
    while (signals < 50) {
        sum += leaf(calls);
        calls++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, 0);
    printf("%ld\n", calls);
    return sum == -1;
}
