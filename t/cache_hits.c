/* t/cache_hits.c -- the hit path (ffio_layer_ops.read_hit and write_hit,
 * the cache's cache_read_hit and cache_write_hit, the inline gates of
 * ffio-internal.h (ffio_ofd_read_hit, _write_hit, _seek_hit) and the
 * wrappers that try them first) changes nothing a program can see, and is
 * taken.
 *
 * 1. Differential, with the kernel as the oracle: scripted scenarios aimed
 *    at each boundary of the hit conditions, and a seeded random mix, are
 *    applied call by call to a managed file (ffopen, over a matrix of cache
 *    specs; the calls alternate between the ff* API and the POSIX wrappers)
 *    and to an unmanaged twin.  Every return value, errno, position and
 *    byte read must agree, and so must both files after close.
 *    A probe of the cache tells the calls that took the hit path.
 * 2. White box: the layer's write_hit and read_hit on the tail page return
 *    n and leave the cache as the full path leaves a twin cache fed the
 *    same calls, or return 0 with nothing changed, for each refusal (and
 *    so do the inline gates); ffgetstats counts the calls made.
 * 3. With a second thread alive (__libc_single_threaded false) the full
 *    path is taken, with the same results.
 *
 * Usage: cache_hits [SEED] */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "cache.h"
#include "cache_of.h"
#include "kernel_view.h"
#include "rng.h"
#include "tap.h"

static const struct spec { const char *text; size_t page; int pages; } specs[] = {
	{"cache:4k:4:1", 4096, 4},          {"cache.sieve:4k:4:1", 4096, 4},
	{"cache:64k:8:2", 65536, 8},        {"cache.sieve:64k:8:2", 65536, 8},
	{"cache.sieve:1m:16:2", 1 << 20, 16}, {"cache.wt:4k:4:1", 4096, 4},
};
#define NSPECS (int)(sizeof specs / sizeof specs[0])
#define MAXREC 8300 /* the largest record drawn */
/* The largest call: a record, or the white box's; in whole blocks, with
 * one more for the O_DIRECT scenario's skewed buffers. */
#define BUFLEN (((HIT_MAX + 1 > MAXREC ? HIT_MAX + 1 : MAXREC) + 4095) / 4096 * 4096 + 4096)

static char dir[PATH_MAX / 2], pm[PATH_MAX], pk[PATH_MAX];
static const struct spec *sp;
static int M[2] = {-1, -1}, K[2] = {-1, -1}; /* managed and twin descriptors, by slot */
static uint64_t seed0; /* the seed given */
static long ncalls, nhits, hits_by[2]; /* hits in a run; in all, by the POSIX wrappers and ff* */
static int threaded; /* part 3: a second thread is alive */
static char bad[600], cur[120]; /* the first difference; the call being made */
static _Alignas(4096) unsigned char wb[BUFLEN], rb[2][BUFLEN]; /* blocks, for O_DIRECT */
static size_t skew; /* call's buffers start this far into them */

/* The results of the call being made; the first difference is kept. */
static void agree(const char *what, long long a, int ea, long long b, int eb)
{
	if (bad[0] || (a == b && (a >= 0 || ea == eb)))
		return;
	snprintf(bad, sizeof bad, "call %ld (%s): %s: ffio %lld %s, kernel %lld %s", ncalls, cur, what, a,
		 a < 0 ? strerrorname_np(ea) : "", b, b < 0 ? strerrorname_np(eb) : "");
}

/* ---- the probe: did a call take the hit path? ---------------------------
 * The full path finds its pages with pg_find, which remembers the page in
 * pages.last (a look-up cache, nothing else), or takes new ones (counted
 * as misses, or evicting others, or as new pages); a hit does neither.
 * Before a call pages.last is cleared; a call of n bytes that returned n,
 * left pages.last clear, the LRU tail as it was and those counts as they
 * were took the hit path.  (A read hit's read-ahead may look pages up or
 * read: reads are undercounted.  Write-through writes and calls of a page
 * or more go around the cache: not counted.) */
static struct cache *cm;
static struct cpage *probe_tail;
static long probe_pno;
static uint64_t probe_events;

static uint64_t events(const struct cache *c)
{
	const struct cache_stats *t = &c->stats;
	return (uint64_t)c->pages.npages + t->misses + t->ev_clean + t->ev_complete + t->ev_gaps +
	       t->below_reads + t->below_writes + t->bypass;
}

static void probe_begin(void)
{
	if (!cm)
		return;
	cm->pages.last = NULL;
	probe_tail = cm->pages.lru.prev;
	probe_pno = probe_tail != &cm->pages.lru ? probe_tail->pno : -1;
	probe_events = events(cm);
}

static int probe_hit(long long r, size_t n, int write)
{
	if (!cm || r <= 0 || (size_t)r != n || n >= cm->conf.page || n > HIT_MAX ||
	    (write && (cm->conf.flags & FFIO_CACHE_WT)) || cm->pages.last ||
	    cm->pages.lru.prev != probe_tail || probe_pno < 0 || probe_tail->pno != probe_pno ||
	    events(cm) != probe_events)
		return 0;
	nhits++;
	return 1;
}

/* ---- the calls, on both sides ------------------------------------------ */

enum op { WRITE, PWRITE, READ, PREAD, SEEK, TRUNC, FLUSH, SETFL, CLOSE };
static const char *const opname[] = {"write", "pwrite", "read",    "pread", "lseek",
				     "ftruncate", "ffflush", "F_SETFL", "close"};

/* One call on slot s of both files: n bytes (or whence, or flags) at off.
 * The managed side goes through the ff* API or the POSIX wrappers, drawn. */
