/* t/rng.h -- the tests' seeded generator (splitmix64): a seed gives the
 * same sequence on every machine, so a failing seed can be run again.  rs
 * is its state: set it to the seed (or anything derived from it). */
#ifndef FFIO_TEST_RNG_H
#define FFIO_TEST_RNG_H

#include <stdint.h>

#ifdef RNG_SHARED
extern uint64_t rs; /* defined by one file of the program */
#else
static uint64_t rs;
#endif

static inline uint64_t rnd64(void)
{
	uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* In [0, n), or 0 when n <= 0. */
static inline long long rnd(long long n)
{
	return n > 0 ? (long long)(rnd64() % (uint64_t)n) : 0;
}

#endif
