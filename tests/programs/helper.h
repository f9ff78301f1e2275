/* Always inlined into its caller, so its code sits in another function but
   keeps this file's line numbers. */
static inline __attribute__((always_inline)) int helper(int x) {
    return x * x + 1; /* MARK helper-body */
}
