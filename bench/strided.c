/* bench/strided.c -- strided record I/O, raw system calls against ffio
 * stacks: COUNT records of SIZE bytes at a STRIDE, written with lseek+write
 * (or pwrite), then read back the same way.  Prints, per case, the median
 * time of the write phase (to the file system: including the final flush),
 * of the read phase, the requests that reached the system, and the speed-up
 * against raw.  The written file is checked byte for byte after each run.
 *
 *   strided [-r SIZE] [-s STRIDE] [-n COUNT] [-p] [-k REPEATS] [-f FILE] [SPEC...]
 *
 * -p: pwrite/pread instead of lseek+write/read.  SPECs are ffopen stacks
 * (default: "cache:1m:16:2" and "cache.sieve:1m:16:2").  Timings are only
 * indicative on a shared machine.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ffio.h"

static size_t recsize = 256, stride = 4096, count = 32768;
static int use_pwrite, repeats = 3;
static const char *path = "strided.dat";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

static void one_case(const char *label, const struct io *io, const char *spec, double *raw_w,
		     double *raw_r)
{
	double tw[repeats], tr[repeats];
	long long wreq = -1, rreq = -1;
	char *rec = malloc(recsize);
	int raw = io == &raw_io;

	if (!rec)
		die("malloc");
	for (int k = 0; k < repeats; k++) {
		int fd = io->open(path, O_RDWR | O_CREAT | O_TRUNC, spec);
		if (fd < 0)
			die("open");
		double t0 = now();
		for (size_t i = 0; i < count; i++) {
			off_t off = (off_t)(i * stride);
			fill(rec, i);
			if (use_pwrite) {
				if (io->pwrite(fd, rec, recsize, off) != (ssize_t)recsize)
					die("pwrite");
			} else if (io->seek(fd, off, SEEK_SET) != off || io->write(fd, rec, recsize) != (ssize_t)recsize) {
				die("lseek+write");
			}
		}
		if (!raw && ffflush(fd) < 0)
			die("ffflush");
		tw[k] = now() - t0;
		wreq = below_requests(fd, raw);
		if (io->close(fd) < 0)
			die("close");
		verify();

		fd = io->open(path, O_RDONLY, spec);
		if (fd < 0)
			die("open for reading");
		t0 = now();
		for (size_t i = 0; i < count; i++) {
			off_t off = (off_t)(i * stride);
			if (use_pwrite) {
				if (io->pread(fd, rec, recsize, off) != (ssize_t)recsize)
					die("pread");
			} else if (io->seek(fd, off, SEEK_SET) != off || io->read(fd, rec, recsize) != (ssize_t)recsize) {
				die("lseek+read");
			}
		}
		tr[k] = now() - t0;
		rreq = below_requests(fd, raw);
		if (io->close(fd) < 0)
			die("close");
	}
	double w = median(tw, repeats), r = median(tr, repeats);
	long long calls = (long long)count * (use_pwrite ? 1 : 2);
	if (raw) {
		*raw_w = w;
		*raw_r = r;
		printf("%-28s %10.4f %8s %10lld %10.4f %8s %10lld\n", label, w, "1.00", calls, r, "1.00", calls);
	} else {
		printf("%-28s %10.4f %8.2f %10lld %10.4f %8.2f %10lld\n", label, w, *raw_w / w, wreq, r,
		       *raw_r / r, rreq);
	}
	fflush(stdout);
	free(rec);
}

int main(int argc, char **argv)
{
	static const char *const default_specs[] = {"cache:1m:16:2", "cache.sieve:1m:16:2"};
	const char *const *specs = default_specs;
	int nspecs = 2, c;
	double raw_w = 0, raw_r = 0;

	while ((c = getopt(argc, argv, "r:s:n:pk:f:")) != -1) {
		switch (c) {
		case 'r': recsize = strtoul(optarg, NULL, 0); break;
		case 's': stride = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'p': use_pwrite = 1; break;
		case 'k': repeats = atoi(optarg); break;
		case 'f': path = optarg; break;
		default:
			fprintf(stderr, "usage: strided [-r SIZE] [-s STRIDE] [-n COUNT] [-p] [-k REPEATS] [-f FILE] [SPEC...]\n");
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
	printf("# %zu records of %zu B at a stride of %zu B, %s, median of %d\n", count, recsize, stride,
	       use_pwrite ? "pwrite/pread" : "lseek+write/read", repeats);
	printf("%-28s %10s %8s %10s %10s %8s %10s\n", "case", "write s", "speedup", "sys req", "read s",
	       "speedup", "sys req");
	one_case("raw", &raw_io, NULL, &raw_w, &raw_r);
	for (int i = 0; i < nspecs; i++)
		one_case(specs[i], &ff_io, specs[i], &raw_w, &raw_r);
	unlink(path);
	return 0;
}
