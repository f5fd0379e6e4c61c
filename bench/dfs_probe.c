/* bench/dfs_probe.c -- two measurements for make bench-dfs
 * (bench/run-bench-dfs), on a file system the programs run on:
 *
 *   dfs_probe latency [-n N] [-S SPEC] DIR
 *     What one request costs there: N pwrites of 256 B at distinct offsets
 *     (4 KiB apart) in a new file, each timed, then N 1 MiB pwrites in
 *     another new file, then N 256 B preads of the first file, opened
 *     anew.  Prints the medians and the parameters of the delay layer
 *     that charge the same: LATENCY = the small write's time, BANDWIDTH
 *     = 1 MiB / (the 1 MiB write's time - LATENCY); the last line is
 *     "DELAY delay:LATus:BWm".  With -S the files are opened with ffopen
 *     and that stack (e.g. a delay layer over the local disk: does the
 *     simulation charge what the volume costs?).
 *
 *   dfs_probe ceiling [-r SIZE] [-s STRIDE] [-n COUNT] [-k REPS] [-S SPEC] FILE
 *     The ceiling of bench/strided's pattern (COUNT records of SIZE bytes
 *     at a STRIDE, defaults as there: 256 B, 4 KiB, 32768): what no cache
 *     could beat.  Write: the records copied into the span in memory
 *     (touched beforehand), then the span written in 1 MiB pieces.  Read:
 *     the span read in 1 MiB pieces into memory, the records copied out.
 *     The file is checked against the pattern strided writes (its records,
 *     zeros between).  Prints "ceiling WRITE READ REQUESTS" (seconds,
 *     medians of REPS, requests that reached the file system per phase).
 *     With -S the file is opened with ffopen and that stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ffio.h"

#define PIECE ((size_t)1 << 20)

static const char *spec; /* NULL: plain system calls */

