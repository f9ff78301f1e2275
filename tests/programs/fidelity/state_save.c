/* Saves the x87 and SSE state (FXSAVE, 512 bytes) 4,096 times, each into
   lines of its own: Valgrind writes its first 160 bytes by a helper, whose
   access Callgrind clamps to its smallest line size, and the XMM registers
   by plain stores. Every other save starts 16 bytes into a line, so that
   the clamped access crosses into the next line. */
#include <stdlib.h>

enum { SAVES = 4096, STRIDE = 512 };

int main(void) {
    char *area = aligned_alloc(4096, (size_t)SAVES * STRIDE + 64);
    if (area == NULL)
        return 1;
    for (int i = 0; i < SAVES; i++) {
        char *at = area + (size_t)i * STRIDE + (size_t)(i & 1) * 16;
        __asm__ volatile("fxsave (%0)" : : "r"(at) : "memory");
    }
    return area[100] & 1;
}
