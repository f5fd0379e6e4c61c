/* advise/rules.c -- from merged per-file statistics to an FF_IO_OPTS spec:
 * files are grouped by what they need and by name (an inferred glob such
 * as *.nc or out_*.dat, or the literal name), each group's statistics are
 * printed, and the rules choose its stack, printing a one-line reason for
 * every choice and the expected reduction in system calls.  The rules are
 * conservative: a stack is advised only where what was seen shows that it
 * pays and is safe (see RULES in ffio-advise(1)). */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define MIN_CALLS 64              /* fewer requests than this do not matter */
/* A median request this large stays uncached: on a local file system (or
 * at a low latency) from 16 KiB on the copy into the cache costs what the
 * calls saved gain (measured: sequential reads and writes of 16 KiB and
 * more from the page cache were as fast or faster raw); where requests
 * wait for a network, gathering them pays up to larger ones.  Not from 8
 * KiB on: netCDF's 8 KiB blocks mostly gained through a cache in make
 * bench-advise (its best netCDF grid spec against raw: tile + record
 * 1.13x to 1.63x in four of six runs, 0.87x and 1.0x in two; two ncrcat
 * at once 1.03x to 1.36x in six of seven runs; both uncached, 0.83 and
 * 0.80 of that best).  Where they did not, in the seed's Method 1 (7
 * ranks on 2 cores, the master writing), an empty FF_IO_OPTS, preloaded,
 * ran at 0.89x to 0.93x of raw and a cache of 1 MiB pages at 0.85x to
 * 0.91x: the preloaded libraries cost, not the cache, and leaving the
 * file uncached does not remove that. */
#define LARGE_LOCAL (16 * 1024)
#define LARGE_REMOTE (1024 * 1024)
#define PAGE_MIN (64 * 1024)
#define PAGE_MAX (4 * 1024 * 1024)
#define RECORDS_PER_PAGE 64       /* a page should hold this many records */
/* ... and, where the data comes back (the bytes moved at least twice the
 * working set), a page is also at least the working set over WS_PAGES,
 * up to WS_PAGE_MAX: the cache holds the working set in 16 pages up to
 * 16 MiB, in more (up to PAGES_MAX) beyond.  Data passed about once
 * (records spread over a file, a file written or read once) needs only
 * the pages being filled and those read ahead: ONCE_PAGES of the size the
 * records ask for.  Measured with make bench-advise (medians of 5 to 11
 * runs, five runs) and bench/strided -P (9 to 25, round robin), on a busy
 * machine: 256 B records 4 KiB apart over 64 MiB, written sieved and read
 * back twice, were fastest through 16 pages of 64 KiB or 64 of 256 KiB in
 * every run, at 0.4x to 0.5x of that through 16 of 4 MiB (64 MiB of
 * memory, the working set), 0.29 s through 64 of 1 MiB against 0.15 s; 8
 * B records 64 B apart over 4 MiB, the same, were as fast through 16
 * pages of 64 KiB as through 16 of 1 MiB (0.0267 s against 0.0316 s,
 * 0.0496 s against 0.0473 s, ...), and 5% to 40% slower through pages of
 * 256 KiB (the working set's sixteenth), never faster: their miss was 64
 * pages read 8 ahead (0.068-0.079 s against 0.050-0.052 s with 2 ahead),
 * not the page size. */
#define WS_PAGES 16
#define WS_PAGE_MAX (1024 * 1024)
#define ONCE_PAGES 16
#define PAGES_MIN 4
#define PAGES_MAX 64
/* Read-ahead: a quarter of the pages, 1 or 2: the same 8 B records read
 * back with 2 pages ahead took 0.050 s, with 4 0.061-0.097 s, with 8
 * 0.068-0.098 s, where the machine was busy (equal when it was idle). */
#define AHEAD_MAX 2
#define RANDOM_CACHE_MAX (64 * 1024 * 1024) /* random requests: cached only when the working set fits */
#define RANDOM_SMALL 8192 /* ... and they are smaller (measured: 8 KiB random writes gained nothing) */
#define URING_DEPTH 64
/* Strided requests with gaps: the cache moves the gaps too (read ahead,
 * or sieved), which pays only while a gap costs less than the call saved.
 * Measured with bench/strided on a local disk (records of 8 B to 4 KiB):
 * read ahead gained up to a stride of 2 KiB and lost from 4 KiB (0.85x,
 * 0.45x at 8 KiB); a cache without .sieve under strided writes lost (0.6x
 * to 0.9x).  Sieved writes gain up to a stride of 16 KiB: bench/strided,
 * medians of 11, 64 KiB and 256 KiB pages against raw, wrote 1.6x to 2.2x
 * faster at 16 KiB (records of 256 B, 1 KiB, 4 KiB), 1.0x to 1.1x at 32
 * KiB (4 KiB records), and 0.7x to 0.8x at 64 KiB (16 KiB records); make
 * bench-advise's strided-4K (4 KiB records 16 KiB apart, written then
 * read back, the program preloaded, wall time) ran at 1.15x of raw
 * through cache.sieve:64k:16:2 and 1.07x through cache.sieve:1m:16:2,
 * medians of 45, where an empty advice ran at 0.95x.  (An earlier
 * measurement put the limit at 4 KiB, with bench/strided run through
 * libtool's wrapper script, whose shell the preload loaded into every
 * timed run.)
 * Reads of a file written sieved by the process itself are the exception:
 * 256 B records 4 KiB apart, written through cache.sieve and read back,
 * read 1.3x faster than raw (a file written in 512 KiB requests), while
 * the same reads of a file written in large requests ran at 0.78x to
 * 0.95x through a cache: so strided reads of a file that the reading
 * process alone writes, its writes sieved, are cached up to the sieve's
 * stride (STRIDE_SIEVE_MAX), other strided reads up to STRIDE_READ_MAX.
 * Where requests wait for a slow file system a call costs 100 us or more:
 * gaps 16 times as large are then still cheaper (not measured here). */