static void call(enum op op, int s, long long n, off_t at)
{
	long long a = 0, b = 0;
	int ea, ff = (int)rnd(2);
	size_t len = op <= PREAD ? (size_t)n : 0;
	unsigned char *wp = wb + skew, *r0 = rb[0] + skew, *r1 = rb[1] + skew;

	for (size_t i = 0; op <= PWRITE && i < len; i++)
		wp[i] = (unsigned char)rnd64();
	memset(r0, 0xa5, len), memset(r1, 0x5a, len);
	ncalls++;
	snprintf(cur, sizeof cur, "%s%s slot %d %lld at %lld", ff && op <= SEEK ? "ff" : "",
		 opname[op], s, n, (long long)at);
	errno = 0;
	probe_begin();
	switch (op) {
	case WRITE: a = ff ? ffwrite(M[s], wp, len) : write(M[s], wp, len); break;
	case PWRITE: a = ff ? ffpwrite(M[s], wp, len, at) : pwrite(M[s], wp, len, at); break;
	case READ: a = ff ? ffread(M[s], r0, len) : read(M[s], r0, len); break;
	case PREAD: a = ff ? ffpread(M[s], r0, len, at) : pread(M[s], r0, len, at); break;
	case SEEK: a = ff ? ffseek(M[s], at, (int)n) : lseek(M[s], at, (int)n); break;
	case TRUNC: a = ftruncate(M[s], at); break;
	case FLUSH: a = ffflush(M[s]); break;
	case SETFL: a = fcntl(M[s], F_SETFL, (int)n); break;
	case CLOSE: a = ffclose(M[s]); break;
	}
	ea = errno;
	if (op <= PREAD && probe_hit(a, len, op <= PWRITE))
		hits_by[ff]++;
	errno = 0;
	switch (op) {
	case WRITE: b = write(K[s], wp, len); break;
	case PWRITE: b = pwrite(K[s], wp, len, at); break;
	case READ: b = read(K[s], r1, len); break;
	case PREAD: b = pread(K[s], r1, len, at); break;
	case SEEK: b = lseek(K[s], at, (int)n); break;
	case TRUNC: b = ftruncate(K[s], at); break;
	case FLUSH: b = 0; break;
	case SETFL: b = fcntl(K[s], F_SETFL, (int)n); break;
	case CLOSE: b = close(K[s]), M[s] = K[s] = -1; break;
	}
	agree(opname[op], a, ea, b, errno);
	if (!bad[0] && a > 0 && a == b && (op == READ || op == PREAD) && memcmp(r0, r1, (size_t)a)) {
		long long i = 0;
		while (r0[i] == r1[i])
			i++;
		snprintf(bad, sizeof bad, "call %ld (%s): byte %lld of %lld read: ffio 0x%02x, kernel 0x%02x",
			 ncalls, cur, i, a, r0[i], r1[i]);
	}
	if (M[s] >= 0) {
		errno = 0;
		a = ffseek(M[s], 0, SEEK_CUR), ea = errno;
		b = lseek(K[s], 0, SEEK_CUR);
		agree("position", a, ea, b, errno);
	}
}
static void w(int s, size_t n) { call(WRITE, s, (long long)n, 0); }
static void pw(int s, size_t n, off_t at) { call(PWRITE, s, (long long)n, at); }
static void r(int s, size_t n) { call(READ, s, (long long)n, 0); }
static void pr(int s, size_t n, off_t at) { call(PREAD, s, (long long)n, at); }
static void seek(int s, off_t at, int whence) { call(SEEK, s, whence, at); }

static off_t twin_size(void)
{
	struct stat st;
	return fstat(K[0] >= 0 ? K[0] : K[1], &st) == 0 ? st.st_size : 0;
}

/* Open slot s of both files anew with flags. */
static void open_slot(int s, int flags)
{
	if (M[s] >= 0)
		call(CLOSE, s, 0, 0);
	ncalls++;
	snprintf(cur, sizeof cur, "open slot %d flags 0%o", s, flags);
	errno = 0;
	M[s] = ffopen(pm, flags, 0644, sp->text);
	int ea = errno;
	K[s] = open(pk, flags, 0644);
	agree("open", M[s] < 0 ? -1 : 0, ea, K[s] < 0 ? -1 : 0, errno);
	cm = cache_of(M[0] >= 0 ? M[0] : M[1]);
}

static void run_begin(const struct spec *s)
{
	static uint64_t runs;
	sp = s;
	rs = seed0 + 7919 * ++runs; /* each run its own draws */
	ncalls = nhits = 0;
	bad[0] = '\0';
	open_slot(0, O_RDWR | O_CREAT | O_TRUNC);
}

/* Close everything, compare the files, say how it went. */
static void run_end(const char *what)
{
	static unsigned char fa[65536], fb[65536];
	struct stat sa, sb;
	ssize_t a, b;
	off_t off = 0;
	int same;

	for (int s = 0; s < 2; s++)
		if (M[s] >= 0)
			call(CLOSE, s, 0, 0);
	cm = NULL;
	if (!tap_ok(!bad[0], "%s over %s: %ld calls agree with the kernel (%ld took the hit path)", what,
		    sp->text, ncalls, nhits))
		tap_diag("  %s", bad);
	if (threaded)
		tap_is(nhits, 0, "%s over %s: no call took the hit path", what, sp->text);
	else
		tap_ok(nhits > 0, "%s over %s: calls took the hit path", what, sp->text);
	do { /* (the first 32 MiB: the limits' files are sparse to 2^44 bytes or more) */
		a = kernel_pread(pm, fa, sizeof fa, off);
		b = kernel_pread(pk, fb, sizeof fb, off);
		same = a == b && (a <= 0 || memcmp(fa, fb, (size_t)a) == 0);
		off += a > 0 ? a : 0;
	} while (same && a > 0 && off < (32 << 20));
	same &= stat(pm, &sa) == 0 && stat(pk, &sb) == 0 && sa.st_size == sb.st_size;
	if (!tap_ok(same, "%s over %s: the files agree after close (%lld bytes)", what, sp->text,
		    (long long)off))
		tap_diag("  from byte %lld: ffio read %zd, kernel %zd", (long long)off, a, b);
	unlink(pm), unlink(pk);
}

/* ---- 1. scripted scenarios --------------------------------------------- */

/* Records of each size at strides, on, before and after the page's last
 * extent and the sieve hull; ending at a page end, crossing one, at 0 of a
 * page; backwards; read back with lengths around theirs. */
