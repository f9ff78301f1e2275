// Heap blocks from C and C++ allocation functions, some implemented by
// others (new by malloc, delete by free), for the recorder's tests: each
// must be seen once, with its size.
#include <cstdio>
#include <cstdlib>
#include "linegrind.h"

int main() {
    LINEGRIND_BEGIN("heap");
    int *a = new int[1001];
    long *b = new long;
    void *c = std::calloc(3, 1000);
    void *d = std::malloc(2002);
    d = std::realloc(d, 50005);
    delete b;
    delete[] a;
    std::free(c);
    std::free(d);
    LINEGRIND_END("heap");
    std::printf("done\n");
    return 0;
}
