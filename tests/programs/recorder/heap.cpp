// Heap blocks from C and C++ allocation functions, some implemented by
// others (new by malloc, delete by free), for the recorder's tests: each
// must be seen once, with its size.
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <new>
#include <pthread.h>
#include <unistd.h>
#include "linegrind.h"

static int to_release[2], released[2];

// Frees the blocks it is sent, answering each, until it is sent none.
static void *release(void *) {
    void *block;
    while (read(to_release[0], &block, sizeof block) == sizeof block && block) {
        std::free(block);
        write(released[1], &block, sizeof block);
    }
    return nullptr;
}

int main() {
    pipe(to_release);
    pipe(released);
    pthread_t thread;
    pthread_create(&thread, nullptr, release, nullptr);
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
    // A reallocation to nothing frees the block (and returns none).
    void *e = std::malloc(100);
    e = std::realloc(e, 0);
    // Blocks freed by another thread, which the allocator gives back to
    // this one at the same address.
    for (int i = 0; i < 3; i++) {
        void *block = std::malloc(5000);
        write(to_release[1], &block, sizeof block);
        read(released[0], &block, sizeof block);
    }
    // Placement new, called out of line, allocates nothing.
    alignas(long) static char room[64];
    void *(*volatile place)(std::size_t, void *) = &::operator new;
    long *g = new (place(sizeof(long), room)) long(7);
    // The aligned allocations, each with its size; a posix_memalign that
    // fails (an alignment that is no power of two) allocates nothing.
    void *aligned[5] = {memalign(64, 300), aligned_alloc(64, 640), nullptr,
                        valloc(1200), pvalloc(1300)};
    int failed = posix_memalign(&aligned[2], 24, 100);
    int done = posix_memalign(&aligned[2], 64, 900);
    for (void *block : aligned)
        std::free(block);
    LINEGRIND_END("heap");
    void *none = nullptr;
    write(to_release[1], &none, sizeof none);
    pthread_join(thread, nullptr);
    std::printf("done %p %ld %d %d\n", e, *g, failed, done);
    return 0;
}