static void sc_records(void)
{
	static const size_t len[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 64, 4095, 4096, 4097};
	static const size_t gap[] = {0, 1, 61, 0, 8, 1, 17, 0, 3, 64, 1, 0, 2};
	const off_t P = (off_t)sp->page, R = 12;
	for (int i = 0; i < (int)(sizeof len / sizeof len[0]); i++) {
		size_t n = len[i];
		off_t L = (off_t)n, st = L + (off_t)gap[i], base = (i % 4) * 2 * P;
		off_t top = base + 2 * P - L - 1;
		off_t first = base + P - (R / 2) * st < base ? base : base + P - (R / 2) * st;
		for (int k = 0; k < R; k++) { /* forward, over the page end */
			if (k % 3 == 2)
				pw(0, n, first + k * st);
			else
				seek(0, first + k * st, SEEK_SET), w(0, n);
		}
		pw(0, n, base + P - L);     /* ends at the page end */
		pw(0, n, base + P - L + 1); /* crosses it */
		pw(0, n, base), pw(0, n, base + P); /* at 0 of a page */
		pw(0, n, base + L / 2 + 1); /* into the extent just made */
		for (int k = R; k >= 0; k--) /* backwards, in the next page */
			pw(0, n, top - (R - k) * st);
		pw(0, n, top - L - 2), pw(0, n, top + st); /* just before it, then after */
		for (int k = 0; k < R; k++) {
			seek(0, first + k * st, SEEK_SET), r(0, n);
			pr(0, n + 1, first + k * st - 1);
			pr(0, n > 1 ? n - 1 : 1, first + k * st + 1);
		}
		for (int k = R; k >= 0; k--)
			pr(0, n, top - (R - k) * st);
		pr(0, n, base + P - L), pr(0, n, base + P - L + 1);
		if (i % 4 == 3)
			call(FLUSH, 0, 0, 0);
	}
}

/* Sparse records past the end over more pages than the cache holds: pages
 * with reused buffers get more extents than page/2048, where the full path
 * makes a sieved page known; extent arrays grow through 4, 8, 16...  Then
 * the records and their gaps are read back. */
static void sc_extents(void)
{
	const off_t P = (off_t)sp->page;
	int per = (int)(sp->page / 2048) + 3, npg = sp->pages + 3;
	off_t st = P / per;
	w(0, 5);
	for (int pg = 0; pg < npg; pg++)
		for (int k = 0; k < per; k++) {
			off_t at = (pg + 1) * P + k * st + (pg % 3);
			if (k % 2)
				pw(0, 8, at);
			else
				seek(0, at, SEEK_SET), w(0, 8);
		}
	for (int pg = npg - 1; pg >= 0; pg -= 2)
		for (int k = 0; k < per; k += per > 40 ? 8 : 1) {
			off_t at = (pg + 1) * P + k * st + (pg % 3);
			pr(0, 8, at), pr(0, 16, at - 4);
			seek(0, at + 8, SEEK_SET), r(0, 3);
		}
}

/* Reads at and across the logical end, of holes, after ffflush and after
 * truncation (shrinking into a record, growing), and writes after it. */
static void sc_eof(void)
{
	const off_t P = (off_t)sp->page, end = 3 * P + 13;
	w(0, 100);
	pr(0, 200, 0), pr(0, 8, 100), pr(0, 5, 99);
	seek(0, 96, SEEK_SET), r(0, 8), r(0, 8);
	pw(0, 8, 3 * P + 5);
	for (off_t o = 100; o < 3 * P + 20; o += P / 2 - 3)
		pr(0, 16, o);
	for (int pass = 0; pass < 2; pass++) {
		for (off_t o = end - 20; o <= end + 3; o++)
			pr(0, 8, o);
		seek(0, end - 4, SEEK_SET), r(0, 8), r(0, 8);
		call(FLUSH, 0, 0, 0);
	}
	call(TRUNC, 0, 0, 3 * P + 9);
	for (off_t o = 3 * P; o < 3 * P + 16; o += 3)
		pr(0, 8, o);
	call(TRUNC, 0, 0, P + 7);
	pr(0, 16, P), pr(0, 16, P - 8), pw(0, 4, P + 2), pr(0, 8, P);
	call(TRUNC, 0, 0, 3 * P);
	for (off_t o = P - 8; o < 3 * P + 8; o += P / 4 + 1)
		pr(0, 16, o);
	pw(0, 7, P + 20), pw(0, 7, P + 27), pr(0, 30, P + 10);
	seek(0, 5 * P - 2, SEEK_SET), w(0, 9); /* past the end: a hole before it */
	pr(0, 20, 5 * P - 10), pr(0, 9, 3 * P - 4);
}

/* O_APPEND set and cleared between hits, O_RDONLY, O_WRONLY and O_DSYNC
 * descriptions of the same file interleaved with a plain one. */
static void sc_flags(void)
{
	const off_t P = (off_t)sp->page;
	for (int k = 0; k < 6; k++)
		w(0, 8);
	call(SETFL, 0, O_APPEND, 0);
	w(0, 8), pw(0, 5, 3) /* appends, under Linux */, w(0, 0);
	call(SETFL, 0, 0, 0);
	for (int k = 0; k < 4; k++)
		w(0, 8);
	seek(0, 10, SEEK_SET), w(0, 4), pr(0, 16, 0);
	open_slot(1, O_RDONLY);
	r(1, 8), r(1, 8), w(1, 8), pw(1, 0, 0), pw(0, 8, P - 9), pr(1, 8, P - 9);
	open_slot(1, O_WRONLY);
	w(1, 8), r(1, 8), pr(1, 0, 0), pw(1, 8, 40), pr(0, 16, 36);
	open_slot(1, O_RDWR | O_DSYNC);
	for (int k = 0; k < 6; k++)
		pw(k % 2, 8, 100 + 8 * k), w(0, 3), pr(1, 8, 100 + 8 * k);
	call(SETFL, 1, O_APPEND, 0);
	w(1, 8);
	call(SETFL, 1, 0, 0);
	w(0, 8), pr(0, 32, 0);
}

/* Two descriptions of the file in lockstep: one writes records at its
 * position, the other reads them back at its own, in the same tail page. */
