/*
 * A HYDRO-like sweep (the back-dating paper's example, reduced). The
 * conservative variables of a 2D grid are stored variable-major,
 * uold[v][y][x]. The sweep along y gathers SLICES columns at a time into
 * contiguous slices, computes fluxes on them, and scatters the update
 * back: the gather is a transposition that, with the slice loop outside
 * the row loop, uses 8 bytes of each 64-byte line it loads before D1
 * evicts it. The sweep along x reads rows and uses whole lines.
 */
#include <stdio.h>

#define NX 192
#define NY 192
#define NVAR 4
#define SLICES 8
/* Sweeps; benches/compare sets more. */
#ifndef STEPS
#define STEPS 3
#endif

static double uold[NVAR][NY][NX];
static double u[NVAR][SLICES][NY];
static double flux[NVAR][SLICES][NY];

__attribute__((noinline)) static void init_grid(void)
{
    for (int v = 0; v < NVAR; v++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++)
                uold[v][y][x] = 1.0 + v + 0.001 * (x + NX * y);
}

/* Columns rowcol..rowcol+SLICES-1 into slices: a strided gather. */
__attribute__((noinline)) static void gather_columns(int rowcol)
{
    for (int s = 0; s < SLICES; s++)
        for (int y = 0; y < NY; y++)
            for (int v = 0; v < NVAR; v++)
                u[v][s][y] = uold[v][y][rowcol + s];
}

/* Rows rowcol..rowcol+SLICES-1 into slices: contiguous. */
__attribute__((noinline)) static void gather_rows(int rowcol)
{
    for (int s = 0; s < SLICES; s++)
        for (int v = 0; v < NVAR; v++)
            for (int x = 0; x < NX; x++)
                u[v][s][x] = uold[v][rowcol + s][x];
}

__attribute__((noinline)) static void compute_fluxes(int n)
{
    for (int v = 0; v < NVAR; v++)
        for (int s = 0; s < SLICES; s++) {
            flux[v][s][0] = 0.0;
            flux[v][s][n - 1] = 0.0;
            for (int i = 1; i < n - 1; i++)
                flux[v][s][i] = 0.5 * (u[v][s][i + 1] - u[v][s][i - 1]);
        }
}

__attribute__((noinline)) static void update_columns(int rowcol, double dt)
{
    for (int s = 0; s < SLICES; s++)
        for (int y = 0; y < NY; y++)
            for (int v = 0; v < NVAR; v++)
                uold[v][y][rowcol + s] -= dt * flux[v][s][y];
}

__attribute__((noinline)) static void update_rows(int rowcol, double dt)
{
    for (int s = 0; s < SLICES; s++)
        for (int v = 0; v < NVAR; v++)
            for (int x = 0; x < NX; x++)
                uold[v][rowcol + s][x] -= dt * flux[v][s][x];
}

__attribute__((noinline)) static void sweep_x(double dt)
{
    for (int rowcol = 0; rowcol < NY; rowcol += SLICES) {
        gather_rows(rowcol);
        compute_fluxes(NX);
        update_rows(rowcol, dt);
    }
}

__attribute__((noinline)) static void sweep_y(double dt)
{
    for (int rowcol = 0; rowcol < NX; rowcol += SLICES) {
        gather_columns(rowcol);
        compute_fluxes(NY);
        update_columns(rowcol, dt);
    }
}

int main(void)
{
    init_grid();
    for (int step = 0; step < STEPS; step++) {
        sweep_x(0.01);
        sweep_y(0.01);
    }
    double sum = 0.0;
    for (int y = 0; y < NY; y++)
        sum += uold[0][y][y];
    printf("checksum %.6f\n", sum);
    return 0;
}
