/* layers/cache/below.c -- reads from the layer below into the cache: a
 * vector read that goes on after a short one, a page made known around its
 * dirty extents, absent pages loaded in one request, a range of a page
 * fetched alone.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "cache.h"

/* Read up to the total of iov at off; *got is what arrived (short at end
 * of file).  A short read goes on with the rest (a layer below may return
 * one before the end), except where it is the end: with O_DIRECT (one
 * call), and where it reached the file's size below as the cache knows it
 * (asked just before a load): there the next request would only find
 * nothing, and on a distributed file system it costs a round trip (a page
 * of a 512000-byte file loaded in two reads, the second of 0 bytes: five
 * requests a rank where raw ROMIO made three, bench/mpiio_noncontig over
 * the delay layer).  The file grown meanwhile by another process is seen
 * as a read racing with that growth would see it. */
int cache_below_readv(struct cache *c, struct iovec *iov, int cnt, off_t off, size_t *got)
{
	size_t total = ffio_iov_len(iov, cnt), done = 0;
	ssize_t r;

	c->stats.below_reads++;
	for (;;) {
		do
			r = cnt == 1 ? ffio_below_pread(&c->base, iov->iov_base, iov->iov_len, off)
				     : ffio_below_preadv(&c->base, iov, cnt, off);
		while (r == -EINTR);
		if (r < 0)
			return (int)r;
		done += (size_t)r;
		off += r;
		if (r == 0 || done == total || c->conf.direct || (c->size.below_known && off >= c->size.below))
			break;
		/* short but not at end: go on with the rest */
		size_t skip = (size_t)r;
		while (cnt > 0 && skip >= iov->iov_len) {
			skip -= iov->iov_len;
			iov++;
			cnt--;
		}
		iov->iov_base = (char *)iov->iov_base + skip;
		iov->iov_len -= skip;
	}
	c->stats.below_rbytes += done;
	*got = done;
	return 0;
}

/* What of n bytes at start lies below the file's size (known: asked
 * now, or kept since the last flush point), at least one byte: a load is
 * not asked for bytes past it.  A distributed file system may move what
 * is asked for, not what is there (the delay layer charges so: the page
 * of a 512000-byte file cost 1 MiB at its bandwidth, bench/mpiio_noncontig
 * over it read 0.67 times as fast as raw), and the bytes past the size
 * are zeros to the cache either way, as a read past the size it knows
 * returns none (cache_pread).  Under O_DIRECT, whole blocks. */
static size_t below_part(const struct cache *c, off_t start, size_t n, off_t size)
{
	off_t part = size - start;
	if (c->conf.direct) /* whole blocks */
		part = (part + BLOCK - 1) / BLOCK * BLOCK;
	return part < (off_t)n ? (size_t)part : n;
}

/* Make p known: read its bytes from below around its dirty extents. */
int cache_pg_load(struct cache *c, struct cpage *p)
{
	off_t start = pg_start(c, p->pno), size;
	size_t got = 0;
	int err;

	if (p->known)
		return 0;
	if ((err = cache_pg_wait(c, p)) < 0 || (err = disk_size(c, &size)) < 0)
		return err;
	if (p->known) /* a read-ahead of it arrived */
		return 0;
	if (start < size) {
		if (!c->conf.can_read)
			return -EBADF;
		if (p->next_ext && (err = cache_get_scratch(c)) < 0)
			return err;
		char *dst = p->next_ext ? c->bufs.scratch : p->data;
		struct iovec iov = {dst, below_part(c, start, c->conf.page, size)};
		cache_kernel_readahead_arm(c);
		if ((err = cache_below_readv(c, &iov, 1, start, &got)) < 0)
			return err;
		if (start + (off_t)got > c->size.below)
			c->size.below = start + (off_t)got;
		memset(dst + got, 0, c->conf.page - got);
		if (p->next_ext) { /* copy the bytes around the dirty extents */
			uint32_t at = 0;
			for (uint32_t i = 0; i < p->next_ext; i++) {
				memcpy(p->data + at, dst + at, p->ext[i].lo - at);
				at = p->ext[i].hi;
			}
			memcpy(p->data + at, dst + at, c->conf.page - at);
		}
	} else {
		uint32_t at = 0;
		for (uint32_t i = 0; i < p->next_ext; i++) {
			memset(p->data + at, 0, p->ext[i].lo - at);
			at = p->ext[i].hi;
		}
		memset(p->data + at, 0, c->conf.page - at);
		p->zeros = !p->wmap; /* (a map's hull holds bytes not zeroed) */
	}
	p->known = 1;
	p->nvalid = 0;
	if (is_sieve(c) && p->next_ext > 1 && sieve_hull_due(c, p))
		(void)cache_hull_map(c, p); /* no memory: its extents stay exact */
	return 0;
}

/* Fetch [lo, hi) of page p from below into its buffer, the file's size
 * below then size: bytes past it are zeros without a request. */
