/* bench/uring_strided.c -- cold strided reads: RECORD bytes every STRIDE
 * bytes, COUNT records, the file's pages dropped before every run; raw
 * pread against each stack given (default: "cache:64k:64:32, uring:64" and
 * the same over sys).  Prints the median of REPS runs and the ratio.
 * Usage: uring_strided [-f FILE] [-r RECORD] [-s STRIDE] [-n COUNT]
 *                      [-R REPS] [SPEC...] */
#include "uring_bench.h"

static size_t record = 256, stride = 65536, count = 4096;

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
	printf("# cold strided reads: %zu B records, stride %zu, %zu records, median of %d\n",
	       record, stride, count, reps);
	double t[100], raw;
	for (int r = 0; r < reps; r++)
		t[r] = run(path, NULL);
	raw = bench_median(t, reps);
	printf("%-36s %9.4f s  %8.1f us/record\n", "raw pread", raw, raw / (double)count * 1e6);
	for (int s = 0; s < nspecs; s++) {
		for (int r = 0; r < reps; r++)
			t[r] = run(path, specs[s]);
		double m = bench_median(t, reps);
		printf("%-36s %9.4f s  %8.1f us/record  %5.2fx raw\n", specs[s], m,
		       m / (double)count * 1e6, raw / m);
	}
	return 0;
}
