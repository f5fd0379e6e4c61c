/* t/adio_pattern.h -- the bytes the MPI-IO tests write: every byte of a
 * test file is a function of its offset (never 0), so a checker needs only
 * the file's expected size to verify it byte for byte, and a missing write
 * (a hole, 0) or a stale write-back is always seen. */
#ifndef ADIO_PATTERN_H
#define ADIO_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned char adio_byte(uint64_t off)
{
	return (unsigned char)(1 + (off * 31 + (off >> 8) * 7 + (off >> 16) * 3) % 255);
}

static inline void adio_fill(unsigned char *buf, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = adio_byte(off + i);
}

/* Index of the first byte of buf that differs from the pattern, or -1. */
static inline long adio_diff(const unsigned char *buf, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != adio_byte(off + i))
			return (long)i;
	return -1;
}

#endif
