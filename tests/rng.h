/*
 * rng.h - random numbers for the unit tests and the benchmarks: Marsaglia's
 * xorshift64 (shifts 13, 7, 17).  Deterministic, so a failure reproduces
 * from the seed alone; one generator per program, in a header for the
 * same reason as tap.h.  bench/map_bench.c includes it as
 * "../tests/rng.h".
 */
#ifndef GFSP_TESTS_RNG_H
#define GFSP_TESTS_RNG_H

#include <stdint.h>

#define RND_SEED	88172645463325252ull	/* Marsaglia's example seed */

/* weak: one stream for every file of a program of several (mpi_fuzzio) */
__attribute__((weak)) uint64_t rnd_state = RND_SEED;

/* Start over from seed; 0 would stay 0 for ever, so it means RND_SEED. */
static __attribute__((unused)) void
rnd_seed(uint64_t seed)
{
	rnd_state = seed != 0 ? seed : RND_SEED;
}

/* the next 64 random bits */
static __attribute__((unused)) uint64_t
rnd64(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* in [0, n), near enough uniform for tests; 0 if n is 0 (still a draw) */
static __attribute__((unused)) uint64_t
rnd(uint64_t n)
{
	uint64_t x = rnd64();

	return n != 0 ? x % n : 0;
}

#endif /* GFSP_TESTS_RNG_H */
