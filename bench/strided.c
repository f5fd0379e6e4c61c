/* bench/strided.c -- strided record I/O, raw system calls against ffio
 * stacks: COUNT records of SIZE bytes at a STRIDE, written with lseek+write
 * (or pwrite), then read back the same way.  Prints, per case, the median
 * time of the write phase (to the file system: including the final flush),
 * of the read phase, the requests that reached the system, the speed-up
 * against raw and that speed-up as a fraction of the ceiling's.  The
 * written file is checked byte for byte after each run.
 *
 *   strided [-r SIZE] [-s STRIDE] [-n COUNT] [-p] [-k REPEATS] [-f FILE] [-m] [SPEC...]
 *
 * -p: pwrite/pread instead of lseek+write/read.  SPECs are ffopen stacks
 * (default: "cache:1m:16:2" and "cache.sieve:1m:16:2").  -m: after the
 * table, one line per case for scripts, each value named, the case last
 * (a spec may hold spaces):
 *   RESULT write_s=S write_req=N read_s=S read_req=N runs=K case=LABEL
 * Scripts read these instead of the table's columns, whose order changes.
 * -P (plain): only the raw case, the file kept: a program for tracers
 * and preloading (bench/run-bench-advise), whose only file calls are
 * the plain POSIX ones; prints one line, the medians.
 *
 * The ceiling row is what no cache could beat: each record is copied into
 * a buffer as large as the span of the records (touched just before the
 * timing, huge pages where the kernel gives them, as the cache's memory),
 * and the span goes to the file in 512 KiB writes, each as soon as the
 * records have passed it; reading, the span comes in 1 MiB reads, each
 * when the first record in it is wanted, and each record is copied out.
 * No cache can do less: it must copy every record once and move the
 * span's bytes to or from the kernel, in calls as large as the machine
 * likes.  "of ceil" is the case's speed-up over raw divided by the
 * ceiling's (ceiling time / case time).  The cases run round robin
 * (repetition 1 of every case, then 2, ...), so that a busy spell of the
 * machine falls on all alike.  Timings are only indicative on a shared
 * machine.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ffio.h"

static size_t recsize = 256, stride = 4096, count = 32768;
static int use_pwrite, repeats = 3, machine, plain;
static const char *path = "strided.dat";

static void die(const char *what)
{
	fprintf(stderr, "strided: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fill(char *rec, size_t i)
{
	for (size_t k = 0; k < recsize; k++)
		rec[k] = (char)(i * 31 + k);
}

/* The file holds every record, zeros between (a new file each run). */
static void verify(void)
{
	char *rec = malloc(recsize), *got = malloc(recsize);
	int fd = open(path, O_RDONLY);
	if (fd < 0 || !rec || !got)
		die("verify");
	for (size_t i = 0; i < count; i++) {
		fill(rec, i);
		if (pread(fd, got, recsize, (off_t)(i * stride)) != (ssize_t)recsize ||
		    memcmp(rec, got, recsize) != 0) {
			fprintf(stderr, "strided: record %zu differs in the file\n", i);
			exit(1);
		}
	}
	/* Every case starts its timed phases with nothing left to write back
	 * from the one before (background writeback would blur the figures). */
	if (fsync(fd) < 0)
		die("fsync");
	close(fd);
	free(rec);
	free(got);
}

struct io {
	int (*open)(const char *, int, const char *);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	off_t (*seek)(int, off_t, int);
	int (*close)(int);
};

static int raw_open(const char *p, int flags, const char *spec)
{
	(void)spec;
	return open(p, flags, 0644);
}

static int ff_open(const char *p, int flags, const char *spec)
{
	return ffopen(p, flags, 0644, spec);
}

static const struct io raw_io = {raw_open, write, read, pwrite, pread, lseek, close};
static const struct io ff_io = {ff_open, ffwrite, ffread, ffpwrite, ffpread, ffseek, ffclose};

/* Requests the bottom layer issued (ffio), or -1. */
static long long below_requests(int fd, int raw)
{
	struct ffio_stats st[16];
	int n;
	if (raw)
		return -1;
	n = ffgetstats(fd, st, 16);
	if (n <= 0)
		return -1;
	return (long long)(st[n - 1].count[FFIO_STAT_READ] + st[n - 1].count[FFIO_STAT_WRITE]);
}

