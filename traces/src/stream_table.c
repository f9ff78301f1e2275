/*
 * The back-dating paper's example as a program: main calls process for
 * each particle; process calls load_particle, which reads the 8-byte
 * position of a 64-byte particle (a new line each time, four times the
 * size of D1 in all), and lookup, which reads a 512-byte table that stays
 * in cache.
 */
#include <stdio.h>

/* Particles; benches/compare sets more. */
#ifndef PARTICLES
#define PARTICLES 2048
#endif
#define TABLE 64

struct particle {
    double position;
    double unused[7];
};

static struct particle particles[PARTICLES];
static double table[TABLE];

__attribute__((noinline)) static double load_particle(int i)
{
    return particles[i].position;
}

__attribute__((noinline)) static double lookup(int i)
{
    return table[i % TABLE];
}

__attribute__((noinline)) static double process(int i)
{
    return load_particle(i) * lookup(i);
}

int main(void)
{
    for (int i = 0; i < TABLE; i++)
        table[i] = 1.0 / (i + 1);
    for (int i = 0; i < PARTICLES; i++)
        particles[i].position = i;
    double sum = 0.0;
    for (int i = 0; i < PARTICLES; i++)
        sum += process(i);
    printf("sum %.3f\n", sum);
    return 0;
}
