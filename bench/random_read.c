/* bench/random_read.c -- random 4 KiB reads, a workload of make
 * bench-advise (bench/run-bench-advise): COUNT preads of REQ bytes at
 * REQ-aligned offsets drawn (a fixed xorshift sequence, so every run reads
 * the same blocks) over the first SIZE bytes of FILE, which must exist
 * (make it with bench/stream, or dd).  Prints the checksum of every byte
 * read and the time, so that a run through ffio can be checked against a
 * raw one.  Plain POSIX calls: run it raw or with libffio preloaded.
 *   random_read FILE SIZE COUNT [REQ]   (REQ default 4096; sizes take k, m, g)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"


int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: random_read FILE SIZE COUNT [REQ]\n");
		return 2;
	}
	unsigned long long count = strtoull(argv[3], NULL, 0);
	size_t size, req = 4096;
	if (bench_size(argv[2], &size) < 0 || (argc > 4 && bench_size(argv[4], &req) < 0) || size < req) {
		fprintf(stderr, "random_read: need sizes 0 < REQ <= SIZE (k, m, g: powers of 1024)\n");
		return 2;
	}
	unsigned long long blocks = size / req;
	unsigned char *buf = malloc(req);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || !buf) {
		fprintf(stderr, "random_read: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	uint64_t x = 0x9e3779b97f4a7c15ull, sum = 0;
	double t0 = bench_now();
	for (unsigned long long i = 0; i < count; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		off_t off = (off_t)((x % blocks) * req);
		ssize_t n = pread(fd, buf, req, off);
		if (n != (ssize_t)req) {
			fprintf(stderr, "random_read: pread at %lld: %s\n", (long long)off,
				n < 0 ? strerror(errno) : "short read");
			return 1;
		}
		for (size_t k = 0; k < req; k += 64)
			sum = sum * 31 + buf[k] + ((uint64_t)buf[k + 63 < req ? k + 63 : req - 1] << 8);
	}
	double t = bench_now() - t0;
	close(fd);
	printf("checksum %016llx, %llu reads of %zu B over %zu B, %.6f s\n", (unsigned long long)sum, count, req, size, t);
	free(buf);
	return 0;
}
