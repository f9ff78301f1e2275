/* Faults whose handler does not return: a division by zero and a read of
   an unmapped page, each after a read in a block after its function's
   first (a fault in the first block a call enters drops the call, which
   Callgrind counts: see the README), caught by a handler that leaves by
   siglongjmp. The runs the faults cut short do not run again. */
#include <setjmp.h>
#include <signal.h>

static sigjmp_buf back;
static volatile long zero;
static volatile long caught;
static volatile long offset = 1;

static void on_fault(int signo) {
    (void)signo;
    caught++;
    siglongjmp(back, 1);
}

__attribute__((noinline)) long scale(long a, long by) {
    return a * by + 3;
}

__attribute__((noinline)) long divide(long a, long b) {
    long scaled = scale(a, 7) + offset;
    return scaled / b + a;
}

__attribute__((noinline)) long read_through(const long *pointer, long a) {
    long scaled = scale(a, 5) + offset;
    return scaled + *pointer;
}

int main(void) {
    struct sigaction action = {0};
    action.sa_handler = on_fault;
    sigaction(SIGFPE, &action, 0);
    sigaction(SIGSEGV, &action, 0);
    long one = 1, sum = 0;
    for (long i = 0; i < 400; i++) {
        if (sigsetjmp(back, 1) == 0)
            sum += divide(i, i % 4 == 0 ? zero : 3);
        if (sigsetjmp(back, 1) == 0)
            sum += read_through(i % 5 == 0 ? (const long *)16 : &one, i);
    }
    return caught == 100 + 80 ? (int)(sum & 0x7f) : 255;
}