static int load_gap(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi, off_t size)
{
	off_t start = pg_start(c, p->pno);
	uint32_t end = start + (off_t)hi <= size ? hi : start + (off_t)lo < size ? (uint32_t)(size - start) : lo;
	size_t got = 0;
	int err;

	if (end > lo) {
		struct iovec iov = {p->data + lo, end - lo};
		if ((err = cache_below_readv(c, &iov, 1, start + lo, &got)) < 0)
			return err;
		if (start + lo + (off_t)got > c->size.below)
			c->size.below = start + lo + (off_t)got;
	}
	memset(p->data + lo + got, 0, hi - lo - got);
	return 0;
}

/* Make p known.  A page with valid ranges and no dirty bytes, of a file
 * the kernel serves from memory (not from the device: cache_note_load),
 * fetches only the gaps between its ranges, a request each, not the whole
 * page again: there a request costs a system call and the bytes fetched
 * again cost their copy.  Any other page is loaded whole (cache_pg_load):
 * from the device a request costs more than the bytes.  The netCDF tile +
 * record program reads its tiles side by side: the first tile's runs
 * leave a few ranges in each page, and the next tile's runs go on from
 * them (cache_run_load). */
int cache_pg_fill(struct cache *c, struct cpage *p)
{
	struct cext have[MAX_VALID];
	off_t size;
	int n, err;

	if (p->next_ext || !p->nvalid || c->ra.from_device)
		return cache_pg_load(c, p);

	if ((err = cache_pg_wait(c, p)) < 0 || (err = disk_size(c, &size)) < 0)
		return err;
	if (p->known)
		return 0;
	if (!c->conf.can_read)
		return -EBADF;
	cache_kernel_readahead_arm(c);
	n = p->nvalid;
	memcpy(have, p->valid, (size_t)n * sizeof *have);
	uint32_t at = 0;
	for (int i = 0; i <= n; i++) {
		uint32_t end = i < n ? have[i].lo : (uint32_t)c->conf.page;
		if (end > at && (err = load_gap(c, p, at, end, size)) < 0)
			return err;
		if (i < n)
			at = have[i].hi;
	}
	p->known = 1;
	p->nvalid = 0;
	return 0;
}

/* Read the absent pages pnos[0..n) (ascending) into new pages; adjacent
 * ones in one request.  Stops quietly when no page can be had. */
int cache_load_missing(struct cache *c, const int64_t *pnos, int n, int ra)
{
	struct cpage *pg[LOAD_BATCH];
	struct iovec iov[LOAD_BATCH];
	int i = 0, err = 0;
	off_t size;

	if ((err = disk_size(c, &size)) < 0)
		return err;
	while (i < n && err == 0) {
		int k = 0, starved = 0;
		while (i + k < n && k < LOAD_BATCH && (k == 0 || pnos[i + k] == pnos[i + k - 1] + 1)) {
			if (cache_pg_new(c, pnos[i + k], &pg[k]) < 0) {
				starved = 1;
				break;
			}
			pg[k]->pin = 1;
			iov[k] = (struct iovec){pg[k]->data, c->conf.page};
			k++;
		}
		if (k == 0)
			break;
		off_t start = pg_start(c, pnos[i]);
		size_t got = 0;
		if (start < size && !c->conf.can_read) {
			err = -EBADF;
		} else if (start < size) {
			size_t want = below_part(c, start, (size_t)k * c->conf.page, size);
			int cnt = (int)((want + c->conf.page - 1) / c->conf.page);
			iov[cnt - 1].iov_len = want - (size_t)(cnt - 1) * c->conf.page;
			cache_kernel_readahead_arm(c);
			err = cache_below_readv(c, iov, cnt, start, &got);
		}
		for (int j = 0; j < k; j++) {
			struct cpage *p = pg[j];
			size_t at = (size_t)j * c->conf.page, have = got > at ? got - at : 0;
			p->pin = 0;
			if (err < 0) {
				cache_pg_free(c, p);
				continue;
			}
			if (have < c->conf.page)
				memset(p->data + have, 0, c->conf.page - have);
			p->known = 1;
			p->ra = ra;
		}
		if (err == 0 && start + (off_t)got > c->size.below)
			c->size.below = start + (off_t)got;
		i += k;
		if (starved)
			break;
	}
	return err;
}

/* Fetch just [lo, hi) of page p (no dirty bytes) from below, now. */
int cache_pg_load_range(struct cache *c, struct cpage *p, uint32_t lo, uint32_t hi)
{
	struct iovec iov = {p->data + lo, hi - lo};
	size_t got = 0;
	int err;

	if (!c->conf.can_read)
		return -EBADF;
	cache_kernel_readahead_arm(c);
	if ((err = cache_pg_wait(c, p)) < 0 ||
	    (err = cache_below_readv(c, &iov, 1, pg_start(c, p->pno) + lo, &got)) < 0)
		return err;
	memset(p->data + lo + got, 0, hi - lo - got);
	if (cache_valid_add(p, lo, hi) < 0) { /* no room: this range alone */
		p->nvalid = 0;
		cache_valid_add(p, lo, hi);
	}
	return 0;
}
