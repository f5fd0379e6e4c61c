/* bench/uring_overlap.c -- a compute + write loop: each step computes (a
 * fixed amount of work, about T on an idle core), then writes a BLOCK
 * (4 MiB).  Run several ways: compute only; compute then write
 * (synchronous, the baseline); overlapped (the block goes out
 * asynchronously through the uring layer while the next step computes; two
 * buffers); and each stack given as argument, timed the ordinary way
 * (ffpwrite after each step): it overlaps as much as its write-behind lets.
 * Each way that writes also runs once without the computation, in the same
 * repetition: its I/O alone.
 *
 * Overlap: the share of the shorter of the computation and the I/O that
 * the run hid, (compute + I/O alone - total) / min(compute, I/O alone),
 * where I/O alone is the same way's own write-only time.  It is 0 when the
 * two run one after the other and 1 (100%) when the shorter is hidden
 * completely; it cannot exceed 1 unless a run with computation finished
 * before its own I/O alone did, which only noise does (the page cache's
 * speed changes over minutes): such a figure is shown as 100% with a mark.
 * (Taking the I/O alone of one bottom, sys, for every way let a faster
 * bottom's run look like more than 100%.)
 *
 * The ceiling row is what no stack could beat: each step computes, then
 * copies the block into a ring of RING bytes of memory (-r MiB, 16 by
 * default, a cache of 16 pages of 1 MiB) with no I/O at all -- a
 * write-behind cache must make that copy before the call returns, since
 * the program may reuse its buffer -- and the I/O cannot take less than
 * the fastest I/O alone measured (sys or uring) in the same repetition:
 * ceiling = max(compute + copy, fastest I/O alone).  With -d the copy is
 * the cache's own under O_DIRECT, with non-temporal stores
 * (ffio_copy_stream).  Printed per way: its median time, I/O alone and
 * overlap (medians of the repetitions' figures, each against its own
 * times), its speedup over compute-then-write, and that speedup as a
 * fraction of the ceiling's.
 * After each run, outside its timing, the file is synced and its pages
 * dropped, so that no run pays for an earlier run's writeback.
 * -d: the writes go to the device (O_DIRECT: sys.direct and uring.direct
 * for the reference rows; give .direct stacks as SPECs), where the I/O
 * is the device's time, not a copy into the page cache.
 * Usage: uring_overlap [-d] [-f FILE] [-T MS] [-n STEPS] [-b BLOCK] [-R REPS] [SPEC...] */
#include "uring_bench.h"

static double compute_ms = 5;
static size_t block = 4u << 20;
static int steps = 32;
static size_t ring_size = 16u << 20;
static int direct; /* -d: O_DIRECT below, and the ceiling copies as the cache does then */
static volatile double sink;

static long work; /* iterations of one step's computation (calibrated) */

