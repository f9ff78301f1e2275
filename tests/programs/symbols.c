/* Symbolication test program: functions, lines and inlined code. */
#include "helper.h"

__attribute__((noinline)) int work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += i * 3; /* MARK work-loop */
    }
    return s;
}

int main(int argc, char **argv) {
    (void)argv;
    int r = work(argc * 10); /* MARK main-work */
    return r + helper(argc); /* MARK main-helper */
}
