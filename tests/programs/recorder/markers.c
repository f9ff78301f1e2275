/* Section markers (three of them given bad pointers), recording switched on
   and off, heap events, output and an exit code, for the recorder's
   tests. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <valgrind/callgrind.h>
#include "linegrind.h"

static volatile long sink;

__attribute__((noinline)) void unrecorded(void) {
    for (int i = 0; i < 100000; i++)
        sink += i;
}

/* About 6 MB of stack. */
__attribute__((noinline)) long deep(int n) {
    volatile char page[4096];
    page[0] = (char)n;
    return n == 0 ? 0 : deep(n - 1) + page[0];
}

__attribute__((noinline)) void recorded(void) {
    for (int i = 0; i < 1000; i++)
        sink += i;
}

int main(void) {
    unrecorded();
    CALLGRIND_START_INSTRUMENTATION;
    LINEGRIND_BEGIN("paint");
    char *block = malloc(4000);
    recorded();
    free(block);
    LINEGRIND_END("paint");
    /* Natively nothing; recorded, names that cannot be read: nowhere, and
       a page of a file past its end, which the mapping allows but whose
       reading faults. */
    LINEGRIND_BEGIN((const char *)16);
    LINEGRIND_END((const char *)-1);
    FILE *empty = tmpfile();
    const char *past_end =
        mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(empty), 0);
    LINEGRIND_BEGIN(past_end);
    LINEGRIND_END(past_end);
    /* Faults after those, which Valgrind takes to grow the stack. */
    sink += deep(1500);
    CALLGRIND_STOP_INSTRUMENTATION;
    unrecorded();
    printf("hello from the program\n");
    return 3;
}
