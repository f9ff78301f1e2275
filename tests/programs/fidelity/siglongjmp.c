/* A signal handler that never returns: it jumps out with siglongjmp to the
 * code it interrupted, three calls up, so its `sigreturn` never comes. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static sigjmp_buf resume;
static volatile long work;

static void on_signal(int signo) {
    for (int i = 0; i < 100; i++)
        work += i ^ signo;
    siglongjmp(resume, 1);
}

__attribute__((noinline)) void level3(int k) {
    volatile char buf[256];
    memset((char *)buf, k, sizeof buf);
    if (k % 3 == 0)
        raise(SIGUSR1);
    work += buf[7];
}

__attribute__((noinline)) void level2(int k) {
    level3(k);
    work++;
}

__attribute__((noinline)) void level1(int k) {
    level2(k);
    work++;
}

int main(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGUSR1, &action, 0);
    int jumps = 0;
    for (int k = 0; k < 300; k++) {
        if (sigsetjmp(resume, 1)) {
            jumps++;
            continue;
        }
        level1(k);
    }
    return jumps == 100 ? 0 : 1;
}
