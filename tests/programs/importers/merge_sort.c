/* A recursive merge sort: the branch that skips the first recursive call
   lands on that call's return address, which is no return. */
static int scratch[2048];

__attribute__((noinline)) void merge_sort(int *a, long n) {
    long half = n / 2;
    if (half > 1)
        merge_sort(a, half);
    if (n - half > 1)
        merge_sort(a + half, n - half);
    long i = 0, j = half, k = 0;
    while (i < half && j < n)
        scratch[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < half)
        scratch[k++] = a[i++];
    while (j < n)
        scratch[k++] = a[j++];
    for (k = 0; k < n; k++)
        a[k] = scratch[k];
}

int main(void) {
    static int a[2048];
    for (int i = 0; i < 2048; i++)
        a[i] = (i * 7919) % 2048;
    merge_sort(a, 2048);
    return a[100] & 0x7f;
}
