/* A coroutine switched to and from by swapcontext, on a stack in main's
   frame, for the recorder's tests: the switch returns into another function
   than the one that called it. */
#include <ucontext.h>

static volatile long sink;
static ucontext_t main_context, co_context;

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++)
        sink += i;
}

static void co(void) {
    for (;;) {
        work(10);
        swapcontext(&co_context, &main_context);
    }
}

int main(void) {
    char stack[64 * 1024];
    getcontext(&co_context);
    co_context.uc_stack.ss_sp = stack;
    co_context.uc_stack.ss_size = sizeof stack;
    co_context.uc_link = 0;
    makecontext(&co_context, co, 0);
    for (int i = 0; i < 100; i++)
        swapcontext(&main_context, &co_context);
    work(1000);
    return 0;
}
