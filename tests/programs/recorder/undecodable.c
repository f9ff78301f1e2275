/* Probes for AVX-512 as programs probe for processor features: runs one
   of its instructions, which Valgrind 3.19 cannot decode, so that under
   Valgrind it raises SIGILL, and the handler jumps back. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf probe;

static void no_instruction(int sig)
{
    (void)sig;
    siglongjmp(probe, 1);
}

int main(void)
{
    volatile int has = 0;
    signal(SIGILL, no_instruction);
    if (sigsetjmp(probe, 1) == 0) {
        /* vpaddd %zmm0, %zmm0, %zmm0 */
        __asm__ volatile(".byte 0x62, 0xf1, 0x7d, 0x48, 0xfe, 0xc0");
        has = 1;
    }
    printf("avx512: %d\n", has);
    return 0;
}
