/* Reads and writes scattered over 4 MiB, enough to fill the recorder's
   buffers many times over, then says it finished. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    unsigned n = 1u << 20, x = 1, sum = 0;
    unsigned *table = calloc(n, sizeof *table);
    for (int i = 0; i < 1000000; i++) {
        x = x * 1103515245u + 12345u;
        sum += table[x % n];
        table[(x >> 3) % n] = sum;
    }
    printf("finished %u\n", sum & 1);
    free(table);
    return 0;
}
