/* layers/cache/sieve.c -- sieving that stays correct with other writers:
 * the gaps of a sieved page (bytes the application did not write, between
 * and beside the ones it did) are written below only when they were read
 * under a lock that keeps other writers out, as ROMIO's data sieving
 * does (lock the range, read, merge, write, unlock).
 *
 * A flush that would write gaps takes a record lock on ffio's own
 * descriptor over the pages it writes (an open file description lock:
 * the program's own locks on its descriptors are its own business), asks
 * the size below again, and refreshes every gap from below: bytes below
 * the end of the file are read again, bytes past it are zeros.  A page
 * the sieve would read whole (many extents, cache_pg_load) is read under
 * the same lock.  The writes are waited for before the lock goes.
 *
 * Every write-back of a sieved file holds such a lock: a write lock when
 * it fills gaps, a read lock when it writes only the application's bytes
 * (those must not land between another process's read and write of the
 * same range).  A lock another process holds is waited for; but where
 * the program takes record locks on the file itself (ROMIO's data
 * sieving), the lock is only tried, since the program's own lock may be
 * the one in the way: then, and where the file system takes no such
 * locks, the flush writes the bytes the application wrote and nothing
 * else (the extents, or the runs of a page's written map), guarded by
 * the program's own lock.  Writers that take no lock at all (a program
 * without ffio's sieve) are not excluded, as with ROMIO's data sieving.
 * A writer alone never waits, and pages past the end of the file read
 * nothing: appending through the sieve costs the lock, a size and the
 * unlock per flush.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include "cache.h"

/* Is a neighbour of p in the set that the sieve can join (see
 * cache_sieve_span) on side dir (-1, +1)? */
static int joins(struct cpage **set, size_t n, size_t i, int dir)
{
	size_t j = dir < 0 ? i - 1 : i + 1;
	if ((dir < 0 && i == 0) || j >= n)
		return 0;
	return set[j]->pno == set[i]->pno + dir && set[j]->fill && !set[j]->failed;
}

/* The bytes of page set[i] (p->fill) that the flush writes: from its first
 * written byte to its last, and across to a neighbour written whole. */
void cache_sieve_span(const struct cache *c, struct cpage **set, size_t n, size_t i, uint32_t *lo,
		      uint32_t *hi)
{
	const struct cpage *p = set[i];
	*lo = joins(set, n, i, -1) ? 0 : p->ext[0].lo;
	*hi = joins(set, n, i, +1) ? (uint32_t)c->conf.page : p->ext[p->next_ext - 1].hi;
}

/* The first byte at or after at (below hi) whose bit in p's map is want,
 * or hi. */
static uint32_t wmap_find(const struct cpage *p, uint32_t at, uint32_t hi, int want)
{
	while (at < hi) {
		uint64_t w = p->wmap[at >> 6];
		if (!want)
			w = ~w;
		w &= ~(uint64_t)0 << (at & 63);
		if (w) {
			uint32_t b = (at & ~(uint32_t)63) + (uint32_t)__builtin_ctzll(w);
			return b < hi ? b : hi;
		}
		at = (at & ~(uint32_t)63) + 64;
	}
	return hi;
}

/* The next run [*a, *b) of p's bytes within [at, hi) that the application
 * wrote (written 1) or did not (0); 0 when there is none. */
int cache_sieve_run(const struct cpage *p, uint32_t at, uint32_t hi, int written, uint32_t *a, uint32_t *b)
{
	if (p->wmap) {
		*a = wmap_find(p, at, hi, written);
		*b = wmap_find(p, *a, hi, !written);
		return *a < hi;
	}
	/* no map: the extents are what was written */
	uint32_t k = ext_after(p, at); /* the first extent ending after at */
	if (written) {
		if (k == p->next_ext)
			return 0;
		*a = p->ext[k].lo > at ? p->ext[k].lo : at;
		*b = p->ext[k].hi < hi ? p->ext[k].hi : hi;
		return *a < *b;
	}
	if (k < p->next_ext && p->ext[k].lo <= at) /* inside extent k: the gap after it */
		at = p->ext[k++].hi;
	*a = at;
	*b = k < p->next_ext && p->ext[k].lo < hi ? p->ext[k].lo : hi;
	return *a < *b;
}

/* Make the gaps of known page p within [lo, hi) the file's bytes now (the
 * size below is size): read what lies below the end, zero what lies past
 * it. */
static int refresh_gaps(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi, off_t size)
{
	off_t start = pg_start(c, p->pno);
	uint32_t below = start + (off_t)hi <= size ? hi : start + (off_t)lo < size ? (uint32_t)(size - start) : lo;
	uint32_t a, b;
	size_t got = 0;
	int err;

	if (!cache_sieve_run(p, lo, hi, 0, &a, &b))
		return 0; /* no gap: every byte was written */
	if (a < below) {
		if ((err = cache_get_scratch(c)) < 0)
			return err;
		/* from the first gap to the end below: one read */
		struct iovec iov = {c->bufs.scratch + a, below - a};
		if ((err = cache_below_readv(c, &iov, 1, start + a, &got)) < 0)
			return err;
		memset(c->bufs.scratch + a + got, 0, below - a - got);
	}
	uint32_t end = p->zeros ? below : hi; /* past the end: zeros already, or made so */
	for (uint32_t at = lo; at < end && cache_sieve_run(p, at, end, 0, &a, &b); at = b) {
		uint32_t m = b < below ? b : below < a ? a : below;
		if (m > a)
			memcpy(p->data + a, c->bufs.scratch + a, m - a);
		if (b > m)
			memset(p->data + m, 0, b - m);
	}
	if (lo < below)
		p->zeros = 0; /* its gaps hold the file's bytes now */
	return 0;
}

