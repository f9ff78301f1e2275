/* A program that a fault kills: the loop writes through a pointer that
   becomes null on its last iteration, in the middle of the loop's block. */
#include <stdio.h>

static long sink;

__attribute__((noinline)) long work(long *p, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += p[i & 1023];
        if (i == n - 1)
            p = 0;
        p[0] = s;
        s ^= p[1];
    }
    return s;
}

int main(void) {
    static long a[1024];
    sink = work(a, 1000);
    printf("%ld\n", sink);
    return 0;
}
