/* Threads created and joined in rounds: Valgrind gives each round's threads
 * the ids the previous round's had. Prints how many threads ran. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 10
#define THREADS 3

static volatile long sink;

__attribute__((noinline)) long work(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i * i;
    return s;
}

static void *worker(void *arg) {
    sink += work((long)arg);
    return 0;
}

int main(void) {
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&threads[t], 0, worker, (void *)1000L);
        for (int t = 0; t < THREADS; t++)
            pthread_join(threads[t], 0);
    }
    printf("%d\n", ROUNDS * THREADS);
    return 0;
}
