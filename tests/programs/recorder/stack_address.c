/* Prints where its stack is, which moves with the size of everything the
   program starts with: its arguments, its environment and its auxv. */
#include <stdio.h>

int main(void) {
    int local = 0;
    printf("%p\n", (void *)&local);
    return local;
}