static void die(const char *what)
{
	fprintf(stderr, "dfs_probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The I/O calls, plain or through ffio with SPEC. */
static int x_open(const char *path, int flags)
{
	return spec ? ffopen(path, flags, 0644, spec) : open(path, flags, 0644);
}

static ssize_t x_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return spec ? ffpwrite(fd, buf, n, off) : pwrite(fd, buf, n, off);
}

static ssize_t x_pread(int fd, void *buf, size_t n, off_t off)
{
	return spec ? ffpread(fd, buf, n, off) : pread(fd, buf, n, off);
}

static int x_flush(int fd)
{
	return spec ? ffflush(fd) : 0;
}

static int x_close(int fd)
{
	return spec ? ffclose(fd) : close(fd);
}

static void report(const char *what, double *t, int n)
{
	double m = bench_median(t, n);
	printf("%-34s median %9.1f us  [%.1f-%.1f]\n", what, m * 1e6, t[0] * 1e6, t[n - 1] * 1e6);
}

static int latency(int argc, char **argv)
{
	int n = 64, c;
	while ((c = getopt(argc, argv, "n:S:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'S': spec = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || n < 1) {
		fprintf(stderr, "usage: dfs_probe latency [-n N] [-S SPEC] DIR\n");
		return 2;
	}
	char small[256], pa[4096], pb[4096];
	char *big = malloc(PIECE);
	double *ts = calloc((size_t)n, sizeof *ts), *tb = calloc((size_t)n, sizeof *tb),
	       *tr = calloc((size_t)n, sizeof *tr);
	if (!big || !ts || !tb || !tr)
		die("malloc");
	memset(small, 's', sizeof small);
	memset(big, 'b', PIECE);
	snprintf(pa, sizeof pa, "%s/dfs_probe-small.dat", argv[optind]);
	snprintf(pb, sizeof pb, "%s/dfs_probe-big.dat", argv[optind]);
	unlink(pa);
	unlink(pb);

	int fd = x_open(pa, O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0)
		die(pa);
	for (int i = 0; i < n; i++) {
		double t0 = bench_now();
		if (x_pwrite(fd, small, sizeof small, (off_t)i * 4096) != (ssize_t)sizeof small)
			die("pwrite 256 B");
		ts[i] = bench_now() - t0;
	}
	if (x_close(fd) < 0)
		die("close");
	fd = x_open(pb, O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0)
		die(pb);
	for (int i = 0; i < n; i++) {
		double t0 = bench_now();
		if (x_pwrite(fd, big, PIECE, (off_t)i * (off_t)PIECE) != (ssize_t)PIECE)
			die("pwrite 1 MiB");
		tb[i] = bench_now() - t0;
	}
	if (x_close(fd) < 0)
		die("close");
	fd = x_open(pa, O_RDONLY);
	if (fd < 0)
		die(pa);
	for (int i = 0; i < n; i++) {
		double t0 = bench_now();
		if (x_pread(fd, small, sizeof small, (off_t)i * 4096) != (ssize_t)sizeof small)
			die("pread 256 B");
		tr[i] = bench_now() - t0;
	}
	x_close(fd);
	unlink(pa);
	unlink(pb);

	double lat = bench_median(ts, n), big_t = bench_median(tb, n);
	printf("# %s%s%s: %d requests of each kind, medians\n", argv[optind], spec ? ", stack " : "",
	       spec ? spec : "", n);
	report("pwrite 256 B (new offsets)", ts, n);
	report("pwrite 1 MiB (sequential)", tb, n);
	report("pread 256 B (file opened anew)", tr, n);
	double bw = big_t > lat ? (double)PIECE / (big_t - lat) : 0; /* bytes per second */
	long lat_us = (long)(lat * 1e6 + 0.5), bw_m = (long)(bw / (1 << 20) + 0.5);
	if (lat_us < 1)
		lat_us = 1;
	if (bw_m < 1)
		bw_m = 0; /* unlimited */
	printf("1 MiB moves in %.1f us beyond the latency: %ld MiB/s\n", (big_t - lat) * 1e6, bw_m);
	printf("DELAY delay:%ldus:%ldm\n", lat_us, bw_m);
	free(big);
	free(ts);
	free(tb);
	free(tr);
	return 0;
}

static void fill(char *rec, size_t size, size_t i)
{
	for (size_t k = 0; k < size; k++)
		rec[k] = (char)(i * 31 + k); /* as bench/strided */
}

static int ceiling(int argc, char **argv)
{
	size_t size = 256, stride = 4096, count = 32768;
	int reps = 3, c;
	while ((c = getopt(argc, argv, "r:s:n:k:S:")) != -1) {
		switch (c) {
		case 'r': size = strtoul(optarg, NULL, 0); break;
		case 's': stride = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'k': reps = atoi(optarg); break;
		case 'S': spec = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || size == 0 || stride < size || count == 0 || reps < 1) {
		fprintf(stderr, "usage: dfs_probe ceiling [-r SIZE] [-s STRIDE] [-n COUNT] [-k REPS] "
				"[-S SPEC] FILE\n");
		return 2;
	}
	const char *path = argv[optind];
	size_t span = (count - 1) * stride + size;
	char *mem = malloc(span), *recs = malloc(count * size), *back = malloc(count * size);
	double tw[reps], tr[reps];
	long long req = 0;
	if (!mem || !recs || !back)
		die("malloc");
	for (size_t i = 0; i < count; i++)
		fill(recs + i * size, size, i);
	for (int k = 0; k < reps; k++) {
		memset(mem, 0, span); /* touched beforehand, as bound_io's memory */
		unlink(path);
		int fd = x_open(path, O_RDWR | O_CREAT | O_TRUNC);
		if (fd < 0)
			die(path);
		double t0 = bench_now();
		for (size_t i = 0; i < count; i++)
			memcpy(mem + i * stride, recs + i * size, size);
		req = 0;
		for (size_t off = 0; off < span; off += PIECE, req++) {
			size_t n = span - off < PIECE ? span - off : PIECE;
			if (x_pwrite(fd, mem + off, n, (off_t)off) != (ssize_t)n)
				die("pwrite");
		}
		if (x_flush(fd) < 0)
			die("flush");
		tw[k] = bench_now() - t0;
		if (x_close(fd) < 0)
			die("close");

		memset(mem, 1, span);
		fd = x_open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		t0 = bench_now();
		for (size_t off = 0; off < span; off += PIECE) {
			size_t n = span - off < PIECE ? span - off : PIECE;
			if (x_pread(fd, mem + off, n, (off_t)off) != (ssize_t)n)
				die("pread");
		}
		for (size_t i = 0; i < count; i++)
			memcpy(back + i * size, mem + i * stride, size);
		tr[k] = bench_now() - t0;
		x_close(fd);
		/* The file is strided's: its records, zeros between. */
		if (memcmp(back, recs, count * size) != 0) {
			fprintf(stderr, "dfs_probe: the ceiling's file does not hold the records\n");
			return 1;
		}
		for (size_t i = 0; i + 1 < count; i++)
			for (size_t b = size; b < stride; b++)
				if (mem[i * stride + b] != 0) {
					fprintf(stderr, "dfs_probe: the ceiling's file is not zero between records\n");
					return 1;
				}
	}
	unlink(path);
	printf("ceiling %.4f %.4f %lld\n", bench_median(tw, reps), bench_median(tr, reps), req);
	free(mem);
	free(recs);
	free(back);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "latency") == 0)
		return latency(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "ceiling") == 0)
		return ceiling(argc - 1, argv + 1);
	fprintf(stderr, "usage: dfs_probe latency [-n N] [-S SPEC] DIR\n"
			"       dfs_probe ceiling [-r SIZE] [-s STRIDE] [-n COUNT] [-k REPS] [-S SPEC] FILE\n");
	return 2;
}
