/* bench/uring_strided.c -- cold strided reads: RECORD bytes every STRIDE
 * bytes, COUNT records, the file's pages dropped before every run; raw
 * pread against each stack given (default: "cache:64k:64:32, uring:64" and
 * the same over sys).  Prints the median of REPS runs (round robin), the
 * speedup over raw and that speedup as a fraction of the ceiling's.
 * The ceiling is the faster of two ways no cache could beat, both without
 * ffio and both printed: the span read in 1 MiB reads into memory touched
 * beforehand, each record copied out as soon as its piece is in; and every
 * record's bytes asked of the kernel at once (POSIX_FADV_WILLNEED for each,
 * all in flight together), then each record read with pread.
 * Usage: uring_strided [-f FILE] [-r RECORD] [-s STRIDE] [-n COUNT]
 *                      [-R REPS] [SPEC...] */
#include <sys/mman.h>
#include "uring_bench.h"

static size_t record = 256, stride = 65536, count = 4096;
static char *span_buf; /* the first ceiling's memory */
static size_t span;

static void check(const char *what, const char *buf, off_t off)
{
	if (buf[0] != (char)((off % (1 << 20)) * 13 + 7)) {
		fprintf(stderr, "%s: bad read at %lld\n", what, (long long)off);
		exit(1);
	}
}

/* ceiling 1: the span in 1 MiB reads, each record copied out */
static double run_span(const char *path)
{
	char *buf = malloc(record);
	bench_drop(path);
	memset(span_buf, 0, span); /* touched now, not long ago */
	double t0 = bench_now();
	int fd = open(path, O_RDONLY);
	if (fd < 0 || !buf) {
		perror(path);
		exit(1);
	}
	size_t done = 0;
	for (size_t i = 0; i < count; i++) {
		size_t off = i * stride;
		while (done < off + record) {
			size_t n = span - done < (1u << 20) ? span - done : (1u << 20);
			if (pread(fd, span_buf + done, n, (off_t)done) != (ssize_t)n) {
				perror("pread");
				exit(1);
			}
			done += n;
		}
		memcpy(buf, span_buf + off, record);
		check("span", buf, (off_t)off);
	}
	close(fd);
	double t = bench_now() - t0;
	free(buf);
	return t;
}

/* ceiling 2: every record asked for at once, then read */
static double run_willneed(const char *path)
{
	char *buf = malloc(record);
	bench_drop(path);
	double t0 = bench_now();
	int fd = open(path, O_RDONLY);
	if (fd < 0 || !buf) {
		perror(path);
		exit(1);
	}
	for (size_t i = 0; i < count; i++)
		(void)posix_fadvise(fd, (off_t)(i * stride), (off_t)record, POSIX_FADV_WILLNEED);
	for (size_t i = 0; i < count; i++) {
		off_t off = (off_t)(i * stride);
		if (pread(fd, buf, record, off) != (ssize_t)record) {
			perror("pread");
			exit(1);
		}
		check("willneed", buf, off);
	}
	close(fd);
	double t = bench_now() - t0;
	free(buf);
	return t;
}

static double run(const char *path, const char *spec)
{
	bench_drop(path);
	char *buf = malloc(record);
	double t0 = bench_now();
	int fd = spec ? ffopen(path, O_RDONLY, 0, spec) : open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", spec ? spec : "raw", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < count; i++) {
		off_t off = (off_t)(i * stride);
		ssize_t n = spec ? ffpread(fd, buf, record, off) : pread(fd, buf, record, off);
		if (n != (ssize_t)record || buf[0] != (char)((off % (1 << 20)) * 13 + 7)) {
			fprintf(stderr, "%s: bad read at %lld\n", spec ? spec : "raw", (long long)off);
			exit(1);
		}
	}
	if (spec ? ffclose(fd) : close(fd)) {
		perror("close");
		exit(1);
	}
	double t = bench_now() - t0;
	free(buf);
	return t;
}

int main(int argc, char **argv)
{
	const char *path = "uring_strided.dat";
	int reps = 3, opt;
	while ((opt = getopt(argc, argv, "f:r:s:n:R:")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'r': record = strtoul(optarg, NULL, 0); break;
		case 's': stride = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'R': reps = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-f FILE] [-r RECORD] [-s STRIDE] [-n COUNT] [-R REPS] [SPEC...]\n", argv[0]);
			return 2;
		}
	}
	static const char *const defaults[] = { "cache:64k:64:32, uring:64", "cache:64k:64:32, sys" };
	const char *const *specs = optind < argc ? (const char *const *)argv + optind : defaults;
	int nspecs = optind < argc ? argc - optind : 2;
	if (reps < 1 || reps > 99)
		reps = 3;

	bench_make_file(path, (off_t)(count * stride));
	span = (count - 1) * stride + record;
	span_buf = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (span_buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	(void)madvise(span_buf, span, MADV_HUGEPAGE);
	/* cases: 0 raw, 1 span, 2 willneed, 3.. the stacks; round robin */
	int ncase = 3 + nspecs;
	double (*t)[100] = calloc((size_t)ncase, sizeof *t), m[ncase], ceil[100];
	if (!t)
		return 1;
	for (int r = 0; r < reps; r++) {
		t[0][r] = run(path, NULL);
		t[1][r] = run_span(path);
		t[2][r] = run_willneed(path);
		for (int s = 0; s < nspecs; s++)
			t[3 + s][r] = run(path, specs[s]);
		ceil[r] = t[1][r] < t[2][r] ? t[1][r] : t[2][r];
	}
	for (int c = 0; c < ncase; c++)
		m[c] = bench_median(t[c], reps);
	double mc = bench_median(ceil, reps);
	printf("# cold strided reads: %zu B records, stride %zu, %zu records, median of %d, round robin\n"
	       "# ceiling: the faster of the two ways below (each repetition); of ceil: ceiling time / time\n",
	       record, stride, count, reps);
	printf("%-44s %9s %14s %8s %8s\n", "case", "seconds", "per record", "speedup", "of ceil");
	/* printed: raw, the stacks, the two ways, the ceiling */
	for (int k = 0; k < ncase + 1; k++) {
		static const char *const fixed[] = {"raw pread", "  ceiling (a): span in 1 MiB reads",
						     "  ceiling (b): all records asked at once"};
		int c = k == 0 ? 0 : k <= nspecs ? k + 2 : k < ncase ? k - nspecs : ncase;
		const char *label = c < 3 ? fixed[c] : c < ncase ? specs[c - 3] : "ceiling: the faster of (a), (b)";
		double v = c < ncase ? m[c] : mc;
		char per[32];
		snprintf(per, sizeof per, "%.1f us", v / (double)count * 1e6);
		printf("%-44s %9.4f %14s %8.2f %8.2f\n", label, v, per, m[0] / v, mc / v);
	}
	free(t);
	munmap(span_buf, span);
	return 0;
}
