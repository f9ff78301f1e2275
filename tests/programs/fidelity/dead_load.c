/* Loads whose value is overwritten before anything reads it: `pop`s that
   only move the stack pointer back, as compilers emit around calls, into
   general registers and into the frame pointer. Valgrind drops such a load
   from its code unless the register must be exact at the next memory
   access; Callgrind then counts no read, and neither may the trace. */
__attribute__((noinline)) long dead_pops(long x) {
    long out;
    __asm__ volatile("push %%rbx\n\t"
                     "push %%rbx\n\t"
                     "pop %%rcx\n\t"
                     "pop %%rdx\n\t"
                     "mov %1, %%rcx\n\t"
                     "lea 1(%%rcx), %0\n\t"
                     "xor %%edx, %%edx"
                     : "=r"(out)
                     : "r"(x)
                     : "rcx", "rdx", "memory");
    return out;
}

__attribute__((noinline)) long dead_frame_pointer_pop(long x) {
    long out;
    __asm__ volatile("push %%rbp\n\t"
                     "push %%rbx\n\t"
                     "pop %%rbp\n\t"
                     "mov %%rsp, %%rbp\n\t"
                     "pop %%rbp\n\t"
                     "lea 2(%1), %0"
                     : "=r"(out)
                     : "r"(x)
                     : "memory");
    return out;
}

volatile long result;

int main(void) {
    long sum = 0;
    for (long i = 0; i < 10000; i++)
        sum += dead_pops(i) + dead_frame_pointer_pop(i);
    result = sum;
    return 0;
}
