/* Coroutines switched from inside a signal handler, as a preemptive
   scheduler switches on its timer signal, for the recorder's tests. Each
   runs on its half of one array, the second half above the first: a
   handler switched away from is left at the first block above it, and its
   sigreturn comes when it is switched back to. Prints how many times the
   handler called work. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#define ROUNDS 50

static volatile long sink;
static volatile int running, handler_calls;
static ucontext_t main_context, contexts[2];
static char stacks[2][64 * 1024];

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++)
        sink += i;
}

static void on_signal(int sig) {
    (void)sig;
    handler_calls++;
    work(3);
    int me = running;
    running = !me;
    swapcontext(&contexts[me], &contexts[!me]);
    handler_calls++;
    work(2);
}

static void co(void) {
    for (int i = 0; i < ROUNDS; i++) {
        work(5);
        raise(SIGUSR1);
    }
    swapcontext(&contexts[running], &main_context);
}

int main(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_NODEFER;
    sigaction(SIGUSR1, &action, 0);
    for (int i = 0; i < 2; i++) {
        getcontext(&contexts[i]);
        contexts[i].uc_stack.ss_sp = stacks[i];
        contexts[i].uc_stack.ss_size = sizeof stacks[i];
        contexts[i].uc_link = 0;
        makecontext(&contexts[i], co, 0);
    }
    swapcontext(&main_context, &contexts[0]);
    printf("%d\n", handler_calls);
    return 0;
}
