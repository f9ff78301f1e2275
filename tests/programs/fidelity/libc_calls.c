/* C library calls from user code: qsort (calling back into user code) and
   memcpy. */
#include <stdlib.h>
#include <string.h>

#define N 30000

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

int main(void) {
    int *v = malloc(N * sizeof *v), *w = malloc(N * sizeof *w);
    fill(v, N);
    for (int round = 0; round < 3; round++) {
        memcpy(w, v, N * sizeof *v);
        qsort(w, N, sizeof *w, compare);
    }
    int result = w[N / 2] & 0x7f;
    free(w);
    free(v);
    return result;
}
