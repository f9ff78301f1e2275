/*
 * Sorting with a comparison function: libc's qsort over small arrays of
 * random integers, round after round. The data fits L1 and the code is
 * short blocks and a call per comparison, the opposite of the other
 * examples: what it measures is the per-block and per-call work of a
 * simulator, not its cache misses.
 */
#include <stdio.h>
#include <stdlib.h>

#define ELEMENTS 1024
/* Rounds of filling and sorting; benches/compare sets more. */
#ifndef ROUNDS
#define ROUNDS 8
#endif

static unsigned long seed = 12345;

static unsigned long next_random(void)
{
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    return seed >> 33;
}

static int compare(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static int values[ELEMENTS];
    unsigned long sum = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < ELEMENTS; i++)
            values[i] = (int)(next_random() % 1000000);
        qsort(values, ELEMENTS, sizeof values[0], compare);
        for (int i = 0; i < ELEMENTS; i += 64)
            sum += (unsigned long)values[i];
    }
    printf("%lu\n", sum);
    return 0;
}
