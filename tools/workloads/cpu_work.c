/* CPU work for gperftools' libprofiler to sample (tools/make_gperftools_fixture.py).
 *
 *   cpu_work mixed N    three call paths into one leaf, so no caller is common to nearly
 *                       every sample (pprof's signal-frame heuristic keeps them all)
 *   cpu_work hot N      one call path, so pprof cuts the leaf's caller and the next frame
 *                       as "signal frames" (as it does for any such libprofiler file)
 *
 * Frame pointers and noinline keep the stacks as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) double leaf(double x, long n) {
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.5 / (x + 1.0);
    return x;
}

__attribute__((noinline)) double middle(double x, long n) {
    return leaf(x, n) + leaf(x + 1.0, n / 2);
}

__attribute__((noinline)) double other(double x, long n) { return leaf(x, n / 3); }

__attribute__((noinline)) double recurse(double x, long n, int depth) {
    return depth == 0 ? middle(x, n) : recurse(x + 1.0, n, depth - 1) * 0.5;
}

int main(int argc, char **argv) {
    int hot = argc > 1 && strcmp(argv[1], "hot") == 0;
    long n = argc > 2 ? atol(argv[2]) : 20000000;
    double s = 0;
    for (int r = 0; r < 4; r++) {
        if (hot) {
            s += leaf(s, n * 2);
        } else {
            s += middle(s, n);
            s += other(s, n);
            s += recurse(s, n / 4, 6);
        }
    }
    printf("%f\n", s);
    return 0;
}