#define STRIDE_READ_MAX 2048
#define STRIDE_SIEVE_MAX 16384
#define SLOW_STRIDE_FACTOR 16

enum kind { K_NONE, K_CACHE, K_SIEVE };

/* The statistics of a group of files (or of one file). */
struct stats {
	uint64_t calls[2], bytes[2], seq[2], strided[2], random[2], hist[2][ADV_BUCKETS];
	double seconds[2];
	struct adv_dir strides[2]; /* only .stride[] used: candidates over the group */
	int nfiles, max_writers, max_procs;
	int64_t ws;            /* the working set of the largest file */
	double ws_sum;         /* ... and of all, added up */
	int ws_from_size;      /* ... taken from its size (else from bytes moved) */
	int fs_local;          /* 1 all local, 0 one is network/parallel, -1 unknown */
	int pseudo;            /* one is on /proc, /sys, ... */
	int shared_rw;         /* one is read by a process while another writes it */
	int foreign_reads;     /* one is read by a process that is not its only writer */
	char fstype[64];
};

struct choice {
	enum kind kind;
	int uring;
	int64_t page;
	int pages, ahead;
	uint64_t before, after; /* system calls seen, estimated with the stack */
	char reason[10][256];
	int nreasons;
};

void adv_size_str(char *buf, size_t len, double b)
{
	if (b >= 1024.0 * MiB)
		snprintf(buf, len, "%.1f GiB", b / (1024.0 * MiB));
	else if (b >= MiB)
		snprintf(buf, len, "%.4g MiB", b / MiB);
	else if (b >= KiB)
		snprintf(buf, len, "%.4g KiB", b / KiB);
	else
		snprintf(buf, len, "%.0f B", b);
}

/* "64k", "1m": a page size in the spec's units. */
static void spec_size(char *buf, size_t len, int64_t v)
{
	if (v % (1024 * 1024) == 0)
		snprintf(buf, len, "%lldm", (long long)(v / (1024 * 1024)));
	else if (v % 1024 == 0)
		snprintf(buf, len, "%lldk", (long long)(v / 1024));
	else
		snprintf(buf, len, "%lld", (long long)v);
}

static double bucket_low(int b)
{
	return b == 0 ? 0.0 : ldexp(1.0, b - 1);
}

