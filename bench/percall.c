/* bench/percall.c -- what one call costs on a cached file: nanoseconds per
 * lseek, per small write and per small read (8 B), per pwrite and pread,
 * and per record of the strided pattern (8 B at a 64 B stride: lseek +
 * write, lseek + read), on a file of REGION bytes (8 MiB) that lies wholly
 * in the cache, so that every call is a cache hit.
 *
 *   bench/percall [-n CALLS] [-r RUNS] [-l LIBFFIO.so] [SPEC...]
 *
 * It runs itself as a child several ways, round robin, RUNS times (5):
 *   - ceiling: the same loops on a file in memory served by plain
 *     functions, called through function pointers (never inlined), that do
 *     what a cache hit cannot avoid: check the arguments, copy the bytes,
 *     move the offset.  No layer stack can beat it;
 *   - kernel: the system calls, without ffio;
 *   - each SPEC (default "cache.sieve:1m:16:2" and "cache:1m:16:2"): the
 *     system calls with libffio preloaded and FF_IO_OPTS='percall.dat(SPEC)'.
 * The program itself makes only POSIX calls; ffio comes from LD_PRELOAD.
 * Each child first writes and reads the whole region (untimed: every page
 * is then in the cache), times each loop of CALLS calls (10^6; the kernel
 * a tenth of that, its calls being a hundred times slower) three times
 * and reports the fastest, then reads the region back and checks every
 * byte.  Printed: medians over the runs, in ns per call, and the fraction
 * of the ceiling (ceiling ns / ns).  The library is -l, else $FFIO_LIB,
 * else the build tree's.  On a shared machine the figures are indicative.
 * To profile one loop (OP: 0 lseek ... 5 lseek+write at 64 B), run a child:
 *   LD_PRELOAD=.libs/libffio.so FF_IO_OPTS='percall.dat(cache.sieve:1m:16:2)' \
 *       perf record -g bench/percall --child ffio 10000000 5
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifndef FFIO_BUILD_LIB
#define FFIO_BUILD_LIB "libffio.so"
#endif

#define REGION ((size_t)8 << 20) /* the file: 8 MiB, within a 16 x 1 MiB cache */
#define REC 8                    /* small call and record size */
#define STRIDE 64                /* the record pattern's stride */
#define PATH "percall.dat"

enum op { LSEEK, WRITE, READ, PWRITE, PREAD, SEEKWRITE, SEEKREAD, NOP };
static const char *const op_name[NOP] = {
	"lseek", "write 8 B", "read 8 B", "pwrite 8 B", "pread 8 B",
	"lseek+write, 8 B at 64 B", "lseek+read, 8 B at 64 B"};

/* ---- the calls: the kernel's (or ffio's, preloaded), or the ceiling's ---- */

struct calls {
	off_t (*lseek)(int, off_t, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
};

/* The ceiling's file: memory touched before the timing, an offset, a size. */
static struct {
	char *mem;
	off_t pos;
	size_t size;
} mf;

__attribute__((noinline)) static off_t mf_lseek(int fd, off_t off, int whence)
{
	off_t base;
	(void)fd;
	switch (whence) {
	case SEEK_SET: base = 0; break;
	case SEEK_CUR: base = mf.pos; break;
	case SEEK_END: base = (off_t)mf.size; break;
	default: errno = EINVAL; return -1;
	}
	if (base + off < 0) {
		errno = EINVAL;
		return -1;
	}
	return mf.pos = base + off;
}

__attribute__((noinline)) static ssize_t mf_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	(void)fd;
	if (off < 0 || (size_t)off + n > REGION) {
		errno = EFBIG;
		return -1;
	}
	memcpy(mf.mem + off, buf, n);
	if ((size_t)off + n > mf.size)
		mf.size = (size_t)off + n;
	return (ssize_t)n;
}

__attribute__((noinline)) static ssize_t mf_pread(int fd, void *buf, size_t n, off_t off)
{
	(void)fd;
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)off >= mf.size)
		return 0;
	if (n > mf.size - (size_t)off)
		n = mf.size - (size_t)off;
	memcpy(buf, mf.mem + off, n);
	return (ssize_t)n;
}

__attribute__((noinline)) static ssize_t mf_write(int fd, const void *buf, size_t n)
{
	ssize_t r = mf_pwrite(fd, buf, n, mf.pos);
	if (r > 0)
		mf.pos += r;
	return r;
}

__attribute__((noinline)) static ssize_t mf_read(int fd, void *buf, size_t n)
{
	ssize_t r = mf_pread(fd, buf, n, mf.pos);
	if (r > 0)
		mf.pos += r;
	return r;
}

