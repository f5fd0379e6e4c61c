/* t/advise_writer.c -- the program t/advise_run.sh runs under ffio-advise:
 * PROCS processes write COUNT records of RECORD bytes each into FILE,
 * record i of process p at i * STRIDE + p * RECORD (small strided writes;
 * with PROCS > 1 the processes interleave in one file).  Plain POSIX
 * calls; exit 0, or 1 with a message on the first error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int writer(const char *file, long rec, long stride, long count, int p)
{
	char buf[65536];
	int fd = open(file, O_WRONLY);

	if (fd < 0 || rec > (long)sizeof buf) {
		fprintf(stderr, "advise_writer: open %s: %s\n", file, strerror(errno));
		return 1;
	}
	memset(buf, 'a' + p, (size_t)rec);
	for (long i = 0; i < count; i++)
		if (pwrite(fd, buf, (size_t)rec, (off_t)(i * stride + p * rec)) != rec) {
			fprintf(stderr, "advise_writer: pwrite: %s\n", strerror(errno));
			return 1;
		}
	if (close(fd) < 0) {
		fprintf(stderr, "advise_writer: close: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long rec, stride, count, procs;
	int fd, failed = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: advise_writer FILE RECORD STRIDE COUNT PROCS\n");
		return 2;
	}
	rec = atol(argv[2]);
	stride = atol(argv[3]);
	count = atol(argv[4]);
	procs = atol(argv[5]);
	if (rec <= 0 || stride < rec * procs || count <= 0 || procs <= 0 || procs > 64) {
		fprintf(stderr, "advise_writer: bad sizes\n");
		return 2;
	}
	fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || close(fd) < 0) {
		fprintf(stderr, "advise_writer: create %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (procs == 1)
		return writer(argv[1], rec, stride, count, 0);
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "advise_writer: fork: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0)
			_exit(writer(argv[1], rec, stride, count, p));
	}
	for (;;) {
		int st;
		pid_t w = wait(&st);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
	}
	return failed;
}