/* The median request size: the lower bound of the bucket holding it. */
static double median(const uint64_t *hist)
{
	uint64_t total = 0, seen = 0;

	for (int b = 0; b < ADV_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	for (int b = 0; b < ADV_BUCKETS; b++) {
		seen += hist[b];
		if (seen * 2 >= total)
			return bucket_low(b);
	}
	return 0;
}

/* The typical request of direction d: the median bucket, but no less than
 * its lower bound and no more than the mean when the mean is inside it. */
static double request_size(const struct stats *s, int d)
{
	double med = median(s->hist[d]), mean = s->calls[d] ? (double)s->bytes[d] / (double)s->calls[d] : 0;
	if (mean > med && mean < 2 * med)
		return mean;
	return med;
}

static int64_t dominant_stride(const struct stats *s, int d)
{
	const struct adv_dir *c = &s->strides[d];
	int best = 0;

	for (int i = 1; i < ADV_STRIDES; i++)
		if (c->stride[i].weight > c->stride[best].weight)
			best = i;
	return c->stride[best].weight ? c->stride[best].stride : 0;
}

static int64_t pow2_at_least(double v)
{
	int64_t p = 1;
	while ((double)p < v && p < ((int64_t)1 << 40))
		p <<= 1;
	return p;
}

static double share(uint64_t part, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t t = a + b + c;
	return t ? (double)part / (double)t : 0;
}

static void add_file(struct stats *s, const struct adv_file *f)
{
	int64_t ws;
	int from_size = 0;

	for (int d = 0; d < 2; d++) {
		const struct adv_dir *x = &f->dir[d];
		s->calls[d] += x->calls;
		s->bytes[d] += x->bytes;
		s->seconds[d] += x->seconds;
		s->seq[d] += x->sequential;
		s->strided[d] += x->strided;
		s->random[d] += x->random;
		for (int b = 0; b < ADV_BUCKETS; b++)
			s->hist[d][b] += x->hist[b];
		for (int i = 0; i < ADV_STRIDES; i++) {
			/* the same bookkeeping as the log's: most weight wins */
			struct adv_dir *c = &s->strides[d];
			int k, least = 0;
			if (!x->stride[i].weight)
				continue;
			for (k = 0; k < ADV_STRIDES; k++)
				if (c->stride[k].weight && c->stride[k].stride == x->stride[i].stride)
					break;
			if (k < ADV_STRIDES) {
				c->stride[k].weight += x->stride[i].weight;
				continue;
			}
			for (k = 0; k < ADV_STRIDES; k++)
				if (c->stride[k].weight < c->stride[least].weight)
					least = k;
			if (c->stride[least].weight < x->stride[i].weight)
				c->stride[least] = x->stride[i];
		}
	}
	if (f->nwriters > s->max_writers)
		s->max_writers = f->nwriters;
	if (f->nreaders > s->max_procs)
		s->max_procs = f->nreaders;
	if (f->nwriters > s->max_procs)
		s->max_procs = f->nwriters;
	if (f->size > 0) {
		ws = f->size;
		from_size = 1;
	} else {
		/* the most one process moved or strode over in one summary */
		ws = f->span;
	}
	s->ws_sum += ws > 0 ? (double)ws : 0;
	if (ws > s->ws) {
		s->ws = ws;
		s->ws_from_size = from_size;
	}
	s->pseudo |= f->pseudo;
	s->shared_rw |= f->shared_rw;
	/* read only by the one process that writes it (or never written)? */
	for (int i = 0; i < f->nreaders && f->nwriters > 0; i++)
		if (f->nwriters > 1 || f->readers[i] != f->writers[0])
			s->foreign_reads = 1;
	if (s->nfiles == 0) {
		s->fs_local = f->fs_local;
		snprintf(s->fstype, sizeof s->fstype, "%s", f->fstype);
	} else {
		if (f->fs_local == 0 || (f->fs_local == -1 && s->fs_local == 1))
			s->fs_local = f->fs_local;
		if (strcmp(s->fstype, f->fstype) != 0 && !strstr(s->fstype, ", "))
			snprintf(s->fstype + strlen(s->fstype), sizeof s->fstype - strlen(s->fstype), ", %s",
				 f->fstype);
	}
	s->nfiles++;
}

__attribute__((format(printf, 2, 3))) static void why(struct choice *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nreasons >= 10)
		return;
	va_start(ap, fmt);
	vsnprintf(c->reason[c->nreasons++], sizeof c->reason[0], fmt, ap);
	va_end(ap);
}

static double latency_us(const struct stats *s)
{
	uint64_t calls = s->calls[0] + s->calls[1];
	return calls ? (s->seconds[0] + s->seconds[1]) / (double)calls * 1e6 : 0;
}

/* Estimated system calls of direction d with the chosen cache. */
static uint64_t calls_after(const struct stats *s, const struct choice *c, int d, int random_cached)
{
	double n = (double)s->calls[d], after;
	double seqsh = share(s->seq[d], s->seq[d], s->strided[d], s->random[d]);
	double strsh = share(s->strided[d], s->seq[d], s->strided[d], s->random[d]);
	double rndsh = share(s->random[d], s->seq[d], s->strided[d], s->random[d]);
	double stride = fabs((double)dominant_stride(s, d));
	double page = (double)c->page;

	if (!s->calls[d])
		return 0;
	after = ceil((double)s->bytes[d] * seqsh / page);
	/* strided runs: pages read ahead, or sieved writes, hold page/stride records */
	if ((d == 0 || c->kind == K_SIEVE) && stride > 0 && stride < page)
		after += ceil(n * strsh * stride / page);
	else
		after += n * strsh;
	if (random_cached)
		after += fmin(n * rndsh, ceil((double)s->ws / page));
	else
		after += n * rndsh;
	if (after < 1)
		after = 1;
	return after < n ? (uint64_t)after : s->calls[d];
}

/* Does the data come back: are the bytes moved at least twice the
 * working sets of the files? */
static int comes_back(const struct stats *s)
{
	return (double)(s->bytes[0] + s->bytes[1]) >= 2.0 * s->ws_sum;
}

/* The page that a working set asks for where the data comes back: a
 * sixteenth of it, a power of two up to WS_PAGE_MAX; 0 for data passed
 * about once. */
static int64_t ws_page(const struct stats *s)
{
	if (!comes_back(s))
		return 0;
	int64_t p = pow2_at_least((double)s->ws / WS_PAGES);
	return p < WS_PAGE_MAX ? p : WS_PAGE_MAX;
}

