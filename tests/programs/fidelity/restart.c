/* Recording stopped inside a call and started again inside another, for
   the fidelity tests: Callgrind unwinds every call stack whenever
   instrumentation is switched off or on, so the code after the start runs
   under none of the calls open at the stop. */
#include <valgrind/callgrind.h>

static volatile long sink;

__attribute__((noinline)) static void work(int n) {
    for (int i = 0; i < n; i++)
        sink += i;
}

__attribute__((noinline)) static void measured(void) {
    work(1000);
    CALLGRIND_STOP_INSTRUMENTATION;
}

__attribute__((noinline)) static void sibling(void) {
    CALLGRIND_START_INSTRUMENTATION;
    work(3000);
}

int main(void) {
    measured();
    sibling();
    work(5000);
    return 0;
}
