/* t/adio_check.c -- verifies, from a separate plain process (no ffio, no
 * MPI), a file an MPI-IO test wrote:
 *   adio_check FILE SIZE [PATTERN_END]
 * The file must be SIZE bytes long, bytes [0, PATTERN_END) must follow
 * adio_pattern.h and [PATTERN_END, SIZE) must be zero (PATTERN_END
 * defaults to SIZE).  Exit 0 when the file is exactly so; otherwise one
 * line saying where it differs and exit 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adio_pattern.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: adio_check FILE SIZE [PATTERN_END]\n");
		return 2;
	}
	long long size = atoll(argv[2]);
	long long end = argc > 3 ? atoll(argv[3]) : size;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		printf("%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || sb.st_size != size) {
		printf("%s: size %lld, expected %lld\n", argv[1], (long long)sb.st_size, size);
		return 1;
	}
	static unsigned char buf[1 << 16];
	long long off = 0;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n <= 0) {
			printf("%s: read at %lld: %s\n", argv[1], off, n < 0 ? strerror(errno) : "EOF");
			return 1;
		}
		for (ssize_t i = 0; i < n; i++) {
			long long o = off + i;
			unsigned char want = o < end ? adio_byte((uint64_t)o) : 0;
			if (buf[i] != want) {
				printf("%s: byte %lld is %u, expected %u\n", argv[1], o, buf[i], want);
				return 1;
			}
		}
		off += n;
	}
	close(fd);
	return 0;
}