static void sc_two(void)
{
	open_slot(1, O_RDWR);
	for (int k = 0; k < 40; k++) {
		w(0, (size_t)(1 + k % 17)), r(1, (size_t)(1 + k % 17));
		if (k % 5 == 4)
			w(1, 4), seek(0, 4, SEEK_CUR);
	}
	pw(1, 8, (off_t)sp->page - 4), pr(0, 8, (off_t)sp->page - 8);
}

/* Arguments the kernel refuses, or takes as nothing, next to hits. */
static void sc_errors(void)
{
	w(0, 16), w(0, 8), w(0, 8);
	seek(0, -1, SEEK_SET), seek(0, -100, SEEK_CUR), seek(0, 4, SEEK_CUR);
	r(0, 8), w(0, 0), pw(0, 0, 5), pw(0, 0, (off_t)1 << 40), pr(0, 0, 3);
	pr(0, 8, LLONG_MIN), pr(0, 8, -1 - (off_t)sp->page), pw(0, 8, -1), pw(0, 0, -1);
	pw(0, 3, 30), pr(0, 40, 0), pr(0, 8, 2);
}

/* O_DIRECT, set at open and with F_SETFL, on descriptions of a file whose
 * plain descriptions hit the same pages: transfers aligned to the block
 * (the stack's), and transfers whose offset, length or buffer is not (the
 * kernel's: EINVAL on most file systems, a buffered fallback on a few),
 * at and past the end, around truncation; then the file opened first with
 * O_DIRECT.  Each unaligned call is refused in its first piece (an offset
 * off the block, fewer bytes than a block, a buffer off line): with an
 * aligned offset and an unaligned end past its first extent, the kernel
 * writes the first extents before it refuses the rest, and two files'
 * extents differ. */
static void sc_direct(void)
{
	const off_t B = 4096, P = (off_t)sp->page;
	for (int k = 0; k < 8; k++)
		w(0, 8);
	open_slot(1, O_RDWR | O_DIRECT);
	for (int pass = 0; pass < 2; pass++) {
		pr(1, (size_t)B, 0), pr(1, 8, 0), pr(1, 512, 0), pr(1, 256, 256), pr(1, (size_t)B, 3);
		r(1, (size_t)B), r(1, 100), seek(1, 0, SEEK_SET), r(1, (size_t)B);
		pw(1, (size_t)B, B), pw(1, 8, B + 3), pw(1, 512, 512), pw(1, 256, 256);
		pw(1, (size_t)B, 2 * B + 512), pr(0, 16, B - 8), pr(0, 8, 2 * B + 510);
		for (size_t k = 0; k < 3; k++) {
			static const size_t sk[] = {1, 512, 8};
			skew = sk[k];
			pw(1, (size_t)B, 0), pr(1, (size_t)B, 0), w(1, (size_t)B), r(1, (size_t)B);
		}
		skew = 0;
		w(1, (size_t)B), seek(1, 5, SEEK_SET), w(1, (size_t)B), r(1, (size_t)B);
		pw(0, 8, 3 * B + 5), pr(1, (size_t)B, 3 * B), pw(0, 8, 3 * B + 21), pr(1, 2 * (size_t)B, 2 * B);
		pr(1, (size_t)B, 2 * P), pr(1, 7, 10 * P + 1), pr(1, (size_t)B, 10 * P);
		call(SETFL, 0, O_DIRECT, 0);
		w(0, 8), pw(0, (size_t)B, 0), pr(0, 8, 3), pr(0, (size_t)B, B), seek(0, 0, SEEK_END), w(0, 8);
		call(SETFL, 0, 0, 0);
		w(0, 8), pr(0, 8, 3), pw(0, 8, 2 * B - 4);
		call(SETFL, 1, 0, 0);
		pw(1, 8, 3), pr(1, 8, 3), pw(1, 8, 11), pw(1, 8, 19);
		call(SETFL, 1, O_DIRECT, 0);
		pr(1, 8, 3), pr(1, (size_t)B, 0), pw(1, 8, 27);
		call(TRUNC, 0, 0, B + 100);
		pr(1, (size_t)B, B), pr(1, 100, B), pw(0, 8, B + 96), pr(1, 2 * (size_t)B, 0);
		call(SETFL, 1, O_DIRECT | O_APPEND, 0);
		w(1, (size_t)B), w(1, 8), pr(0, 16, 0);
		call(SETFL, 1, O_DIRECT, 0);
		if (pass == 0) { /* the file again, opened first with O_DIRECT */
			call(CLOSE, 0, 0, 0), call(CLOSE, 1, 0, 0);
			open_slot(1, O_RDWR | O_DIRECT);
			open_slot(0, O_RDWR);
			for (int k = 0; k < 8; k++)
				pw(0, 8, 8 * k + 1);
		}
	}
}

/* The kernel's limits: offsets at the largest the file system or off_t
 * allows (s_maxbytes: 16 TiB - 4 KiB on ext4 with 4 KiB blocks; an end
 * past LLONG_MAX is EINVAL, rw_verify_area), which ffio follows (ofd.c's
 * kernel_limits, the hit path's ffio_ofd_within), and O_DIRECT's alignment
 * on a description set O_DIRECT with F_SETFL (ofd.c's direct_odd; more of
 * it in sc_direct). */
static void limit_ok(const char *what)
{
	tap_ok(!bad[0], "limits over %s: %s", sp->text, what);
	if (bad[0])
		tap_diag("  %s", bad);
	bad[0] = '\0';
}