/* The stride of writes that .sieve could fill the gaps of: half of the
 * writes or more strided, with gaps (the stride larger than the
 * record), at most a quarter random.  0 when the writes are not such. */
static int64_t sieve_stride(const struct stats *s)
{
	double wstr = share(s->strided[1], s->seq[1], s->strided[1], s->random[1]);
	double wrnd = share(s->random[1], s->seq[1], s->strided[1], s->random[1]);
	int64_t st = dominant_stride(s, 1);

	st = st < 0 ? -st : st;
	if (!s->calls[1] || wstr < 0.5 || st <= (int64_t)request_size(s, 1) || wrnd > 0.25)
		return 0;
	return st;
}

/* The rules.  Fills c; its reasons say why for every choice. */
static void decide(const struct stats *s, const struct adv_options *o, struct choice *c)
{
	char a[32], b[32], w[32];
	uint64_t n = s->calls[0] + s->calls[1];
	int dom = s->calls[1] >= s->calls[0]; /* the direction with more requests */
	const char *dn = dom ? "writes" : "reads";
	double r = request_size(s, dom);
	double ordered = 1.0 - share(s->random[dom], s->seq[dom], s->strided[dom], s->random[dom]);
	double strsh = share(s->strided[dom], s->seq[dom], s->strided[dom], s->random[dom]);
	int64_t stride = dominant_stride(s, dom), astride = stride < 0 ? -stride : stride;
	double lat = latency_us(s);
	int random_cached = 0;

	memset(c, 0, sizeof *c);
	c->before = n;
	c->after = n;
	adv_size_str(a, sizeof a, r);
	adv_size_str(w, sizeof w, (double)s->ws);
	if (s->pseudo) {
		why(c, "uncached: on %s, whose contents the kernel makes as they are read", s->fstype);
		return;
	}
	if (n < (uint64_t)MIN_CALLS * (s->nfiles > 1 ? (uint64_t)s->nfiles : 1)) {
		why(c, "uncached: only %llu requests%s, too few to matter", (unsigned long long)n,
		    s->nfiles > 1 ? " over these files" : "");
		return;
	}
	int slow = lat >= o->latency_us && s->fs_local != 1;
	if (r >= (slow ? LARGE_REMOTE : LARGE_LOCAL)) {
		adv_size_str(b, sizeof b, slow ? LARGE_REMOTE : LARGE_LOCAL);
		if (!dom && ordered >= 0.5)
			why(c, "uncached: read sequentially in large requests (median %s, %s or more%s): the kernel's "
			    "read-ahead serves them, a cache would only add a copy", a, b, slow ? "" : " here");
		else
			why(c, "uncached: the %s are large already (median %s, %s or more%s): a cache would only add a "
			    "copy", dn, a, b, slow ? "" : " here");
		return;
	}
	/* the page: many records in one, several strides, and a sixteenth of
	 * a working set that comes back */
	int64_t page = pow2_at_least(RECORDS_PER_PAGE * (r > 1 ? r : 1));
	if (strsh >= 0.5 && astride > 0 && astride < PAGE_MAX)
		page = page > pow2_at_least(8.0 * (double)astride) ? page : pow2_at_least(8.0 * (double)astride);
	int64_t wsp = ws_page(s);
	if (wsp > page)
		page = wsp;
	if (page < PAGE_MIN)
		page = PAGE_MIN;
	if (page > PAGE_MAX)
		page = PAGE_MAX;
	/* strided reads of a file that the reading process alone writes,
	 * its writes sieved: read back ahead up to the sieve's stride */
	int64_t sieved = sieve_stride(s);
	int own_sieved = !s->foreign_reads && s->max_writers == 1 && sieved > 0 && sieved < page &&
			 sieved <= STRIDE_SIEVE_MAX * (slow ? SLOW_STRIDE_FACTOR : 1);
	/* strided directions with gaps: what moving the gaps costs */
	for (int d = 0; d < 2; d++) {
		double dstr = share(s->strided[d], s->seq[d], s->strided[d], s->random[d]);
		double dr = request_size(s, d);
		int64_t ds = dominant_stride(s, d), lim;
		const char *ddn = d ? "writes" : "reads";
		if (ds < 0)
			ds = -ds;
		if (s->calls[d] * 4 < n || dstr < 0.5 || (double)ds <= dr)
			continue; /* a minor direction, not strided, or no gaps */
		adv_size_str(b, sizeof b, (double)ds);
		lim = (d || own_sieved ? STRIDE_SIEVE_MAX : STRIDE_READ_MAX) * (slow ? SLOW_STRIDE_FACTOR : 1);
		if (d == 1 && s->max_writers > 1) {
			why(c, "uncached: %d processes write strided records (stride %s) with gaps between them: "
			    ".sieve would overwrite the others' bytes, and a cache without it saves no call "
			    "(measured 0.6x to 0.9x)", s->max_writers, b);
			return;
		}
		if (ds > lim) {
			adv_size_str(w, sizeof w, (double)lim);
			why(c, "uncached: strided %s with a stride of %s (more than %s%s): moving the gaps costs more "
			    "than the calls saved", ddn, b, w, slow ? "" : " on this file system");
			return;
		}
		if (d == 0 && ds > STRIDE_READ_MAX * (slow ? SLOW_STRIDE_FACTOR : 1))
			why(c, "cache: strided reads with a stride of %s of a file that only the reading process "
			    "writes, its writes sieved: they read back whole pages ahead (measured 1.3x of raw "
			    "at a stride of 4 KiB, where the reads of a file written otherwise lost)", b);
	}
	adv_size_str(w, sizeof w, (double)s->ws);
	if (ordered < 0.5) {
		/* random: only a working set that fits, written, or read again */
		adv_size_str(b, sizeof b, RANDOM_CACHE_MAX);
		if (s->ws > RANDOM_CACHE_MAX) {
			why(c, "uncached: random %s (%.0f%%) over a working set of %s, more than a cache could hold (%s)",
			    dn, 100.0 * (1.0 - ordered), w, b);
			return;
		}
		if (r >= RANDOM_SMALL) {
			adv_size_str(b, sizeof b, RANDOM_SMALL);
			why(c, "uncached: random %s (%.0f%%) of %s: from %s on, absorbing them does not pay", dn,
			    100.0 * (1.0 - ordered), a, b);
			return;
		}
		if (!dom && s->bytes[0] < 2 * (uint64_t)(s->ws > 0 ? s->ws : 1)) {
			why(c, "uncached: random reads (%.0f%%) that do not come back to the same data: a page "
			    "would read more than was asked", 100.0 * (1.0 - ordered));
			return;
		}
		page = pow2_at_least(16 * (r > 1 ? r : 1));
		/* reads that come back load the whole working set in the end:
		 * in the fewest requests (a sixteenth of it, up to 1 MiB) */
		if (!dom && ws_page(s) > page)
			page = ws_page(s);
		page = page < PAGE_MIN ? PAGE_MIN : page > 1024 * 1024 ? 1024 * 1024 : page;
		random_cached = 1;
		spec_size(b, sizeof b, page);
		why(c, "cache: random small %s (median %s) over a working set of %s that fits in the cache: "
		    "%s are absorbed and each page goes to the file system once", dn, a, w,
		    dom ? "rewrites" : "re-reads");
	} else if (strsh >= 0.5 && astride >= page) {
		adv_size_str(b, sizeof b, (double)astride);
		why(c, "uncached: strided %s with a stride of %s: a page would hold one record", dn, b);
		return;
	} else {
		char sp[32];
		spec_size(sp, sizeof sp, page);
		if (strsh >= 0.5 && astride) {
			adv_size_str(b, sizeof b, (double)astride);
			why(c, "cache: small strided %s (median %s, stride %s): a page of %s holds %lld records",
			    dn, a, b, sp, (long long)(page / astride));
		} else {
			why(c, "cache: small sequential %s (median %s): a page of %s holds %.0f of them", dn, a, sp,
			    (double)page / (r > 1 ? r : 1));
		}
	}
	c->kind = K_CACHE;
	c->page = page;
	int64_t want = (s->ws + page - 1) / page;
	int once = !random_cached && !comes_back(s);
	int most = once ? ONCE_PAGES : PAGES_MAX;
	c->pages = want < PAGES_MIN ? PAGES_MIN : want > most ? most : (int)want;
	if (random_cached && want > c->pages)
		c->pages = (int)(want > RANDOM_CACHE_MAX / page ? RANDOM_CACHE_MAX / page : want);
	spec_size(b, sizeof b, page);
	if ((int64_t)c->pages * page >= s->ws)
		why(c, "pages: %d of %s for a working set of %s (all of it)", c->pages, b, w);
	else if (once) {
		char m[32];
		adv_size_str(m, sizeof m, (double)(s->bytes[0] + s->bytes[1]));
		why(c, "pages: %d of %s: the data passes about once (%s moved over a working set of %s): "
		    "the cache holds what is being filled and read ahead", c->pages, b, m, w);
	} else
		why(c, "pages: %d of %s for a working set of %s (bounded)", c->pages, b, w);
	/* read-ahead: only for reads that are sequential or strided */
	double rordered = 1.0 - share(s->random[0], s->seq[0], s->strided[0], s->random[0]);
	if (s->calls[0] && rordered >= 0.5 && !random_cached) {
		c->ahead = c->pages / 4;
		c->ahead = c->ahead < 1 ? 1 : c->ahead > AHEAD_MAX ? AHEAD_MAX : c->ahead;
		why(c, "read-ahead: %d pages: reads are %.0f%% sequential or strided", c->ahead, 100.0 * rordered);
	} else {
		why(c, "read-ahead: none: %s", s->calls[0] ? "reads are random" : "nothing is read");
	}
	/* .sieve: small strided writes with gaps, one writer, no random writes */
	double wstr = share(s->strided[1], s->seq[1], s->strided[1], s->random[1]);
	double wrnd = share(s->random[1], s->seq[1], s->strided[1], s->random[1]);
	int64_t ws_stride = sieved;
	if (!s->calls[1]) {
		/* nothing to say about sieving */
	} else if (!sieved) {
		why(c, "no .sieve: the writes leave no regular gaps to fill (%.0f%% strided, %.0f%% random)",
		    100.0 * wstr, 100.0 * wrnd);
	} else if (s->max_writers > 1) {
		why(c, "no .sieve: %d processes write one file: filling the gaps between one process's records "
		    "would need their lock and read, write-behind alone is safe", s->max_writers);
	} else if (ws_stride >= page) {
		why(c, "no .sieve: the stride is a page or more, a page holds one record");
	} else if (ws_stride > STRIDE_SIEVE_MAX * (slow ? SLOW_STRIDE_FACTOR : 1)) {
		adv_size_str(b, sizeof b, (double)ws_stride);
		why(c, "no .sieve: the writes' stride of %s is too large for writing the gaps to pay", b);
	} else {
		c->kind = K_SIEVE;
		why(c, ".sieve: one process writes strided records (%.0f%%) with gaps: each page goes out as one "
		    "write, its gaps filled with what the file holds", 100.0 * wstr);
	}
	/* uring: only where requests are slow enough for several in flight to pay */
	if (lat < o->latency_us) {
		why(c, "no uring: mean request latency %.1f us < %.0f us", lat, o->latency_us);
	} else if (s->fs_local == 1) {
		why(c, "no uring: %s is a local file system (mean request latency %.1f us)", s->fstype, lat);
	} else {
		c->uring = 1;
		why(c, "uring:%d below the cache: mean request latency %.1f us on %s: requests in flight overlap",
		    URING_DEPTH, lat, s->fs_local == 0 ? s->fstype : "an unknown file system");
	}
	if (s->shared_rw)
		why(c, "note: a process reads what another writes: it sees the other's cached writes after "
		    "their flush points (fsync, close, MPI's sync and barriers), not at once");
	c->after = calls_after(s, c, 0, random_cached) + calls_after(s, c, 1, random_cached);
}

