/* Recursion: direct (fib) and mutual (is_even/is_odd). */
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) int is_odd(unsigned n);
__attribute__((noinline)) int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void) {
    long sum = 0;
    for (int i = 0; i < 30; i++)
        sum += fib(17) + is_even(1000 + i);
    return (int)(sum & 0x7f);
}
