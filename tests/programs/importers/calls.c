/* A small program for the Lackey comparison: its own calls (a recursion
   and a helper), C library calls through the PLT, and a callback from the
   C library into its code. About a million instructions. */
#include <stdlib.h>
#include <string.h>

#define N 2000

__attribute__((noinline)) int compare(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

__attribute__((noinline)) void fill(int *v, int n) {
    unsigned s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (int)(s >> 8);
    }
}

__attribute__((noinline)) long sum(const int *v, int from, int to) {
    if (to - from < 64) {
        long total = 0;
        for (int i = from; i < to; i++)
            total += v[i];
        return total;
    }
    int middle = from + (to - from) / 2;
    return sum(v, from, middle) + sum(v, middle, to);
}

int main(void) {
    int *v = malloc(N * sizeof *v), *w = malloc(N * sizeof *w);
    fill(v, N);
    memcpy(w, v, N * sizeof *v);
    qsort(w, N, sizeof *w, compare);
    long total = sum(w, 0, N) + sum(v, 0, N);
    free(w);
    free(v);
    return (int)(total & 0x7f);
}
