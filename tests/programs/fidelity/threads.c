/* Two threads, each summing its own array. */
#include <pthread.h>

#define N 20000
static int data[2][N];

__attribute__((noinline)) long sum_array(const int *v, int n) {
    long s = 0;
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < n; i++)
            s += v[i] * (round + 1);
    return s;
}

static void *worker(void *arg) {
    int *v = arg;
    for (int i = 0; i < N; i++)
        v[i] = i;
    return (void *)sum_array(v, N);
}

int main(void) {
    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&threads[t], 0, worker, data[t]);
    long total = 0;
    for (int t = 0; t < 2; t++) {
        void *result;
        pthread_join(threads[t], &result);
        total += (long)result;
    }
    return (int)(total & 0x7f);
}
