/* setjmp/longjmp out of several frames, many times. */
#include <setjmp.h>

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) void leaf(int n) {
    for (int i = 0; i < 200; i++)
        sink += i * n;
    longjmp(env, n + 1);
}
__attribute__((noinline)) void level3(int n) { sink += n; leaf(n); }
__attribute__((noinline)) void level2(int n) { sink += n; level3(n); }
__attribute__((noinline)) void level1(int n) { sink += n; level2(n); }

int main(void) {
    int total = 0;
    for (int i = 0; i < 2000; i++) {
        int got = setjmp(env);
        if (got == 0)
            level1(i);
        total += got;
    }
    return total & 0x7f;
}
