/* bench/uring_direct.c -- O_DIRECT reads over sys.direct and uring.direct:
 * scattered 4 KiB reads one at a time against the same reads in flight at
 * queue depth through the uring layer; large sequential reads (the uring
 * layer splits them and runs the pieces at depth); and the cost of opening
 * and closing a file over uring (one ring per file) against sys.
 * Each group has a ceiling row, the same work with no ffio at all:
 *   - scattered reads: the same reads through io_uring directly (liburing),
 *     DEPTH in flight, as the layer keeps them;
 *   - sequential reads: the faster of the same 4 MiB reads made with
 *     pread, no ffio (the kernel splits each for the device), and the file
 *     streamed through io_uring directly in 4 MiB reads, 4 in flight all
 *     along (more than any one call of a stack can have: a read-ahead
 *     cache could at most keep the device as busy; 1 MiB reads 16 in
 *     flight were slower than either);
 *   - open + close: the kernel's open and close; a ring per file: the
 *     kernel's open, one 4 KiB read, close (no ring to set up).
 * Printed: medians of REPS runs (the runs of a group go round robin), the
 * speedup over the group's first row and the fraction of the ceiling
 * (ceiling time / time).  Without liburing the ceilings are skipped.
 * Usage: uring_direct [-f FILE] [-m MIB] [-n READS] [-q DEPTH] [-R REPS] */
#include "uring_bench.h"
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

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

#ifdef HAVE_LIBURING
static int kopen_direct(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* n reads of len bytes at where(i) into buf + (i % depth) * len, at most
 * depth in flight, through a ring of our own */
static double uring_reads(const char *path, char *buf, size_t n, size_t len, unsigned qd,
			  off_t (*where)(size_t))
{
	struct io_uring ring;
	int fd = kopen_direct(path);
	if (io_uring_queue_init(qd, &ring, 0) < 0) {
		fprintf(stderr, "io_uring_queue_init failed\n");
		exit(1);
	}
	double t0 = bench_now();
	size_t sent = 0, done = 0;
	while (done < n) {
		/* every free slot refilled, then one call submits and waits */
		while (sent < n && sent - done < qd) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				break;
			io_uring_prep_read(sqe, fd, buf + (sent % qd) * len, (unsigned)len, (__u64)where(sent));
			sent++;
		}
		if (io_uring_submit_and_wait(&ring, 1) < 0)
			exit(1);
		struct io_uring_cqe *cqe;
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != (int)len) {
				fprintf(stderr, "ceiling read failed\n");
				exit(1);
			}
			io_uring_cqe_seen(&ring, cqe);
			done++;
		}
	}
	double t = bench_now() - t0;
	io_uring_queue_exit(&ring);
	close(fd);
	return t;
}

static off_t seq_big(size_t i)
{
	return (off_t)(i * big);
}

static double ceiling_scattered(const char *path, char *buf)
{
	return uring_reads(path, buf, nreads, 4096, (unsigned)depth, pick);
}

static double ceiling_streamed(const char *path, char *buf)
{
	return uring_reads(path, buf, ((size_t)file_mib << 20) / big, big, 4, seq_big);
}

static double ceiling_pread(const char *path, char *buf)
{
	int fd = kopen_direct(path);
	double t0 = bench_now();
	for (off_t at = 0; at < (off_t)file_mib << 20; at += (off_t)big)
		if (pread(fd, buf, big, at) != (ssize_t)big)
			exit(1);
	double t = bench_now() - t0;
	close(fd);
	return t;
}

static double ceiling_open_close(const char *path, int with_read, char *buf)
{
	double t0 = bench_now();
	for (int i = 0; i < 1000; i++) {
		int fd = kopen_direct(path);
		if (with_read && pread(fd, buf, 4096, 0) != 4096)
			exit(1);
		close(fd);
	}
	return (bench_now() - t0) / 1000;
}
#endif

/* One line of the table: label, seconds, a per-operation figure, the
 * speedup over base and the fraction of the ceiling (0: none; without a
 * base only the per-operation figure is printed, not the seconds). */