static void sc_limits(void)
{
	run_begin(&specs[0]);
	w(0, 16), limit_ok("a record at 0");
	pw(0, 8, LLONG_MAX - 7), limit_ok("pwrite of 8 bytes at LLONG_MAX - 7");
	pr(0, 8, LLONG_MAX - 4), limit_ok("pread of 8 bytes at LLONG_MAX - 4");
	pr(0, 8, LLONG_MAX - 8), limit_ok("pread of 8 bytes at LLONG_MAX - 8");
	pw(0, 8, (off_t)1 << 44), limit_ok("pwrite of 8 bytes at 2^44");
	pw(0, 8, ((off_t)1 << 44) + 8), limit_ok("pwrite of 8 bytes after it");
	seek(0, LLONG_MAX - 8, SEEK_SET), limit_ok("lseek to LLONG_MAX - 8");
	seek(0, 8, SEEK_SET), w(0, 8), limit_ok("a record at 8");
	call(SETFL, 0, O_DIRECT, 0), pw(0, 8, 3), limit_ok("O_DIRECT set with F_SETFL, pwrite of 8 bytes at 3");
	call(SETFL, 0, 0, 0), pw(0, 8, 3), limit_ok("O_DIRECT cleared, the same pwrite");
	call(CLOSE, 0, 0, 0), limit_ok("close");
	run_end("limits");
}

/* ---- the random mix ---------------------------------------------------- */

static size_t rlen(void)
{
	static const size_t t[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 64, 511, 4095, 4096, 4097};
	return rnd(3) ? t[rnd(sizeof t / sizeof t[0])] : (size_t)rnd(200) + 1;
}

/* Two descriptions; offsets near the last call, near page ends, near the
 * end of the file, or anywhere in a few more pages than the cache holds. */
static void sc_random(uint64_t seed, int steps)
{
	const off_t P = (off_t)sp->page, span = (sp->pages + 3) * P;
	off_t last = 0;
	rs = seed;
	open_slot(1, O_RDWR);
	for (int i = 0; i < steps; i++) {
		int s = rnd(4) == 0, k = (int)rnd(100), q = (int)rnd(10);
		size_t n = rlen();
		off_t at = q < 5 ? last + rnd(41) - 16 : q < 8 ? rnd(span / P + 1) * P + rnd(41) - 20
			 : q < 9 ? twin_size() + rnd(41) - 20 : rnd(span);
		if (at < 0)
			at = 0;
		if (k < 45 && rnd(2))
			seek(s, at, SEEK_SET);
		if (k < 25)
			w(s, n);
		else if (k < 45)
			r(s, n);
		else if (k < 60)
			pw(s, n, at);
		else if (k < 78)
			pr(s, n, at);
		else if (k < 86)
			seek(s, k < 82 ? rnd(65) - 32 : rnd(33) - 16, k < 82 ? SEEK_CUR : SEEK_END);
		else if (k < 89)
			call(FLUSH, s, 0, 0);
		else if (k < 92)
			call(TRUNC, s, 0, at);
		else if (k < 95)
			call(SETFL, s, (fcntl(K[s], F_GETFL) ^ O_APPEND) & O_APPEND, 0);
		else
			pr(s, n, twin_size() - rnd((long long)n + 8));
		last = k < 45 ? lseek(K[s], 0, SEEK_CUR) : at + (off_t)n;
	}
}

static void differential(uint64_t seed, const char *when)
{
	for (int i = 0; i < NSPECS; i++) {
		char what[64];
		run_begin(&specs[i]), sc_records(), run_end("records");
		run_begin(&specs[i]), sc_extents(), run_end("extents");
		run_begin(&specs[i]), sc_eof(), run_end("eof, holes, truncation");
		run_begin(&specs[i]), sc_flags(), run_end("flags");
		run_begin(&specs[i]), sc_two(), run_end("two descriptions");
		run_begin(&specs[i]), sc_errors(), run_end("errors");
		run_begin(&specs[i]), sc_direct(), run_end("O_DIRECT");
		snprintf(what, sizeof what, "random mix%s, seed %llu", when, (unsigned long long)(seed + i));
		run_begin(&specs[i]), sc_random(seed + (uint64_t)i, 1500), run_end(what);
	}
}

/* ---- 2. white box ------------------------------------------------------ */

#define WP 65536 /* the page of the white-box specs */
static int A = -1, B = -1; /* the hit's file and the full path's twin */
static struct cache *ca, *cb;
static long long exp_nw, exp_bw, exp_nr, exp_br; /* what the calls made should count */

/* A cache, its tail page, the page's extents and bytes, the LRU order. */
struct snap {
	struct cache c;
	struct cpage p;
	struct cext ext[64];
	unsigned char data[WP];
	int64_t lru[16];
};
static struct snap s1, s2;

static struct snap *snap(const struct cache *c, struct snap *s)
{
	const struct cpage *p = c->pages.lru.prev;
	memset(s, 0, sizeof *s);
	memcpy(&s->c, c, sizeof *c);
	if (p != &c->pages.lru) {
		memcpy(&s->p, p, sizeof *p);
		memcpy(s->ext, p->ext, (p->next_ext < 64 ? p->next_ext : 64) * sizeof *p->ext);
		memcpy(s->data, p->data, c->conf.page);
	}
	int i = 0;
	for (p = c->pages.lru.next; p != &c->pages.lru && i < 16; p = p->next)
		s->lru[i++] = p->pno;
	return s;
}

/* Do two caches fed the same calls agree in all a later call depends on?
 * The first difference, or NULL. */
static const char *differ(const struct snap *a, const struct snap *b)
{
	static unsigned char mask[WP];
#define SAME(x) if (memcmp(&a->x, &b->x, sizeof a->x) != 0) return #x
	SAME(c.stats); SAME(c.size.below); SAME(c.size.below_known); SAME(c.size.cached_end);
	SAME(c.ra.last_off); SAME(c.ra.last_len); SAME(c.ra.stride); SAME(c.ra.hits); SAME(c.ra.valid);
	SAME(c.run.start); SAME(c.run.reads); SAME(c.pages.npages); SAME(c.pages.ndirty);
	SAME(c.big.return_ns); SAME(p.pno); SAME(p.next_ext); SAME(p.cap_ext); SAME(p.nvalid);
	SAME(p.valid); SAME(ext); SAME(lru);
#undef SAME
	if (a->p.known != b->p.known || a->p.holes != b->p.holes || a->p.ra != b->p.ra)
		return "p.known, holes, ra";
	/* the bytes the page holds: all when known, else its extents and
	 * valid ranges (the rest of an unknown page's buffer is stale) */
	memset(mask, a->p.known, sizeof mask);
	for (uint32_t k = 0; k < a->p.next_ext && k < 64; k++)
		memset(mask + a->ext[k].lo, 1, a->ext[k].hi - a->ext[k].lo);
	for (int k = 0; k < a->p.nvalid; k++)
		memset(mask + a->p.valid[k].lo, 1, a->p.valid[k].hi - a->p.valid[k].lo);
	for (size_t i = 0; i < a->c.conf.page && i < WP; i++)
		if (mask[i] && a->data[i] != b->data[i])
			return "data";
	return NULL;
}

