/*
 * The Mandelbrot set's escape times over a grid: floating-point work in
 * registers, a loop of 17 instructions over two I1 lines, one store per
 * point. It hardly misses, the opposite of the other examples: what it
 * measures is a simulator's cost per block and instruction when the
 * caches are not the story.
 */
#include <stdio.h>

#define WIDTH 400
#define MAX_ITERATIONS 200
/* Rows of the grid; benches/compare sets more. */
#ifndef ROWS
#define ROWS 48
#endif

static unsigned char escape[ROWS][WIDTH];

/* Iterations until the orbit of c = (x0, y0) leaves the circle of radius
 * 2, at most MAX_ITERATIONS. */
__attribute__((noinline)) static int escape_time(double x0, double y0)
{
    double x = 0.0, y = 0.0;
    int i = 0;
    while (x * x + y * y < 4.0 && i < MAX_ITERATIONS) {
        double t = x * x - y * y + x0;
        y = 2.0 * x * y + y0;
        x = t;
        i++;
    }
    return i;
}

int main(void)
{
    long total = 0;
    for (int row = 0; row < ROWS; row++) {
        double y0 = 3.0 * row / ROWS - 1.5;
        for (int column = 0; column < WIDTH; column++) {
            int time = escape_time(3.5 * column / WIDTH - 2.5, y0);
            escape[row][column] = (unsigned char)time;
            total += time;
        }
    }
    printf("total %ld\n", total);
    return 0;
}
