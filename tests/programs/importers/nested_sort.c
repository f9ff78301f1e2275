/* A sort whose comparison sorts too: the C library's merge sort runs
   inside itself, and its branch over a recursive call of the inner sort
   lands on the return address of the outer sort's call still open, which
   is no return. */
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

/* The smallest of three numbers derived from `key`, by sorting them. */
__attribute__((noinline)) static int smallest(int key) {
    int three[3] = {key % 7, key % 11, key % 13};
    qsort(three, 3, sizeof three[0], by_value);
    return three[0];
}

static int by_smallest(const void *a, const void *b) {
    return smallest(*(const int *)a) - smallest(*(const int *)b);
}

int main(void) {
    static int keys[64];
    for (int i = 0; i < 64; i++)
        keys[i] = (i * 37) % 101;
    qsort(keys, 64, sizeof keys[0], by_smallest);
    return keys[0] & 0x7f;
}
