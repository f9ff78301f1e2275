/* Its source file named with a line break, as a #line directive can name
 * it: the recording's symbols must still make a trace that simulates. */
#line 1 "odd\nname.c"
static int __attribute__((noinline)) work(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += i;
    return sum;
}

int main(void)
{
    return work(100) == 4950 ? 0 : 1;
}
