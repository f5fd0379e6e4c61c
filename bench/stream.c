/* bench/stream.c -- sequential streaming in large requests, a workload of
 * make bench-advise (bench/run-bench-advise): writes FILE (created or
 * truncated) from start to end in requests of REQ bytes, SIZE bytes in
 * all, closes it, then reads it back from start to end in the same
 * requests and checks every byte.  Prints the checksum and the times.
 * Plain POSIX calls: run it raw or with libffio preloaded.
 *   stream FILE SIZE [REQ]   (REQ default 1 MiB; sizes take k, m, g)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"


static void die(const char *what)
{
	fprintf(stderr, "stream: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Block BLOCK's bytes: 64-bit words that name the block and the word
 * (cheap to make, so that the time is the I/O's). */
static void fill(unsigned char *buf, size_t n, unsigned long long block)
{
	for (size_t k = 0; k + 8 <= n; k += 8) {
		uint64_t w = (uint64_t)block << 32 | k;
		memcpy(buf + k, &w, 8);
	}
	for (size_t k = n / 8 * 8; k < n; k++)
		buf[k] = (unsigned char)block;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stream FILE SIZE [REQ]\n");
		return 2;
	}
	size_t size, req = (size_t)1 << 20;
	if (bench_size(argv[2], &size) < 0 || (argc > 3 && bench_size(argv[3], &req) < 0) || size % req != 0) {
		fprintf(stderr, "stream: SIZE must be a multiple of REQ > 0 (k, m, g: powers of 1024)\n");
		return 2;
	}
	unsigned long long n = size / req;
	unsigned char *buf = malloc(req), *want = malloc(req);
	if (!buf || !want)
		die("malloc");
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open");
	double t0 = bench_now();
	for (unsigned long long i = 0; i < n; i++) {
		fill(buf, req, i);
		if (write(fd, buf, req) != (ssize_t)req)
			die("write");
	}
	if (close(fd) < 0)
		die("close");
	double tw = bench_now() - t0;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		die("open for reading");
	uint64_t sum = 0;
	t0 = bench_now();
	for (unsigned long long i = 0; i < n; i++) {
		if (read(fd, buf, req) != (ssize_t)req)
			die("read");
		fill(want, req, i);
		if (memcmp(buf, want, req) != 0) {
			fprintf(stderr, "stream: block %llu read back wrong\n", i);
			return 1;
		}
		for (size_t k = 0; k + 8 <= req; k += 4096) {
			uint64_t w;
			memcpy(&w, buf + k, 8);
			sum = sum * 31 + w;
		}
	}
	double tr = bench_now() - t0;
	close(fd);
	printf("checksum %016llx, %zu B in %zu B requests: write %.6f s, read %.6f s\n", (unsigned long long)sum, size,
	       req, tw, tr);
	free(buf);
	free(want);
	return 0;
}
