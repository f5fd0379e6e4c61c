/* t/bad_buf.h -- buffers the kernel refuses, for the differential tests
 * (t/diff_kernel.c): drawn with rng.h's generator, so a seed gives the same
 * ones on both files and on every machine. */
#ifndef FFIO_TEST_BAD_BUF_H
#define FFIO_TEST_BAD_BUF_H

#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
#include "rng.h"

/* Now and then (1 call in 25) a buffer the kernel refuses (EFAULT): an
 * address no process can map (none below vm.mmap_min_addr, none past user
 * space, none that wraps), for the n bytes of a transfer; writing, also a
 * range that starts just under the end of user space and crosses it (the
 * kernel's access_ok refuses it whole).  A buffer valid at its start and
 * unmapped further on is not drawn: ffio(7), SEMANTICS. */
static inline void *bad_buf(size_t n, int writing)
{
	static const uintptr_t low[] = {0, 8, 4096, UINTPTR_MAX - 15, (uintptr_t)1 << 48};
	const uintptr_t user_end = ((uintptr_t)1 << 47) - 4096;
	if (writing && n > 1 && rnd(4) == 0)
		return (void *)(user_end - n / 2);
	return (void *)low[rnd(sizeof low / sizeof low[0])];
}

/* A call's buffers, made bad (bad_buf) 1 time in 25: the plain buffer, one
 * of the vector's, or the vector itself.  A short description goes to the
 * trace. */
static inline int spoil(void **buf, struct iovec *iov, struct iovec **vec, int k, size_t n, int writing, char *what,
		 size_t len)
{
	what[0] = 0;
	if (rnd(25) != 0)
		return 0;
	int where = (int)rnd((unsigned)k + 1);
	if (where == k) {
		*vec = bad_buf(k * sizeof *iov, 0);
		*buf = bad_buf(n, writing);
		snprintf(what, len, " bad buffer %p, vector %p", *buf, (void *)*vec);
	} else {
		iov[where].iov_base = bad_buf(iov[where].iov_len, writing);
		snprintf(what, len, " bad iov[%d] %p", where, iov[where].iov_base);
	}
	return 1;
}

#endif
