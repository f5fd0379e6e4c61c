/* bench/uring_direct.c -- O_DIRECT reads over sys.direct and uring.direct:
 * scattered 4 KiB reads one at a time against the same reads in flight at
 * queue depth through the uring layer; large sequential reads (the uring
 * layer splits them and runs the pieces at depth); and the cost of opening
 * and closing a file over uring (one ring per file) against sys.
 * Usage: uring_direct [-f FILE] [-m MIB] [-n READS] [-q DEPTH] [-R REPS] */
#include "uring_bench.h"

static size_t file_mib = 256, nreads = 4096, depth = 32, big = 4u << 20;

static off_t pick(size_t i)
{
	return (off_t)(((i * 2654435761u) % (file_mib * 256)) * 4096);
}

static int open_direct(const char *path, const char *spec)
{
	int fd = ffopen(path, O_RDONLY, 0, spec);
	if (fd < 0) {
		fprintf(stderr, "ffopen %s: %s\n", spec, strerror(errno));
		exit(1);
	}
	return fd;
}

static double scattered_sync(const char *path, char *buf)
{
	int fd = open_direct(path, "sys.direct");
	double t0 = bench_now();
	for (size_t i = 0; i < nreads; i++)
		if (ffpread(fd, buf, 4096, pick(i)) != 4096)
			exit(1);
	double t = bench_now() - t0;
	ffclose(fd);
	return t;
}

static int ndone;
static void done(struct ffio_req *r)
{
	if (r->res != 4096)
		exit(1);
	ndone++;
}

static double scattered_async(const char *path, char *buf)
{
	char spec[32];
	snprintf(spec, sizeof spec, "uring.direct:%zu", depth);
	int fd = open_direct(path, spec);
	struct ffio_req *r = calloc(nreads, sizeof *r);
	struct iovec *iov = calloc(nreads, sizeof *iov);
	ndone = 0;
	double t0 = bench_now();
	for (size_t i = 0; i < nreads; i++) {
		iov[i] = (struct iovec){ buf + (i % depth) * 4096, 4096 };
		r[i] = (struct ffio_req){ .op = FFIO_OP_READ, .iov = &iov[i], .iovcnt = 1,
					  .off = pick(i), .done = done };
		if (ffio_submit(fd, &r[i]) < 0)
			exit(1);
		if (i % depth == depth - 1 && ffio_commit(fd) < 0)
			exit(1);
	}
	while (ndone < (int)nreads)
		if (ffio_reap(fd, 1) < 0)
			exit(1);
	double t = bench_now() - t0;
	ffclose(fd);
	free(r);
	free(iov);
	return t;
}

static double sequential(const char *path, const char *spec, char *buf)
{
	int fd = open_direct(path, spec);
	double t0 = bench_now();
	for (off_t at = 0; at < (off_t)file_mib << 20; at += (off_t)big)
		if (ffpread(fd, buf, big, at) != (ssize_t)big)
			exit(1);
	double t = bench_now() - t0;
	ffclose(fd);
	return t;
}

static double open_close(const char *path, const char *spec)
{
	double t0 = bench_now();
	for (int i = 0; i < 1000; i++)
		ffclose(open_direct(path, spec));
	return (bench_now() - t0) / 1000;
}

/* open, one asynchronous request (which sets the ring up), close */
static double open_close_ring(const char *path)
{
	char *b = ffio_buf_alloc(4096, 4096);
	double t0 = bench_now();
	for (int i = 0; i < 1000; i++) {
		int fd = open_direct(path, "uring.direct:64");
		struct iovec iov = { b, 4096 };
		struct ffio_req r = { .op = FFIO_OP_READ, .iov = &iov, .iovcnt = 1, .done = done };
		ndone = 0;
		if (ffio_submit(fd, &r) < 0 || ffio_commit(fd) < 0)
			exit(1);
		while (ndone < 1)
			if (ffio_reap(fd, 1) < 0)
				exit(1);
		ffclose(fd);
	}
	double t = (bench_now() - t0) / 1000;
	ffio_buf_free(b, 4096);
	return t;
}

int main(int argc, char **argv)
{
	const char *path = "uring_direct.dat";
	int reps = 3, opt;
	while ((opt = getopt(argc, argv, "f:m:n:q:R:")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'm': file_mib = strtoul(optarg, NULL, 0); break;
		case 'n': nreads = strtoul(optarg, NULL, 0); break;
		case 'q': depth = strtoul(optarg, NULL, 0); break;
		case 'R': reps = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-f FILE] [-m MIB] [-n READS] [-q DEPTH] [-R REPS]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 99)
		reps = 3;
	if (depth < 1 || depth > 4096)
		depth = 32;
	bench_make_file(path, (off_t)file_mib << 20);
	char *buf = ffio_buf_alloc(big > depth * 4096 ? big : depth * 4096, 4096);
	double t[100];
	printf("# O_DIRECT reads of a %zu MiB file, median of %d\n", file_mib, reps);

	for (int r = 0; r < reps; r++)
		t[r] = scattered_sync(path, buf);
	double s = bench_median(t, reps);
	for (int r = 0; r < reps; r++)
		t[r] = scattered_async(path, buf);
	double a = bench_median(t, reps);
	printf("%zu scattered 4 KiB reads, sys.direct, one at a time  %8.4f s  %6.1f us/read\n",
	       nreads, s, s / (double)nreads * 1e6);
	printf("%zu scattered 4 KiB reads, uring.direct:%zu in flight   %8.4f s  %6.1f us/read  %5.2fx\n",
	       nreads, depth, a, a / (double)nreads * 1e6, s / a);

	for (int r = 0; r < reps; r++)
		t[r] = sequential(path, "sys.direct", buf);
	s = bench_median(t, reps);
	for (int r = 0; r < reps; r++)
		t[r] = sequential(path, "uring.direct:64", buf);
	a = bench_median(t, reps);
	printf("sequential %zu KiB reads, sys.direct                %8.4f s  %6.0f MiB/s\n", big >> 10,
	       s, (double)file_mib / s);
	printf("sequential %zu KiB reads, uring.direct:64           %8.4f s  %6.0f MiB/s  %5.2fx\n",
	       big >> 10, a, (double)file_mib / a, s / a);

	printf("open+close, sys.direct                                %8.1f us\n",
	       open_close(path, "sys.direct") * 1e6);
	printf("open+close, uring.direct:64 (ring set up lazily)      %8.1f us\n",
	       open_close(path, "uring.direct:64") * 1e6);
	printf("open+close+ring, uring.direct:64 (a ring per file)    %8.1f us\n",
	       open_close_ring(path) * 1e6);
	ffio_buf_free(buf, big > depth * 4096 ? big : depth * 4096);
	return 0;
}