/* The ceiling's calls: 1 MiB reads; 512 KiB writes, as ffio's bottom
 * layers make them (libffio/real.c): on this project's machine a buffered
 * 1 MiB write into a new file is at times many times slower than two of
 * 512 KiB (0.2 s against 0.07 s for the 128 MiB span, same run). */
#define RPIECE ((size_t)1 << 20)
#define WPIECE ((size_t)512 << 10)

static char *span_buf; /* the ceiling's buffer: the span of the records */
static size_t span;

/* The ceiling's bytes [*done, upto) to or from the file in calls of piece
 * bytes (upto rounded up to a piece, or the span's end); counts the calls. */
static void span_io(int fd, int writing, size_t *done, size_t upto, long long *calls)
{
	size_t piece = writing ? WPIECE : RPIECE;
	while (*done < upto) {
		size_t n = span - *done < piece ? span - *done : piece;
		ssize_t r = writing ? pwrite(fd, span_buf + *done, n, (off_t)*done)
				    : pread(fd, span_buf + *done, n, (off_t)*done);
		if (r != (ssize_t)n)
			die(writing ? "pwrite" : "pread");
		*done += n;
		(*calls)++;
	}
}

struct result {
	double w, r;          /* seconds */
	long long wreq, rreq; /* requests to the system */
};

enum kind { RAW, CEILING, STACK };

/* One repetition of one case: the write phase, the check, the read phase. */
static struct result run_case(enum kind kind, const char *spec, char *rec)
{
	const struct io *io = kind == STACK ? &ff_io : &raw_io;
	long long calls = (long long)count * (use_pwrite ? 1 : 2);
	struct result res = {0, 0, calls, calls};
	size_t done = 0;
	int fd = io->open(path, O_RDWR | O_CREAT | O_TRUNC, spec);
	if (fd < 0)
		die("open");
	if (kind == CEILING) {
		memset(span_buf, 0, span); /* touched now: memory touched long ago can be slow again */
		res.wreq = res.rreq = 0;
	}
	double t0 = bench_now();
	for (size_t i = 0; i < count; i++) {
		off_t off = (off_t)(i * stride);
		fill(rec, i);
		if (kind == CEILING) {
			memcpy(span_buf + off, rec, recsize);
			/* the pieces the records have passed */
			span_io(fd, 1, &done, ((size_t)off + recsize) / WPIECE * WPIECE, &res.wreq);
		} else if (use_pwrite) {
			if (io->pwrite(fd, rec, recsize, off) != (ssize_t)recsize)
				die("pwrite");
		} else if (io->seek(fd, off, SEEK_SET) != off || io->write(fd, rec, recsize) != (ssize_t)recsize) {
			die("lseek+write");
		}
	}
	if (kind == CEILING)
		span_io(fd, 1, &done, span, &res.wreq);
	if (kind == STACK && ffflush(fd) < 0)
		die("ffflush");
	res.w = bench_now() - t0;
	if (kind == STACK)
		res.wreq = below_requests(fd, 0);
	if (io->close(fd) < 0)
		die("close");
	verify();

	fd = io->open(path, O_RDONLY, spec);
	if (fd < 0)
		die("open for reading");
	if (kind == CEILING)
		memset(span_buf, 0, span);
	done = 0;
	t0 = bench_now();
	for (size_t i = 0; i < count; i++) {
		off_t off = (off_t)(i * stride);
		if (kind == CEILING) {
			/* the pieces up to this record's end, rounded up */
			span_io(fd, 0, &done, (size_t)off + recsize, &res.rreq);
			memcpy(rec, span_buf + off, recsize);
		} else if (use_pwrite) {
			if (io->pread(fd, rec, recsize, off) != (ssize_t)recsize)
				die("pread");
		} else if (io->seek(fd, off, SEEK_SET) != off || io->read(fd, rec, recsize) != (ssize_t)recsize) {
			die("lseek+read");
		}
	}
	res.r = bench_now() - t0;
	if (kind == CEILING && rec[0] != (char)((count - 1) * 31))
		die("the ceiling read back a wrong record");
	if (kind == STACK)
		res.rreq = below_requests(fd, 0);
	if (io->close(fd) < 0)
		die("close");
	return res;
}