/* volatile: the compiler cannot see which functions the loops call */
static struct calls *volatile io;
static struct calls kernel_calls = {lseek, write, read, pwrite, pread};
static struct calls ceiling_calls = {mf_lseek, mf_write, mf_read, mf_pwrite, mf_pread};

/* ---- the child: the loops ---------------------------------------------- */

static char *pat; /* what the file holds: pattern byte at each offset */

static void fail(const char *what)
{
	fprintf(stderr, "percall: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One timed loop of n calls of op; returns ns per call.  Writes put back
 * the pattern, so the file's contents never change. */
static double run_op(int fd, enum op op, long n)
{
	struct calls *c = io;
	char buf[REC];
	size_t pos = 0;
	if (c->lseek(fd, 0, SEEK_SET) != 0)
		fail("lseek");
	double t0 = bench_now();
	switch (op) {
	case LSEEK:
		for (long i = 0; i < n; i++)
			if (c->lseek(fd, (off_t)(((size_t)i * STRIDE) & (REGION - 1)), SEEK_SET) < 0)
				fail("lseek");
		break;
	case WRITE:
		for (long i = 0; i < n; i++) {
			if (pos == REGION) {
				if (c->lseek(fd, 0, SEEK_SET) != 0)
					fail("lseek");
				pos = 0;
			}
			if (c->write(fd, pat + pos, REC) != REC)
				fail("write");
			pos += REC;
		}
		break;
	case READ:
		for (long i = 0; i < n; i++) {
			if (pos == REGION) {
				if (c->lseek(fd, 0, SEEK_SET) != 0)
					fail("lseek");
				pos = 0;
			}
			if (c->read(fd, buf, REC) != REC)
				fail("read");
			pos += REC;
		}
		break;
	case PWRITE:
		for (long i = 0; i < n; i++) {
			size_t off = ((size_t)i * STRIDE) & (REGION - 1);
			if (c->pwrite(fd, pat + off, REC, (off_t)off) != REC)
				fail("pwrite");
		}
		break;
	case PREAD:
		for (long i = 0; i < n; i++)
			if (c->pread(fd, buf, REC, (off_t)(((size_t)i * STRIDE) & (REGION - 1))) != REC)
				fail("pread");
		break;
	case SEEKWRITE:
		for (long i = 0; i < n; i++) {
			size_t off = ((size_t)i * STRIDE) & (REGION - 1);
			if (c->lseek(fd, (off_t)off, SEEK_SET) != (off_t)off || c->write(fd, pat + off, REC) != REC)
				fail("lseek+write");
		}
		break;
	case SEEKREAD:
		for (long i = 0; i < n; i++) {
			size_t off = ((size_t)i * STRIDE) & (REGION - 1);
			if (c->lseek(fd, (off_t)off, SEEK_SET) != (off_t)off || c->read(fd, buf, REC) != REC)
				fail("lseek+read");
		}
		break;
	case NOP: break;
	}
	double t = bench_now() - t0;
	__asm__ volatile("" : : "r"(buf) : "memory");
	return t / (double)n * 1e9;
}

/* The whole region, CHUNK bytes a call, written (or read and checked). */
static void whole(int fd, int writing)
{
	static char got[1 << 16];
	if (io->lseek(fd, 0, SEEK_SET) != 0)
		fail("lseek");
	for (size_t at = 0; at < REGION; at += sizeof got) {
		if (writing) {
			if (io->write(fd, pat + at, sizeof got) != (ssize_t)sizeof got)
				fail("write");
		} else if (io->read(fd, got, sizeof got) != (ssize_t)sizeof got) {
			fail("read");
		} else if (memcmp(got, pat + at, sizeof got) != 0) {
			fprintf(stderr, "percall: the file differs at %zu..%zu\n", at, at + sizeof got);
			exit(1);
		}
	}
}

/* mode: "ceiling", "kernel" or "ffio" (the kernel's calls, ffio preloaded);
 * only >= 0: that loop alone, once */
static int child(const char *mode, long n, int only)
{
	int ceiling = strcmp(mode, "ceiling") == 0;
	int fd = -1;
	pat = malloc(REGION);
	if (!pat)
		fail("malloc");
	for (size_t i = 0; i < REGION; i++)
		pat[i] = (char)(i * 7 + (i >> 9));
	if (ceiling) {
		mf.mem = malloc(REGION);
		if (!mf.mem)
			fail("malloc");
		memset(mf.mem, 0, REGION);
		io = &ceiling_calls;
	} else {
		if (unlink(PATH) < 0 && errno != ENOENT)
			fail(PATH);
		fd = open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			fail(PATH);
		io = &kernel_calls;
		if (strcmp(mode, "kernel") == 0 && n >= 10000)
			n /= 10; /* system calls: 10^5 take long enough */
	}
	whole(fd, 1);
	whole(fd, 0);
	for (int op = 0; op < NOP; op++) {
		double best = 0;
		if (only >= 0) {
			if (op == only)
				printf("%s: %.3f ns per call\n", op_name[op], run_op(fd, (enum op)op, n));
			continue;
		}
		for (int k = 0; k < 3; k++) {
			double t = run_op(fd, (enum op)op, n);
			if (k == 0 || t < best)
				best = t;
		}
		printf("%s%.3f", op ? " " : "", best);
	}
	if (only < 0)
		printf("\n");
	whole(fd, 0);
	if (!ceiling && (close(fd) < 0 || unlink(PATH) < 0))
		fail("close");
	return 0;
}

/* ---- the parent: runs, medians, the table --------------------------------- */

/* Run this program as a child; fills ns[NOP]; 0 or -1. */
static int run_child(const char *self, long n, const char *mode, const char *lib, const char *spec,
		     double *ns)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char nbuf[32], opts[512];
		snprintf(nbuf, sizeof nbuf, "%ld", n);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		unsetenv("LD_PRELOAD");
		unsetenv("FF_IO_OPTS");
		if (spec) {
			snprintf(opts, sizeof opts, PATH "(%s)", spec);
			setenv("LD_PRELOAD", lib, 1);
			setenv("FF_IO_OPTS", opts, 1);
		}
		execl(self, self, "--child", mode, nbuf, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char out[512] = "";
	size_t got = 0;
	ssize_t r;
	while (got < sizeof out - 1 && (r = read(p[0], out + got, sizeof out - 1 - got)) > 0)
		got += (size_t)r;
	close(p[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	char *s = out, *end;
	for (int op = 0; op < NOP; op++, s = end) {
		ns[op] = strtod(s, &end);
		if (end == s)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "--child") == 0)
		return child(argv[2], atol(argv[3]), argc == 5 ? atoi(argv[4]) : -1);

	static const char *const default_specs[] = {"cache.sieve:1m:16:2", "cache:1m:16:2"};
	long n = 1000000;
	int runs = 5, c;
	const char *lib = getenv("FFIO_LIB") ? getenv("FFIO_LIB") : FFIO_BUILD_LIB;
	while ((c = getopt(argc, argv, "n:r:l:h")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'l': lib = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n CALLS] [-r RUNS] [-l LIBFFIO.so] [SPEC...]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (n <= 0 || runs <= 0 || runs > 99 || access(lib, R_OK) != 0) {
		fprintf(stderr, "percall: bad arguments or %s not readable\n", lib);
		return 2;
	}
	const char *const *specs = default_specs;
	int nspecs = 2;
	if (optind < argc) {
		specs = (const char *const *)argv + optind;
		nspecs = argc - optind;
	}
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return 1;
	self[sl] = '\0';

	/* configurations: 0 ceiling, 1 kernel, 2.. the specs */
	int ncfg = 2 + nspecs;
	double (*ns)[NOP][100] = calloc((size_t)ncfg, sizeof *ns), one[NOP], med[ncfg][NOP];
	if (!ns)
		return 1;
	for (int r = 0; r < runs; r++) {
		for (int k = 0; k < ncfg; k++) {
			const char *mode = k == 0 ? "ceiling" : k == 1 ? "kernel" : "ffio";
			if (run_child(self, n, mode, lib, k >= 2 ? specs[k - 2] : NULL, one) < 0) {
				fprintf(stderr, "percall: the run %s failed\n",
					k == 0 ? "ceiling" : k == 1 ? "kernel" : specs[k - 2]);
				return 1;
			}
			for (int op = 0; op < NOP; op++)
				ns[k][op][r] = one[op];
		}
	}
	for (int k = 0; k < ncfg; k++)
		for (int op = 0; op < NOP; op++)
			med[k][op] = bench_median(ns[k][op], runs);

	printf("# ns per call on a cached file of %zu MiB (every call a cache hit), %ld calls,\n"
	       "# median of %d runs; (x): fraction of the ceiling, ceiling ns / ns\n",
	       REGION >> 20, n, runs);
	printf("# ceiling: the same calls served from memory by plain functions through function pointers\n");
	printf("%-26s %9s %16s", "call", "ceiling", "kernel");
	for (int k = 2; k < ncfg; k++)
		printf(" %22.22s", specs[k - 2]);
	printf("\n");
	for (int op = 0; op < NOP; op++) {
		printf("%-26s %9.1f", op_name[op], med[0][op]);
		for (int k = 1; k < ncfg; k++) {
			char cell[64];
			snprintf(cell, sizeof cell, "%.1f (%.2f)", med[k][op], med[0][op] / med[k][op]);
			printf(" %*s", k == 1 ? 16 : 22, cell);
		}
		printf("\n");
	}
	free(ns);
	return 0;
}
