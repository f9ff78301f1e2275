/* Saves the x87 and SSE state (FXSAVE, 512 bytes) 4,096 times, each into
   lines of its own: Valgrind writes its first 160 bytes by a helper, whose
   access Callgrind clamps to its smallest line size, and the XMM registers
   by plain stores. Every other save starts 16 bytes into a line, so that
   the clamped access crosses into the next line. Then saves and restores
   the state by XSAVE and XRSTOR 200 times with a mask of components known
   only as they run: Valgrind guards each component's helper by the mask,
   and Callgrind counts every one of them whatever the mask says. */
#include <stdlib.h>
#include <string.h>

enum { SAVES = 4096, STRIDE = 512, XSAVES = 200 };

static volatile unsigned components = 0xee;

int main(void) {
    char *area = aligned_alloc(4096, (size_t)SAVES * STRIDE + 64);
    char *xarea = aligned_alloc(64, 4096);
    if (area == NULL || xarea == NULL)
        return 1;
    for (int i = 0; i < SAVES; i++) {
        char *at = area + (size_t)i * STRIDE + (size_t)(i & 1) * 16;
        __asm__ volatile("fxsave (%0)" : : "r"(at) : "memory");
    }
    memset(xarea, 0, 4096);
    for (int i = 0; i < XSAVES; i++) {
        unsigned mask = components;
        __asm__ volatile("xsave (%0)\n\txrstor (%0)"
                         :
                         : "r"(xarea), "a"(mask), "d"(0)
                         : "memory");
    }
    return (area[100] ^ xarea[520]) & 1;
}
