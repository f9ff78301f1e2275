/* Two static inline functions of one name, one here and one in
   inline_other.c, each inlined into its file's caller: two functions. */
static inline __attribute__((always_inline)) int mix(int x) {
    return x * 3 + 1; /* MARK mix-here */
}

__attribute__((noinline)) int from_here(int x) { return mix(x); }

int from_other(int x);

int main(int argc, char **argv) {
    (void)argv;
    return from_here(argc) + from_other(argc);
}