static void compute(void)
{
	double x = 1;
	for (long i = 0; i < work; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

/* A fixed amount of work that takes about compute_ms on an idle core. */
static void calibrate(void)
{
	double best = 1e9;
	work = 1000000;
	for (int i = 0; i < 5; i++) {
		double t0 = bench_now();
		compute();
		double t = bench_now() - t0;
		if (t < best)
			best = t;
	}
	work = (long)((double)work * compute_ms * 1e-3 / best);
}

/* A new file each time: ext4 starts writing back a file truncated to 0
 * at its close (auto_da_alloc), which would be timed as part of the run. */
static int open_or_die(const char *path, const char *spec)
{
	if (unlink(path) < 0 && errno != ENOENT) {
		perror(path);
		exit(1);
	}
	int fd = ffopen(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, spec);
	if (fd < 0) {
		fprintf(stderr, "ffopen %s: %s\n", spec, strerror(errno));
		exit(1);
	}
	return fd;
}

static double run_compute(void)
{
	double t0 = bench_now();
	for (int s = 0; s < steps; s++)
		compute();
	return bench_now() - t0;
}

/* sync: compute, then write (do_compute 0: write only) */
static double run_sync(const char *path, const char *spec, char *buf, int do_compute)
{
	int fd = open_or_die(path, spec);
	double t0 = bench_now();
	for (int s = 0; s < steps; s++) {
		if (do_compute)
			compute();
		if (ffpwrite(fd, buf, block, (off_t)s * (off_t)block) != (ssize_t)block) {
			perror("ffpwrite");
			exit(1);
		}
	}
	if (ffclose(fd) < 0) {
		perror("ffclose");
		exit(1);
	}
	double t = bench_now() - t0;
	bench_drop(path); /* untimed: no run pays for an earlier one's writeback */
	return t;
}

/* compute, then copy the block into the next place of a ring of memory
 * (touched once before the timing, as a cache's pages are after its first
 * round): what a write-behind cache cannot avoid, with no I/O */
static double run_copy(char *ring, const char *buf, int do_compute)
{
	size_t at = 0;
	double t0 = bench_now();
	for (int s = 0; s < steps; s++) {
		if (do_compute)
			compute();
		if (at + block > ring_size)
			at = 0;
		if (direct)
			ffio_copy_stream(ring + at, buf, block);
		else
			memcpy(ring + at, buf, block);
		at += block;
	}
	return bench_now() - t0;
}

struct slot {
	struct ffio_req r;
	struct iovec iov;
	int busy;
};

static void slot_done(struct ffio_req *r)
{
	struct slot *s = r->data;
	if (r->res != (ssize_t)block) {
		fprintf(stderr, "async write: %zd\n", r->res);
		exit(1);
	}
	s->busy = 0;
}

/* async through the uring layer: two buffers, write s while computing s+1
 * (do_compute 0: the same writes, no computation) */
static double run_async(const char *path, const char *spec, char *buf[2], int do_compute)
{
	int fd = open_or_die(path, spec);
	struct slot sl[2] = { { .busy = 0 }, { .busy = 0 } };
	double t0 = bench_now();
	for (int s = 0; s < steps; s++) {
		struct slot *x = &sl[s % 2];
		if (do_compute)
			compute();
		while (x->busy)
			if (ffio_reap(fd, 1) < 0)
				exit(1);
		x->iov = (struct iovec){ buf[s % 2], block };
		x->r = (struct ffio_req){ .op = FFIO_OP_WRITE, .iov = &x->iov, .iovcnt = 1,
					  .off = (off_t)s * (off_t)block, .done = slot_done, .data = x };
		x->busy = 1;
		if (ffio_submit(fd, &x->r) < 0 || ffio_commit(fd) < 0)
			exit(1);
		ffio_reap(fd, 0);
	}
	while (sl[0].busy || sl[1].busy)
		if (ffio_reap(fd, 1) < 0)
			exit(1);
	if (ffclose(fd) < 0)
		exit(1);
	double t = bench_now() - t0;
	bench_drop(path);
	return t;
}

/* The share of the shorter of compute and I/O hidden (see the top). */
static double overlap(double c, double io, double total)
{
	double m = c < io ? c : io;
	return m > 0 ? (c + io - total) / m : 0;
}

int main(int argc, char **argv)
{
	const char *path = "uring_overlap.dat";
	int reps = 3, opt;
	const char *sys_spec = "sys", *uring_spec = "uring:64";
	while ((opt = getopt(argc, argv, "df:T:n:b:R:r:")) != -1) {
		switch (opt) {
		case 'd': sys_spec = "sys.direct"; uring_spec = "uring.direct:64"; direct = 1; break;
		case 'f': path = optarg; break;
		case 'T': compute_ms = atof(optarg); break;
		case 'n': steps = atoi(optarg); break;
		case 'b': block = strtoul(optarg, NULL, 0); break;
		case 'R': reps = atoi(optarg); break;
		case 'r': ring_size = strtoul(optarg, NULL, 0) << 20; break;
		default:
			fprintf(stderr, "usage: %s [-d] [-f FILE] [-T MS] [-n STEPS] [-b BLOCK] [-R REPS] [-r RING_MIB] [SPEC...]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 99)
		reps = 3;
	calibrate();
	if (ring_size < block)
		ring_size = block;
	char *buf[2] = { ffio_buf_alloc(block, 4096), ffio_buf_alloc(block, 4096) };
	char *ring = ffio_buf_alloc(ring_size, 4096);
	if (!buf[0] || !buf[1] || !ring) {
		fprintf(stderr, "uring_overlap: out of memory\n");
		return 1;
	}
	memset(buf[0], 'a', block);
	memset(buf[1], 'b', block);
	memset(ring, 'c', ring_size);
	/* The cases of one repetition run back to back, and each repetition's
	 * overlap fractions use its own compute and write-only times: the
	 * machine's speed at writing into the page cache changes over
	 * minutes (by ten times, bench/README.md), and figures taken apart
	 * would mix its states.  Each way is a pair of runs: with the
	 * computation (t[w][r]) and without it, its I/O alone (io[w][r]). */
	enum { SEQ, ASYNC, FIRST };
	int nspec = argc - optind, COPY = FIRST + nspec, nway = COPY + 1;
	double (*t)[100] = calloc((size_t)nway, sizeof *t), (*io)[100] = calloc((size_t)nway, sizeof *io);
	double tc[100], ceil[100], best[100], ov[100];
	if (!t || !io)
		return 1;
	for (int r = 0; r < reps; r++) {
		tc[r] = run_compute();
		io[SEQ][r] = run_sync(path, sys_spec, buf[0], 0);
		t[SEQ][r] = run_sync(path, sys_spec, buf[0], 1);
		io[ASYNC][r] = run_async(path, uring_spec, buf, 0);
		t[ASYNC][r] = run_async(path, uring_spec, buf, 1);
		for (int i = FIRST; i < COPY; i++) {
			io[i][r] = run_sync(path, argv[optind + i - FIRST], buf[0], 0);
			t[i][r] = run_sync(path, argv[optind + i - FIRST], buf[0], 1);
		}
		io[COPY][r] = run_copy(ring, buf[0], 0);
		t[COPY][r] = run_copy(ring, buf[0], 1);
		best[r] = io[SEQ][r] < io[ASYNC][r] ? io[SEQ][r] : io[ASYNC][r];
		ceil[r] = t[COPY][r] > best[r] ? t[COPY][r] : best[r];
	}
	printf("# compute %.1f ms + write %zu KiB, %d steps, median of %d; each repetition's figures against\n"
	       "# its own times.  overlap: (compute + I/O alone - total) / min(compute, I/O alone), I/O alone\n"
	       "# being the same way's write-only time; speedup: over compute, then write (%s);\n"
	       "# of ceil: that speedup / the ceiling's\n",
	       compute_ms, block >> 10, steps, reps, sys_spec);
	printf("%-44s %8s %12s %8s %8s %8s\n", "case", "total s", "I/O alone s", "overlap", "speedup", "of ceil");
	double mc = bench_median(memcpy(ov, tc, sizeof ov), reps);
	double mceil = bench_median(memcpy(ov, ceil, sizeof ov), reps);
	double mseq = bench_median(memcpy(ov, t[SEQ], sizeof ov), reps);
	int marked = 0;
	printf("%-44s %8.4f\n", "compute only", mc);
	char label[80];
	for (int i = 0; i <= nway; i++) {
		double tm, iom, m;
		if (i < nway) {
			tm = bench_median(memcpy(ov, t[i], sizeof ov), reps);
			iom = bench_median(memcpy(ov, io[i], sizeof ov), reps);
			for (int r = 0; r < reps; r++)
				ov[r] = overlap(tc[r], io[i][r], t[i][r]);
		} else { /* the ceiling: against the fastest I/O alone */
			tm = mceil;
			iom = bench_median(memcpy(ov, best, sizeof ov), reps);
			for (int r = 0; r < reps; r++)
				ov[r] = overlap(tc[r], best[r], ceil[r]);
		}
		m = bench_median(ov, reps);
		switch (i) {
		case SEQ: snprintf(label, sizeof label, "compute, then write (%s)", sys_spec); break;
		case ASYNC: snprintf(label, sizeof label, "compute || async write (%s)", uring_spec); break;
		default:
			if (i == COPY)
				snprintf(label, sizeof label, "compute, then copy into %zu MiB (no I/O)", ring_size >> 20);
			else if (i == nway)
				snprintf(label, sizeof label, "ceiling: max(that, fastest I/O alone)");
			else
				snprintf(label, sizeof label, "%s", argv[optind + i - FIRST]);
			break;
		}
		if (i == COPY) { /* a part of the ceiling, not a way of writing */
			printf("%-44s %8.4f %12.4f\n", label, tm, iom);
			continue;
		}
		char pct[16];
		if (m > 1) {
			snprintf(pct, sizeof pct, "100%%*");
			marked = 1;
		} else {
			snprintf(pct, sizeof pct, "%.0f%%", 100 * m);
		}
		printf("%-44s %8.4f %12.4f %8s %8.2f %8.2f\n", label, tm, iom, pct, mseq / tm, mceil / tm);
	}
	if (marked)
		printf("# *: measured above 100%%: the run with computation ended before its I/O alone did (noise)\n");
	free(t);
	free(io);
	unlink(path);
	ffio_buf_free(buf[0], block);
	ffio_buf_free(buf[1], block);
	ffio_buf_free(ring, ring_size);
	return 0;
}
