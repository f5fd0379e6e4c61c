/* bench/bench_util.h -- what every benchmark program needs: a monotonic
 * clock in seconds, the median of a set of timings, and sizes read from
 * the command line.  Plain C, no ffio:
 * the programs that measure ffio through LD_PRELOAD include it too. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (v is sorted in place). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A size: a number with an optional k, m or g (powers of 1024), > 0 and
 * at most SSIZE_MAX, in *out; -1 for anything else. */
static inline int bench_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v == 0 || v > (unsigned long long)SSIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

#endif
