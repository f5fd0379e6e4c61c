/* t/blocks.c -- a plain program (not linked with libffio) for the preload
 * tests: reads or writes a file in blocks through a descriptor of its own,
 * as dd does, but never on descriptor 0 or 1 (dd reopens its files there,
 * where stdio's standard streams may write too, so ffio passes them through
 * to the kernel).
 *
 *   blocks w PATH BS COUNT   create or truncate PATH, COUNT writes of BS zeros
 *   blocks r PATH BS         read PATH to its end in reads of BS bytes
 *
 * A failed call is reported as "blocks: write: <strerror>" and exit 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "blocks: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (argv[1][0] != 'w' && argv[1][0] != 'r') || (argv[1][0] == 'w' && argc < 5)) {
		fprintf(stderr, "usage: blocks w PATH BS COUNT | blocks r PATH BS\n");
		return 2;
	}
	size_t bs = strtoul(argv[3], NULL, 10);
	char *buf = calloc(1, bs ? bs : 1);
	if (!buf || bs == 0)
		return 2;
	int writing = argv[1][0] == 'w';
	int fd = writing ? open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(argv[2], O_RDONLY);
	if (fd < 0)
		return fail("open");
	if (writing) {
		long count = strtol(argv[4], NULL, 10);
		for (long i = 0; i < count; i++)
			if (write(fd, buf, bs) != (ssize_t)bs)
				return fail("write");
	} else {
		ssize_t n;
		while ((n = read(fd, buf, bs)) > 0)
			;
		if (n < 0)
			return fail("read");
	}
	if (close(fd) < 0)
		return fail("close");
	free(buf);
	return 0;
}
