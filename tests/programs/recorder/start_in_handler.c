/* Recording switched off, then on inside a signal handler that started
   while it was off, for the recorder's tests. (Callgrind itself stops on an
   assertion when the handler returns.) */
#include <signal.h>
#include <valgrind/callgrind.h>

static volatile long sink;

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++)
        sink += i;
}

static void on_usr1(int signo) {
    (void)signo;
    CALLGRIND_START_INSTRUMENTATION;
    work(10);
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    work(100);
    CALLGRIND_STOP_INSTRUMENTATION;
    raise(SIGUSR1);
    work(1000);
    return 0;
}