/* ---- groups --------------------------------------------------------------- */

struct group {
	int *files, n;
	enum kind kind;
	int uring;
	char *pattern;   /* NULL: one literal entry per file */
	int literal;
};

static const char *extension(const char *base)
{
	const char *dot = strrchr(base, '.');
	return dot && dot != base ? dot : "";
}

/* A name made safe for a spec entry and a shell's single quotes: white
 * space, parentheses and quotes become '?', glob characters are escaped. */
static char *literal(const char *name)
{
	size_t n = strlen(name);
	char *out = malloc(2 * n + 1), *p = out;

	if (!out)
		return NULL;
	for (; *name; name++) {
		char ch = *name;
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '(' || ch == ')' || ch == '\'' || ch == '\r' ||
		    ch == '\f' || ch == '\v')
			*p++ = '?';
		else if (ch == '*' || ch == '?' || ch == '[' || ch == '\\') {
			*p++ = '\\';
			*p++ = ch;
		} else
			*p++ = ch;
	}
	*p = '\0';
	return out;
}

/* Does pattern match no file outside group g (of those with I/O)? */
static int only_group(const char *pattern, const struct adv_log *log, const int *key, int g_key)
{
	for (int i = 0; i < log->nfiles; i++)
		if (key[i] >= 0 && key[i] != g_key && fnmatch(pattern, log->file[i].base, 0) == 0)
			return 0;
	return 1;
}