/* (Unsigned: offsets near LLONG_MAX are filled too.) */
static void fill(off_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wb[i] = (unsigned char)(((uint64_t)off + i) * 7 + n);
}

/* A write or read of n bytes at off on fd (A or B) by the layer's hit
 * method, or by the full path (ffio_ofd_pwritev, ffio_ofd_preadv). */
static ssize_t one(int fd, int write, int hit, size_t n, off_t off)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	unsigned char *buf = rb[fd == B];
	if (write) {
		fill(off, n);
		return hit ? ffio_layer_cache.write_hit(o->file->top, wb, n, off)
			   : ffio_ofd_pwritev(o, &(struct iovec){wb, n}, 1, off);
	}
	memset(buf, fd == B ? 0x5a : 0xa5, n);
	return hit ? ffio_layer_cache.read_hit(o->file->top, buf, n, off)
		   : ffio_ofd_preadv(o, &(struct iovec){buf, n}, 1, off);
}

/* HIT: the hit takes the call on A, the full path the same on B, and both
 * caches agree.  REFUSE: the hit returns 0 on A and not one byte of its
 * cache, tail page, extents, data or LRU list changed; THEN_FULL: and the
 * full path then takes it on both; FULL: the full path on both. */
enum { HIT, REFUSE, THEN_FULL, FULL };
static void wcase(int write, int want, size_t n, off_t off, const char *what)
{
	const char *kind = write ? "write" : "read", *d;
	ssize_t a = 0, b = 0;
	if (want != FULL) {
		snap(ca, &s1);
		a = one(A, write, 1, n, off);
	}
	if (want == HIT) {
		b = one(B, write, 0, n, off);
		d = differ(snap(ca, &s1), snap(cb, &s2));
		if (!tap_ok(a == (ssize_t)n && b == (ssize_t)n && (write || !memcmp(rb[0], rb[1], n)) && !d,
			    "%s_hit %s: %zd of %zu, as the full path", kind, what, a, n))
			tap_diag("  full path %zd; first difference: %s", b, d ? d : "none");
	} else if (want != FULL) {
		tap_ok(a == 0 && memcmp(&s1, snap(ca, &s2), sizeof s1) == 0,
		       "%s_hit refuses %s: %zd, nothing changed", kind, what, a);
	}
	if (want >= THEN_FULL) {
		a = one(A, write, 0, n, off), b = one(B, write, 0, n, off);
		if (a != b || (!write && a > 0 && memcmp(rb[0], rb[1], (size_t)a) != 0))
			tap_ok(0, "full path %s of %zu at %lld: %zd and %zd", kind, n, (long long)off, a, b);
	}
	if (b > 0 && write)
		exp_nw++, exp_bw += b;
	else if (b > 0)
		exp_nr++, exp_br += b;
}

/* A state no call of this test can reach, set by hand on A for one call. */
#define POKE(field, value, write, off, what)                         \
	do {                                                         \
		long long old_ = (field);                            \
		(field) = (value);                                   \
		wcase(write, REFUSE, 8, off, what " (set by hand)"); \
		(field) = old_;                                      \
	} while (0)

/* Both files: 4 * WP + 1000 bytes of existing data, opened with spec. */
static int wb_open(const char *spec)
{
	static unsigned char pre[4 * WP + 1000];
	for (size_t i = 0; i < sizeof pre; i++)
		pre[i] = (unsigned char)(i * 13 + 1);
	for (int i = 0; i < 2; i++) {
		int fd = open(i ? pk : pm, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, pre, sizeof pre) != (ssize_t)sizeof pre)
			tap_diag("cannot prepare the files: %s", strerror(errno));
		close(fd);
	}
	A = ffopen(pm, O_RDWR, 0, spec), B = ffopen(pk, O_RDWR, 0, spec);
	ca = cache_of(A), cb = cache_of(B);
	exp_nw = exp_bw = exp_nr = exp_br = 0;
	return tap_ok(ca && cb, "%s: two files open, their top layers caches", spec);
}

/* ffgetstats of both files count the calls made, hits or not; then close. */
static void wb_close(const char *spec)
{
	struct ffio_stats st[2][4];
	int ok = ffgetstats(A, st[0], 4) > 0 && ffgetstats(B, st[1], 4) > 0;
	for (int i = 0; i < 2; i++) {
		const struct ffio_stats *t = st[i];
		ok &= t->count[FFIO_STAT_WRITE] == (uint64_t)exp_nw &&
		      t->bytes[FFIO_STAT_WRITE] == (uint64_t)exp_bw &&
		      t->count[FFIO_STAT_READ] == (uint64_t)exp_nr &&
		      t->bytes[FFIO_STAT_READ] == (uint64_t)exp_br && t->hits == st[0]->hits &&
		      t->misses == st[0]->misses;
	}
	tap_ok(ok, "%s: ffgetstats counts %lld writes (%lld bytes), %lld reads (%lld bytes), hits or not",
	       spec, exp_nw, exp_bw, exp_nr, exp_br);
	tap_ok(ffclose(A) == 0 && ffclose(B) == 0, "%s: both files close", spec);
	A = B = -1;
	unlink(pm), unlink(pk);
}

