/* The other `mix` of inline_twice.c. */
static inline __attribute__((always_inline)) int mix(int x) {
    return x * x + 7; /* MARK mix-other */
}

__attribute__((noinline)) int from_other(int x) { return mix(x); }