int main(int argc, char **argv)
{
	static const char *const default_specs[] = {"cache:1m:16:2", "cache.sieve:1m:16:2"};
	const char *const *specs = default_specs;
	int nspecs = 2, c;

	while ((c = getopt(argc, argv, "r:s:n:pk:f:mP")) != -1) {
		switch (c) {
		case 'r': recsize = strtoul(optarg, NULL, 0); break;
		case 's': stride = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'p': use_pwrite = 1; break;
		case 'k': repeats = atoi(optarg); break;
		case 'f': path = optarg; break;
		case 'm': machine = 1; break;
		case 'P': plain = 1; break;
		default:
			fprintf(stderr, "usage: strided [-r SIZE] [-s STRIDE] [-n COUNT] [-p] [-k REPEATS] [-f FILE] [-m] [-P] [SPEC...]\n");
			return 2;
		}
	}
	if (recsize == 0 || stride < recsize || count == 0 || repeats < 1) {
		fprintf(stderr, "strided: need 0 < SIZE <= STRIDE, COUNT > 0, REPEATS > 0\n");
		return 2;
	}
	if (optind < argc) {
		specs = (const char *const *)&argv[optind];
		nspecs = argc - optind;
	}
	span = (count - 1) * stride + recsize;
	span_buf = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (span_buf == MAP_FAILED)
		die("mmap");
	(void)madvise(span_buf, span, MADV_HUGEPAGE);
	char *rec = malloc(recsize);
	int ncase = plain ? 1 : 2 + nspecs;
	double (*tw)[repeats] = calloc((size_t)ncase, sizeof *tw), (*tr)[repeats] = calloc((size_t)ncase, sizeof *tr);
	struct result *last = calloc((size_t)ncase, sizeof *last);
	if (!rec || !tw || !tr || !last)
		die("malloc");

	for (int k = 0; k < repeats; k++) {
		for (int c = 0; c < ncase; c++) {
			enum kind kind = c == 0 ? RAW : c == 1 ? CEILING : STACK;
			last[c] = run_case(kind, kind == STACK ? specs[c - 2] : NULL, rec);
			tw[c][k] = last[c].w;
			tr[c][k] = last[c].r;
		}
	}
	if (plain) {
		printf("raw: write %.6f s, read %.6f s (%zu records of %zu B at a stride of %zu B, median of %d)\n",
		       median(tw[0], repeats), median(tr[0], repeats), count, recsize, stride, repeats);
		return 0;
	}
	printf("# %zu records of %zu B at a stride of %zu B, %s, median of %d, round robin\n", count, recsize, stride,
	       use_pwrite ? "pwrite/pread" : "lseek+write/read", repeats);
	printf("# ceiling: each record copied into a touched buffer of the span (%.1f MiB), which goes to the\n"
	       "# file in 512 KiB writes, comes in 1 MiB reads; of ceil: the speedup over raw / the ceiling's\n",
	       (double)span / (1 << 20));
	printf("%-28s %10s %8s %8s %10s %10s %8s %8s %10s\n", "case", "write s", "speedup", "of ceil", "sys req",
	       "read s", "speedup", "of ceil", "sys req");
	double mw[ncase], mr[ncase];
	for (int c = 0; c < ncase; c++) {
		mw[c] = median(tw[c], repeats);
		mr[c] = median(tr[c], repeats);
	}
	for (int c = 0; c < ncase; c++) {
		const char *label = c == 0 ? "raw" : c == 1 ? "ceiling" : specs[c - 2];
		printf("%-28s %10.4f %8.2f %8.2f %10lld %10.4f %8.2f %8.2f %10lld\n", label, mw[c], mw[0] / mw[c],
		       mw[1] / mw[c], last[c].wreq, mr[c], mr[0] / mr[c], mr[1] / mr[c], last[c].rreq);
	}
	for (int c = 0; machine && c < ncase; c++)
		printf("RESULT write_s=%.9f write_req=%lld read_s=%.9f read_req=%lld runs=%d case=%s\n", mw[c],
		       last[c].wreq, mr[c], last[c].rreq, repeats, c == 0 ? "raw" : c == 1 ? "ceiling" : specs[c - 2]);
	fflush(stdout);
	unlink(path);
	munmap(span_buf, span);
	free(rec);
	free(tw);
	free(tr);
	free(last);
	return 0;
}
