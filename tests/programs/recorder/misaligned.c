/* An SSE load that is not aligned, which VEX checks with a side exit that
   raises SIGSEGV, three times, each left by siglongjmp from the handler:
   the store before it ran, the load and the return did not. */
#include <setjmp.h>
#include <signal.h>

static sigjmp_buf back;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

__attribute__((noinline)) void misaligned(char *p)
{
    __asm__ volatile("movq $1, (%0)\n\tmovdqa 1(%0), %%xmm0"
                     :
                     : "r"(p)
                     : "xmm0", "memory");
}

int main(void)
{
    static char buffer[64] __attribute__((aligned(16)));
    volatile int faults = 0;
    signal(SIGSEGV, on_segv);
    for (volatile int i = 0; i < 3; i++)
        if (sigsetjmp(back, 1) == 0)
            misaligned(buffer);
        else
            faults++;
    return faults == 3 ? 0 : 1;
}