static void row(const char *label, double t, const char *per, double base, double ceil)
{
	if (base > 0)
		printf("%-56s %9.4f %14s", label, t, per);
	else
		printf("%-56s %9s %14s", label, "", per);
	if (base > 0)
		printf(" %8.2f", base / t);
	else
		printf(" %8s", "");
	if (ceil > 0)
		printf(" %8.2f", ceil / t);
	printf("\n");
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
	size_t bufsize = big > depth * 4096 ? big : depth * 4096;
	if (bufsize < 4 * big)
		bufsize = 4 * big; /* the streamed ceiling's 4 reads in flight */
	char *buf = ffio_buf_alloc(bufsize, 4096);
	double t[100][5], m[5];
	int ceil = 0, nc;
#ifdef HAVE_LIBURING
	ceil = 1;
#endif
	char lab[128], per[32];
	printf("# O_DIRECT reads of a %zu MiB file, median of %d, round robin; ceiling: the same work with\n"
	       "# no ffio (io_uring directly, or the kernel's calls); of ceil: ceiling time / time\n",
	       file_mib, reps);
	printf("%-56s %9s %14s %8s %8s\n", "case", "seconds", "per op", "speedup", "of ceil");

	nc = 2 + ceil;
	for (int r = 0; r < reps; r++) {
		t[r][0] = scattered_sync(path, buf);
		t[r][1] = scattered_async(path, buf);
#ifdef HAVE_LIBURING
		t[r][2] = ceiling_scattered(path, buf);
#endif
	}
	for (int c = 0; c < nc; c++) {
		double v[100];
		for (int r = 0; r < reps; r++)
			v[r] = t[r][c];
		m[c] = bench_median(v, reps);
	}
	double cs = ceil ? m[2] : 0;
	snprintf(lab, sizeof lab, "%zu scattered 4 KiB reads, sys.direct, one at a time", nreads);
	snprintf(per, sizeof per, "%.1f us/read", m[0] / (double)nreads * 1e6);
	row(lab, m[0], per, m[0], cs);
	snprintf(lab, sizeof lab, "%zu scattered 4 KiB reads, uring.direct:%zu in flight", nreads, depth);
	snprintf(per, sizeof per, "%.1f us/read", m[1] / (double)nreads * 1e6);
	row(lab, m[1], per, m[0], cs);
	if (ceil) {
		snprintf(lab, sizeof lab, "  ceiling: the same reads, liburing, %zu in flight", depth);
		snprintf(per, sizeof per, "%.1f us/read", m[2] / (double)nreads * 1e6);
		row(lab, m[2], per, m[0], cs);
	}

	for (int r = 0; r < reps; r++) {
		t[r][0] = sequential(path, "sys.direct", buf);
		t[r][1] = sequential(path, "uring.direct:64", buf);
#ifdef HAVE_LIBURING
		t[r][2] = ceiling_streamed(path, buf);
		double p = ceiling_pread(path, buf);
		if (p < t[r][2])
			t[r][2] = p;
#endif
	}
	for (int c = 0; c < nc; c++) {
		double v[100];
		for (int r = 0; r < reps; r++)
			v[r] = t[r][c];
		m[c] = bench_median(v, reps);
	}
	cs = ceil ? m[2] : 0;
	snprintf(lab, sizeof lab, "sequential %zu KiB reads, sys.direct", big >> 10);
	snprintf(per, sizeof per, "%.0f MiB/s", (double)file_mib / m[0]);
	row(lab, m[0], per, m[0], cs);
	snprintf(lab, sizeof lab, "sequential %zu KiB reads, uring.direct:64", big >> 10);
	snprintf(per, sizeof per, "%.0f MiB/s", (double)file_mib / m[1]);
	row(lab, m[1], per, m[0], cs);
	if (ceil) {
		snprintf(per, sizeof per, "%.0f MiB/s", (double)file_mib / m[2]);
		snprintf(lab, sizeof lab, "  ceiling: faster of pread, liburing 4 in flight");
		row(lab, m[2], per, m[0], cs);
	}

	nc = 3 + 2 * ceil;
	for (int r = 0; r < reps; r++) {
		t[r][0] = open_close(path, "sys.direct");
		t[r][1] = open_close(path, "uring.direct:64");
		t[r][2] = open_close_ring(path);
#ifdef HAVE_LIBURING
		t[r][3] = ceiling_open_close(path, 0, buf);
		t[r][4] = ceiling_open_close(path, 1, buf);
#endif
	}
	for (int c = 0; c < nc; c++) {
		double v[100];
		for (int r = 0; r < reps; r++)
			v[r] = t[r][c];
		m[c] = bench_median(v, reps);
	}
	static const char *const oc[] = {"open+close, sys.direct", "open+close, uring.direct:64 (ring set up lazily)",
					 "open+close+ring, uring.direct:64 (a ring per file)",
					 "  ceiling: open+close, the kernel's",
					 "  ceiling of the ring: open, one 4 KiB read, close"};
	for (int c = 0; c < nc; c++) {
		double cl = !ceil ? 0 : c == 2 || c == 4 ? m[4] : m[3];
		snprintf(per, sizeof per, "%.1f us", m[c] * 1e6);
		row(oc[c], m[c], per, 0, cl);
	}
	ffio_buf_free(buf, bufsize);
	return 0;
}