static int has_bad_char(const char *s)
{
	return strpbrk(s, " \t\n\r\f\v()'*?[\\") != NULL;
}

/* The glob of group g: "*.ext", "prefix*suffix", or NULL for literal names. */
static char *infer_glob(const struct adv_log *log, const struct group *g, const int *key, int g_key)
{
	const char *first = log->file[g->files[0]].base, *ext = extension(first);
	size_t pre, suf, len0 = strlen(first);
	char *pat;

	if (g->n < 2)
		return NULL;
	for (int i = 0; i < g->n; i++)
		if (has_bad_char(log->file[g->files[i]].base))
			return NULL;
	if (*ext) {
		size_t n = strlen(ext) + 2;
		if (!(pat = malloc(n)))
			return NULL;
		snprintf(pat, n, "*%s", ext);
		if (only_group(pat, log, key, g_key))
			return pat;
		free(pat);
	}
	/* common prefix and suffix, cut back to the digits that vary */
	pre = len0;
	suf = len0;
	for (int i = 1; i < g->n; i++) {
		const char *b = log->file[g->files[i]].base;
		size_t lb = strlen(b), k = 0;
		while (k < pre && k < lb && b[k] == first[k])
			k++;
		pre = k;
		k = 0;
		while (k < suf && k < lb && b[lb - 1 - k] == first[len0 - 1 - k])
			k++;
		suf = k;
	}
	while (pre > 0 && first[pre - 1] >= '0' && first[pre - 1] <= '9')
		pre--;
	while (suf > 0 && first[len0 - suf] >= '0' && first[len0 - suf] <= '9')
		suf--;
	for (int i = 0; i < g->n; i++) {
		size_t lb = strlen(log->file[g->files[i]].base);
		while (pre + suf > lb) {
			if (suf > 0)
				suf--;
			else
				pre--;
		}
	}
	if (pre + suf == 0)
		return NULL;
	if (!(pat = malloc(pre + suf + 2)))
		return NULL;
	memcpy(pat, first, pre);
	pat[pre] = '*';
	memcpy(pat + pre + 1, first + len0 - suf, suf);
	pat[pre + 1 + suf] = '\0';
	if (only_group(pat, log, key, g_key))
		return pat;
	free(pat);
	return NULL;
}