static void white_box_plain(void)
{
	const char *spec = "cache:64k:4:0";
	if (!wb_open(spec))
		return;
	wcase(1, THEN_FULL, 8, 100, "with no page cached");
	wcase(1, HIT, 8, 108, "joining the last extent");
	wcase(1, HIT, 8, 104, "inside the last extent");
	wcase(1, HIT, 16, 200, "after the last extent (2 of 4)");
	wcase(1, HIT, 8, 300, "after it (3 of 4)");
	wcase(1, HIT, 8, 400, "after it (4 of 4)");
	wcase(1, THEN_FULL, 8, 500, "a fifth extent (the array is full)");
	wcase(1, HIT, 8, 600, "a sixth extent, in the grown array");
	wcase(1, REFUSE, HIT_MAX + 1, 8192, "HIT_MAX + 1 bytes");
	wcase(1, HIT, HIT_MAX, 8192, "HIT_MAX bytes");
	POKE(ca->pages.lru.prev->inflight, 1, 1, 700, "a page in flight");
	POKE(ca->pages.lru.prev->reading, 1, 1, 700, "a page being read");
	POKE(ca->async.nreq, 1, 1, 700, "with requests in flight");
	POKE(ca->size.below_known, 0, 1, 700, "with the size below unknown");
	POKE(ca->pages.pool->starved, 1, 1, 700, "with the pool starved");
	POKE(ca->conf.flags, ca->conf.flags | FFIO_CACHE_WT, 1, 700, "under .wt");
	ffio_file_set_flag(ca->base.file, FFIO_FILE_WRITETHROUGH, 1);
	wcase(1, REFUSE, 8, 700, "in write-through mode (the glue's)");
	ffio_file_set_flag(ca->base.file, FFIO_FILE_WRITETHROUGH, 0);
	wcase(0, HIT, 8, 104, "of dirty bytes");
	wcase(0, THEN_FULL, 8, 6000, "of bytes an unknown page does not hold");
	wcase(0, HIT, 8, 6000, "of the page just loaded");
	ca->pages.lru.prev->ra = cb->pages.lru.prev->ra = 1; /* (set by hand, on both) */
	wcase(0, HIT, 8, 104, "of a page read ahead, not used yet");
	tap_ok(!ca->pages.lru.prev->ra && ca->stats.ra_used == 1, "the hit used the read-ahead page");
	wcase(0, REFUSE, HIT_MAX + 1, 100, "HIT_MAX + 1 bytes");
	wcase(0, HIT, HIT_MAX, 100, "HIT_MAX bytes");
	POKE(ca->pages.lru.prev->reading, 1, 0, 100, "a page being read");
	POKE(ca->size.below_known, 0, 0, 100, "with the size below unknown");
	POKE(ca->pages.pool->starved, 1, 0, 100, "with the pool starved");
	wcase(1, THEN_FULL, 8, 50, "before the last extent");
	wcase(1, THEN_FULL, 8, WP - 8, "ending at the page end");
	wcase(0, REFUSE, 8, WP - 8, "ending at the page end");
	wcase(0, HIT, 8, WP - 16, "just before the page end");
	wcase(1, REFUSE, 8, WP - 4, "crossing the page end");
	wcase(0, REFUSE, 8, WP - 4, "crossing the page end");
	wcase(1, REFUSE, 8, WP + 10, "in the next page");
	wcase(0, REFUSE, 8, WP + 10, "in the next page");
	/* a glue says the file has one writer: the known page keeps its few
	 * extents exact (a hull and a map only from PAGE / 2048 of them) */
	ffio_file_set_flag(ca->base.file, FFIO_FILE_SIEVE, 1);
	ffio_file_set_flag(cb->base.file, FFIO_FILE_SIEVE, 1);
	wcase(1, THEN_FULL, 8, 3000, "in a known page of extents, now sieved");
	tap_ok(!ca->pages.lru.prev->wmap && ca->pages.lru.prev->next_ext > 1,
	       "its extents stay exact, no map");
	wcase(1, THEN_FULL, 8, 7000, "after its last extent, the array full");
	ffio_file_set_flag(ca->base.file, FFIO_FILE_SIEVE, 0);
	ffio_file_set_flag(cb->base.file, FFIO_FILE_SIEVE, 0);
	wcase(1, FULL, 8, 4 * WP + 1200, ""); /* the last page: 1000 bytes below, a hole, this record */
	wcase(1, REFUSE, 8, 600, "in a page touched before the last");
	wcase(0, HIT, 8, 4 * WP + 1200, "of the record at the logical end");
	wcase(0, THEN_FULL, 8, 4 * WP + 1204, "past the logical end");
	wcase(0, THEN_FULL, 8, 4 * WP + 1100, "of a hole");
	wcase(0, HIT, 8, 4 * WP + 1100, "of the hole, loaded (zeros)");
	tap_ok(ffflush(A) == 0 && ffflush(B) == 0, "ffflush");
	wcase(1, THEN_FULL, 8, 4 * WP + 1208, "into a clean page");
	wcase(1, HIT, 8, 4 * WP + 1216, "into it again, dirty");
	wb_close(spec);
}

