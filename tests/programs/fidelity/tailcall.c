/* Tail calls, compiled with -O2: `dispatch` ends in a jump to `step`. */
static volatile long sink;

__attribute__((noinline)) long step(long x) {
    for (int i = 0; i < 100; i++)
        sink += x ^ i;
    return sink;
}

__attribute__((noinline)) long dispatch(long x) {
    sink += x;
    return step(x * 3);  /* a tail call at -O2 */
}

int main(void) {
    long total = 0;
    for (long i = 0; i < 5000; i++)
        total += dispatch(i);
    return (int)(total & 0x7f);
}