static void print_stats(FILE *out, const struct stats *s)
{
	static const char *const dname[2] = { "read", "write" };
	uint64_t n = s->calls[0] + s->calls[1];
	char a[32], b[32];

	adv_size_str(a, sizeof a, (double)s->bytes[0]);
	adv_size_str(b, sizeof b, (double)s->bytes[1]);
	fprintf(out, "  requests:    %llu reads (%s), %llu writes (%s): %.0f%% writes\n",
		(unsigned long long)s->calls[0], a, (unsigned long long)s->calls[1], b,
		n ? 100.0 * (double)s->calls[1] / (double)n : 0.0);
	for (int d = 0; d < 2; d++) {
		if (!s->calls[d])
			continue;
		adv_size_str(a, sizeof a, median(s->hist[d]));
		fprintf(out, "  %-5s sizes: median %s;", dname[d], a);
		for (int k = 0; k < ADV_BUCKETS; k++) {
			if (!s->hist[d][k])
				continue;
			adv_size_str(a, sizeof a, bucket_low(k));
			fprintf(out, " %s: %llu", a, (unsigned long long)s->hist[d][k]);
		}
		fprintf(out, "\n");
		int64_t st = dominant_stride(s, d);
		adv_size_str(a, sizeof a, fabs((double)st));
		fprintf(out, "  %-5s pattern: %.0f%% sequential, %.0f%% strided%s%s%s%s, %.0f%% random\n", dname[d],
			100.0 * share(s->seq[d], s->seq[d], s->strided[d], s->random[d]),
			100.0 * share(s->strided[d], s->seq[d], s->strided[d], s->random[d]),
			st ? " (stride " : "", st ? (st < 0 ? "-" : "") : "", st ? a : "", st ? ")" : "",
			100.0 * share(s->random[d], s->seq[d], s->strided[d], s->random[d]));
	}
	adv_size_str(a, sizeof a, (double)s->ws);
	fprintf(out, "  working set: %s (the largest file, %s)\n", a,
		s->ws_from_size ? "from its size after the run" : "from the bytes one open moved");
	fprintf(out, "  processes:   at most %d per file, %d writing%s\n", s->max_procs, s->max_writers,
		s->max_writers > 1 ? " (written by more than one process)" : "");
	fprintf(out, "  file system: %s, mean request latency %.1f us\n", s->fstype, latency_us(s));
}