static void white_box_sieve(void)
{
	const char *spec = "cache.sieve:64k:4:0";
	int took = 0, agree_all = 1;
	if (!wb_open(spec))
		return;
	wcase(0, FULL, 8, 4 * WP + 10, "");   /* the last page, loaded: known */
	wcase(1, FULL, 8, 4 * WP + 1000, ""); /* one hull */
	/* A known sieved page keeps its extents exact while they are few. */
	wcase(1, HIT, 8, 4 * WP + 2000, "after the last extent: a new one");
	wcase(1, THEN_FULL, 8, 4 * WP + 500, "before the first extent");
	struct cpage *p = ca->pages.lru.prev;
	tap_ok(p->known && !p->wmap && p->next_ext == 3, "the known page holds 3 exact extents, no map");
	/* From PAGE / 2048 = 32 extents on, the full path makes them a hull
	 * with a map of the bytes written (the hit path allocates nothing). */
	for (int k = 0; k < 30; k++) {
		off_t off = 4 * WP + 3000 + 64 * k;
		one(A, 1, 0, 8, off), one(B, 1, 0, 8, off), exp_nw++, exp_bw += 8;
	}
	p = ca->pages.lru.prev;
	tap_ok(p->known && p->wmap && p->next_ext == 1 && p->holes && p->wcount == 33 * 8 &&
	       p->ext[0].lo == 500 && p->ext[0].hi == 3000 + 64 * 29 + 8,
	       "33 extents: one hull [500, 4864) with a map, 264 bytes written, holes");
	wcase(1, HIT, 8, 4 * WP + 5000, "after the hull: it grows, with holes");
	wcase(1, HIT, 8, 4 * WP + 400, "before the hull: it grows down");
	wcase(1, HIT, 8, 4 * WP + 1500, "inside the hull, into a hole");
	wcase(0, HIT, 8, 4 * WP + 1800, "of a gap in the hull (zeros)");
	p = ca->pages.lru.prev;
	tap_ok(p->holes && p->next_ext == 1 && p->ext[0].lo == 400 && p->ext[0].hi == 5008 && p->wcount == 36 * 8,
	       "the hull [400, 5008), with holes, 288 bytes written");
	/* A page of existing data, unknown: extents, not a hull.  The hit
	 * refuses a first record elsewhere, a new extent when the array is
	 * full (4, 8, 16) and from page/2048 = 32 extents on. */
	for (int k = 0; k <= 40; k++) {
		off_t off = WP + 64 * k + 8;
		int expect = !(k == 0 || k == 4 || k == 8 || k == 16 || k >= 32);
		snap(ca, &s1);
		ssize_t a = one(A, 1, 1, 8, off);
		int clean = a != 0 || memcmp(&s1, snap(ca, &s2), sizeof s1) == 0;
		if (a == 0)
			one(A, 1, 0, 8, off);
		one(B, 1, 0, 8, off), exp_nw++, exp_bw += 8;
		const char *d = differ(snap(ca, &s1), snap(cb, &s2));
		if (agree_all && ((a == 8) != expect || d || !clean))
			tap_diag("  record %d: hit %zd, expected %d; %s", k, a, expect,
				 d ? d : clean ? "" : "changed");
		agree_all &= (a == 8) == expect && !d && clean, took += a == 8;
	}
	tap_ok(agree_all && took == 28, "41 records into an unknown sieved page: %d hits where expected, "
	       "refusals changed nothing, state as the full path", took);
	p = ca->pages.lru.prev;
	tap_ok(p->next_ext == 41 && !p->known, "the page has 41 extents, unknown");
	wb_close(spec);
}

/* The inline gates of ffio-internal.h: descriptions and files a hit must
 * not be tried on. */
static void gates(void)
{
	const char *spec = "cache:64k:4:0";
	if (!wb_open(spec))
		return;
	/* Opened first: a second open drops the file's clean data. */
	int fr = ffopen(pm, O_RDONLY, 0, spec), fw = ffopen(pm, O_WRONLY, 0, spec);
	int fs = ffopen(pm, O_RDWR | O_DSYNC, 0, spec);
	wcase(1, FULL, 8, 100, "");
	struct ffio_ofd *o = ffio_fd_get(A);
	static const char *const what[] = {"an O_RDONLY description", "an O_WRONLY description",
					   "an O_DSYNC description",  "an O_APPEND description",
					   "a file with a deferred error", "an end past LLONG_MAX"};
	struct ffio_ofd *g[] = {ffio_fd_get(fr), ffio_fd_get(fw), ffio_fd_get(fs), o, o, o};
	for (int i = 0; i < 6; i++) {
		off_t off = i == 5 ? LLONG_MAX - 4 : 108;
		if (i == 3)
			fcntl(A, F_SETFL, O_APPEND);
		ca->base.file->error = i == 4 ? -EIO : 0;
		fill(off, 8);
		snap(ca, &s1);
		ssize_t a = !g[i]    ? -1
			    : i == 1 ? ffio_ofd_read_hit(g[i], rb[0], 8, 100)
				     : ffio_ofd_write_hit(g[i], wb, 8, off);
		tap_ok(a == 0 && memcmp(&s1, snap(ca, &s2), sizeof s1) == 0,
		       "no %s hit on %s: nothing changed", i == 1 ? "read" : "write", what[i]);
		ca->base.file->error = 0;
		fcntl(A, F_SETFL, 0);
	}
	fill(108, 8);
	tap_is(ffio_ofd_read_hit(ffio_fd_get(fr), rb[0], 8, 100), 8, "a read hit on the O_RDONLY one");
	tap_is(ffio_ofd_write_hit(o, wb, 8, 108), 8, "a write hit on the plain one");
	one(B, 0, 0, 8, 100), one(B, 1, 0, 8, 108); /* as on A */
	exp_nr++, exp_br += 8, exp_nw++, exp_bw += 8;
	tap_ok(ffclose(fr) == 0 && ffclose(fw) == 0 && ffclose(fs) == 0, "the other descriptions close");
	wb_close(spec);
}

/* ---- 3. a second thread ------------------------------------------------ */

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;
static int tstop;

static void *waiter(void *arg)
{
	pthread_mutex_lock(&tlock);
	while (!tstop)
		pthread_cond_wait(&tcond, &tlock);
	pthread_mutex_unlock(&tlock);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	seed0 = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
	tap_tmpdir(dir, sizeof dir, "ffio-cache-hits");
	snprintf(pm, sizeof pm, "%s/managed", dir);
	snprintf(pk, sizeof pk, "%s/twin", dir);
	if (!__libc_single_threaded) {
		rmdir(dir);
		tap_skip_all("a second thread from the start: no hit path to test");
	}
	tap_diag("seed %llu", (unsigned long long)seed0);
	differential(seed0, "");
	tap_ok(hits_by[0] > 0 && hits_by[1] > 0, "hits through the POSIX wrappers (%ld) and ff* (%ld)",
	       hits_by[0], hits_by[1]);
	sc_limits();
	white_box_plain();
	white_box_sieve();
	gates();

	if (!tap_ok(pthread_create(&t, NULL, waiter, NULL) == 0, "a second thread, waiting on a condition"))
		return rmdir(dir), tap_done();
	tap_ok(!__libc_single_threaded, "the process is no longer single-threaded");
	threaded = 1;
	differential(seed0 + 100, ", a thread alive");
	pthread_mutex_lock(&tlock);
	tstop = 1;
	pthread_cond_signal(&tcond);
	pthread_mutex_unlock(&tlock);
	pthread_join(t, NULL);
	rmdir(dir);
	return tap_done();
}
