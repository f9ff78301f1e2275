/* The other `helper` of unlisted_here.c. */
__attribute__((noinline)) static int helper(int x) { /* MARK helper-other */
    int sum = 0;
    for (int i = 0; i < x; i++)
        sum += i;
    return sum;
}

int other(int x) { return helper(x) + 1; }
