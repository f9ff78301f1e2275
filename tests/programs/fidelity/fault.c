/* A handler that mends faults: pages start read-only, each first write to
   one faults, and the handler makes the page writable and returns, so the
   write runs again (as garbage collectors' write barriers do). */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

enum { PAGES = 256, ROUNDS = 3 };

static char *region;
static long page_size;
static volatile long mended;

static void on_fault(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)context;
    uintptr_t page = (uintptr_t)info->si_addr & ~(uintptr_t)(page_size - 1);
    mprotect((void *)page, page_size, PROT_READ | PROT_WRITE);
    mended++;
}

/* Each iteration reads a byte and then writes one of the same page: the
   write faults once per page and round, in the middle of the loop's block
   and as its last access. */
__attribute__((noinline)) long touch(long stride) {
    long sum = 0;
    for (long at = 0; at < PAGES * page_size; at += stride) {
        sum += region[at + 7];
        region[at] = (char)at;
        sum ^= sum << 1;
    }
    return sum;
}

/* The same with a second write after the one that faults, which the
   faulting run does not make. */
__attribute__((noinline)) long touch_twice(long stride) {
    long sum = 0;
    for (long at = 0; at < PAGES * page_size; at += stride) {
        sum += region[at + 7];
        region[at] = (char)at;
        region[at + 1] = (char)sum;
        sum ^= sum << 1;
    }
    return sum;
}

int main(void) {
    page_size = sysconf(_SC_PAGESIZE);
    region = mmap(0, PAGES * page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction action = {0};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, 0);
    long total = 0;
    for (int round = 0; round < ROUNDS; round++) {
        total += touch(64);
        mprotect(region, PAGES * page_size, PROT_READ);
        total += touch_twice(128);
        mprotect(region, PAGES * page_size, PROT_READ);
    }
    /* Every byte read is zero, so the sums are: a program that resumed
       with stale registers adds other values and exits with 1. */
    return total == 0 && mended == ROUNDS * 2 * PAGES ? 0 : 1;
}