int adv_advise(const struct adv_log *log, const struct adv_options *o, FILE *out)
{
	int *key = calloc((size_t)log->nfiles + 1, sizeof *key);
	struct group *g = calloc((size_t)log->nfiles + 1, sizeof *g);
	int ng = 0, nio = 0, rc = 0, nentries = 0;
	size_t speclen = 0, speccap = 256;
	char *spec = malloc(speccap);

	if (!key || !g || !spec) {
		rc = -ENOMEM;
		goto out;
	}
	spec[0] = '\0';
	/* each file's own verdict, and the groups: same extension, same verdict */
	for (int i = 0; i < log->nfiles; i++) {
		const struct adv_file *f = &log->file[i];
		struct stats s = {0};
		struct choice c;
		int k;

		key[i] = -1;
		if (!f->dir[0].calls && !f->dir[1].calls)
			continue;
		nio++;
		add_file(&s, f);
		decide(&s, o, &c);
		for (k = 0; k < ng; k++) {
			const struct adv_file *h = &log->file[g[k].files[0]];
			if (g[k].kind == c.kind && g[k].uring == c.uring && strcmp(extension(h->base), extension(f->base)) == 0)
				break;
		}
		if (k == ng) {
			g[k].kind = c.kind;
			g[k].uring = c.uring;
			if (!(g[k].files = calloc((size_t)log->nfiles, sizeof(int)))) {
				rc = -ENOMEM;
				goto out;
			}
			ng++;
		}
		g[k].files[g[k].n++] = i;
		key[i] = k;
	}
	if (!o->quiet)
		fprintf(out, "%s: %d file%s traced in %d process%s (%d summar%s), %d read or written%s\n", ADV_NAME,
			log->nfiles, log->nfiles == 1 ? "" : "s", log->nprocs, log->nprocs == 1 ? "" : "es",
			log->nrecords, log->nrecords == 1 ? "y" : "ies", nio, o->partial ? "; the trace is PARTIAL" : "");
	if (nio == 0) {
		fprintf(out, "%s: %s: nothing to advise\n", ADV_NAME,
			log->nfiles ? "no regular file was read or written through ffio (descriptors 0, 1 and 2 are "
				      "not traced)"
				    : "the program opened no regular file");
		fprintf(out, "FF_IO_OPTS=''\n");
		goto out;
	}
	for (int k = 0; k < ng; k++)
		g[k].pattern = infer_glob(log, &g[k], key, k);
	/* literal names first, then prefix globs, then extension globs */
	for (int pass = 0; pass < 3; pass++)
		for (int k = 0; k < ng; k++) {
			struct group *gr = &g[k];
			int is_pass = !gr->pattern ? 0 : gr->pattern[0] == '*' ? 2 : 1;
			struct stats s = {0};
			struct choice c;
			char stack[128] = "", sp[32];

			if (is_pass != pass)
				continue;
			for (int i = 0; i < gr->n; i++)
				add_file(&s, &log->file[gr->files[i]]);
			decide(&s, o, &c);
			/* never more than each file alone was advised */
			if (c.kind > gr->kind) {
				why(&c, "but each of these files alone is advised %s: so is the group",
				    gr->kind == K_NONE ? "uncached" : "no .sieve");
				c.kind = gr->kind;
				c.after = c.before;
			}
			if (c.uring && !gr->uring) {
				why(&c, "but not each of these files alone was advised uring: no uring");
				c.uring = 0;
			}
			if (c.kind != K_NONE) {
				spec_size(sp, sizeof sp, c.page);
				snprintf(stack, sizeof stack, "cache%s:%s:%d:%d%s", c.kind == K_SIEVE ? ".sieve" : "", sp,
					 c.pages, c.ahead, c.uring ? ", uring:64" : "");
			}
			if (!o->quiet) {
				fprintf(out, "\ngroup %s: %d file%s", gr->pattern ? gr->pattern : log->file[gr->files[0]].base,
					gr->n, gr->n > 1 ? "s" : "");
				for (int i = 0; i < gr->n && i < 4; i++)
					fprintf(out, "%s%s", i ? ", " : " (", log->file[gr->files[i]].given);
				fprintf(out, "%s\n", gr->n > 4 ? ", ...)" : ")");
				print_stats(out, &s);
				fprintf(out, "  advice:      %s\n", c.kind == K_NONE ? "uncached (no entry)" : stack);
				for (int i = 0; i < c.nreasons; i++)
					fprintf(out, "    - %s\n", c.reason[i]);
				if (c.kind != K_NONE && c.after < c.before)
					fprintf(out, "  system calls: %llu -> %llu (%.1fx fewer, estimated)\n",
						(unsigned long long)c.before, (unsigned long long)c.after,
						c.after ? (double)c.before / (double)c.after : 0.0);
				else if (c.kind != K_NONE)
					fprintf(out, "  system calls: %llu -> about as many (the gain is write-behind, "
						"not fewer calls)\n", (unsigned long long)c.before);
			}
			if (c.kind == K_NONE)
				continue;
			for (int i = 0; i < (gr->pattern ? 1 : gr->n); i++) {
				char *pat = gr->pattern ? strdup(gr->pattern) : literal(log->file[gr->files[i]].base);
				size_t need;
				if (!pat) {
					rc = -ENOMEM;
					goto out;
				}
				need = speclen + strlen(pat) + strlen(stack) + 4;
				if (need > speccap) {
					char *ns = realloc(spec, speccap = need * 2);
					if (!ns) {
						free(pat);
						rc = -ENOMEM;
						goto out;
					}
					spec = ns;
				}
				speclen += (size_t)snprintf(spec + speclen, speccap - speclen, "%s%s(%s)",
							    nentries++ ? " " : "", pat, stack);
				free(pat);
			}
		}
	if (!o->quiet)
		fprintf(out, "\n");
	if (nentries == 0)
		fprintf(out, "%s: no file needs a stack: every file is best left uncached (reasons above)\n", ADV_NAME);
	fprintf(out, "FF_IO_OPTS='%s'\n", spec);
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "%s: out of memory\n", ADV_NAME);
	for (int k = 0; k < ng; k++) {
		free(g[k].files);
		free(g[k].pattern);
	}
	free(g);
	free(key);
	free(spec);
	return rc;
}