/* Is an unknown dirty page of existing data worth reading so that the
 * sieve writes it in one piece?  Only when its extents lie closer than
 * SIEVE_READ_SPACING apart on average: then one read and one write cost
 * less than a write per extent.  A page with a few long extents (netCDF
 * writes whole windows) is written extent by extent: reading 1 MiB for
 * each one evicted made tiles written into a file four times the cache
 * 0.7x raw (bench/netcdf_tilerec.sh at 600x600x150), 4.1 GB read below
 * for a 216 MB file. */
#define SIEVE_READ_SPACING 8192
static int read_pays(const struct cache *c, const struct cpage *p)
{
	return (size_t)p->next_ext * SIEVE_READ_SPACING >= c->conf.page;
}

/* Would page p write a byte it was not given?  Known: a hull with holes,
 * or one not from edge to edge (it may join a neighbour).  Unknown: past
 * the end (zeros between its extents), or worth reading whole. */
static int wants_gaps(const struct cache *c, const struct cpage *p, off_t below_end)
{
	if (!p->next_ext)
		return 0;
	if (p->known)
		return p->holes || p->next_ext > 1 || p->ext[0].lo > 0 || p->ext[p->next_ext - 1].hi < c->conf.page;
	return pg_start(c, p->pno) >= below_end ? 1 : read_pays(c, p);
}

/* Lock [off, off + len) of the file for writing back (type F_WRLCK: gaps
 * are read and written; F_RDLCK: only written bytes, which must not land
 * inside another process's read-modify-write).  A lock held by another
 * process is waited for, unless the program itself takes record locks on
 * the file: then its own lock may be the one in the way (its flush comes
 * as it releases it), and waiting could deadlock with another process
 * doing the same.  Returns 1 when locked, 0 when not (the caller writes
 * the written bytes alone). */
int cache_sieve_lock(struct cache *c, off_t off, off_t len, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
	int fd = c->base.file->fd;

	if (fd < 0)
		return 0;
	if (ffio_real.fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 1;
	if ((errno != EAGAIN && errno != EACCES) || __atomic_load_n(&c->base.file->posix_locked, __ATOMIC_RELAXED))
		return 0;
	c->stats.sieve_waits++;
	while (ffio_real.fcntl(fd, F_OFD_SETLKW, &fl) < 0)
		if (errno != EINTR)
			return 0;
	return 1;
}

/* Decide which pages of the sorted set are written whole (p->fill),
 * refreshing their gaps under a lock on the set's range; *locked says
 * whether the caller must wait for the writes and call
 * cache_sieve_unlock.  Errors are the pages' own (p->failed) or the
 * first one returned.  errno is kept. */
int cache_sieve_prepare(struct cache *c, struct cpage **set, size_t n, int *locked)
{
	off_t size = 0;
	int first = 0, err, saved = errno, gaps = 0;

	for (size_t i = 0; i < n; i++)
		set[i]->fill = 0;
	if (disk_size(c, &size) < 0)
		size = INT64_MAX;
	for (size_t i = 0; i < n && !gaps; i++)
		gaps = wants_gaps(c, set[i], size);
	off_t lo = pg_start(c, set[0]->pno), hi = pg_start(c, set[n - 1]->pno) + (off_t)c->conf.page;
	*locked = cache_sieve_lock(c, lo, hi - lo, gaps ? F_WRLCK : F_RDLCK);
	errno = saved;
	if (!gaps)
		return 0;
	if (!*locked) {
		c->stats.sieve_unlocked++;
		return 0; /* the written bytes alone */
	}
	c->stats.sieve_locked++;
	c->size.below_known = 0; /* another writer may have grown it */
	if ((err = disk_size(c, &size)) < 0)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		if (!wants_gaps(c, p, size))
			continue;
		int loaded = !p->known && pg_start(c, p->pno) < size;
		if (loaded) { /* worth reading whole (read_pays): now, every gap fresh */
			if ((err = cache_pg_load(c, p)) < 0) {
				if (!first)
					first = err;
				continue; /* its extents alone */
			}
		}
		p->fill = p->known && !loaded ? FILL_REFRESH : FILL;
	}
	/* the gaps of the pages written whole, spans and joins now settled */
	for (size_t i = 0; i < n; i++) {
		struct cpage *p = set[i];
		uint32_t a, b;
		if (p->fill != FILL_REFRESH)
			continue;
		cache_sieve_span(c, set, n, i, &a, &b);
		if ((err = refresh_gaps(c, p, a, b, size)) < 0) {
			p->fill = 0; /* (its neighbours may have joined it: they keep their own bytes) */
			if (!first)
				first = err;
		}
	}
	return first;
}

void cache_sieve_unlock(struct cache *c)
{
	struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	int saved = errno;
	(void)ffio_real.fcntl(c->base.file->fd, F_OFD_SETLK, &fl);
	errno = saved;
}
