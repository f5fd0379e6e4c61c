/* bench/overhead.c -- what preloading libffio costs a file no FF_IO_OPTS
 * entry matches: N small preads on one descriptor, timed in a child process
 * run plainly and with the library preloaded (FF_IO_OPTS set, not
 * matching), alternately, several times; prints the medians and the
 * overhead in percent.  Then the same with lseek + read while another
 * file, which the entry matches, is open (a read of a descriptor ffio does
 * not manage may be a message heard: libffio/coherence.c).  The plain run
 * is the ceiling here: a file no entry matches should cost exactly the
 * system call, so the preloaded run is also given as a fraction of it
 * (plain time / preloaded time).
 *
 *   bench/overhead [-n PREADS] [-r RUNS] [-s SIZE] [-l LIBFFIO.so]
 *
 * The library is -l, else $FFIO_LIB, else the build tree's.  Timings are
 * wall-clock; on a shared machine they are only indicative.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifndef FFIO_BUILD_LIB
#define FFIO_BUILD_LIB "libffio.so"
#endif

/* The measured loop (seek: lseek + read, with a matched file open, else
 * pread): prints the elapsed seconds. */
static int child(const char *path, long n, size_t size, int seek)
{
	char buf[4096], matched[4200];
	snprintf(matched, sizeof matched, "%s.nomatch", path);
	int fd = open(path, O_RDONLY), m = seek ? open(matched, O_RDWR | O_CREAT, 0600) : -2;
	if (fd < 0 || m == -1) {
		perror(path);
		return 1;
	}
	if (size > sizeof buf)
		size = sizeof buf;
	double t0 = bench_now();
	for (long i = 0; i < n; i++) {
		off_t off = (off_t)((i * 64) & 4095);
		if ((seek ? (lseek(fd, off, SEEK_SET) == off ? read(fd, buf, size) : -1)
			  : pread(fd, buf, size, off)) != (ssize_t)size) {
			perror(seek ? "lseek+read" : "pread");
			return 1;
		}
	}
	double t = bench_now() - t0;
	close(fd);
	if (m >= 0 && (close(m) < 0 || unlink(matched) < 0))
		return 1;
	printf("%.9f\n", t);
	return 0;
}

/* Run this program as a child and return its time, or -1. */
static double run_child(const char *self, const char *path, long n, size_t size,
			const char *preload, int seek)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char ns[32], ss[32];
		snprintf(ns, sizeof ns, "%ld", n);
		snprintf(ss, sizeof ss, "%zu", size);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (preload) {
			setenv("LD_PRELOAD", preload, 1);
			setenv("FF_IO_OPTS", seek ? "*.nomatch(cache:1m:4:1, sys)" /* opened: no summary */
						  : "*.nomatch(event.summary, cache:1m:4:1, sys)", 1);
		} else {
			unsetenv("LD_PRELOAD");
			unsetenv("FF_IO_OPTS");
		}
		execl(self, self, seek ? "--child-seek" : "--child", path, ns, ss, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char out[64] = "";
	ssize_t got = read(p[0], out, sizeof out - 1);
	close(p[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || got <= 0)
		return -1;
	return atof(out);
}

int main(int argc, char **argv)
{
	if (argc == 5 && strncmp(argv[1], "--child", 7) == 0)
		return child(argv[2], atol(argv[3]), (size_t)atol(argv[4]), strcmp(argv[1], "--child-seek") == 0);

	long n = 1000000;
	int runs = 7;
	size_t size = 64;
	const char *lib = getenv("FFIO_LIB") ? getenv("FFIO_LIB") : FFIO_BUILD_LIB;
	int c;
	while ((c = getopt(argc, argv, "n:r:s:l:h")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 's': size = (size_t)atol(optarg); break;
		case 'l': lib = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n PREADS] [-r RUNS] [-s SIZE] [-l LIBFFIO.so]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (n <= 0 || runs <= 0 || runs > 100 || access(lib, R_OK) != 0) {
		fprintf(stderr, "overhead: bad arguments or %s not readable\n", lib);
		return 2;
	}
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return 1;
	self[sl] = '\0';

	char path[] = "/tmp/ffio-overhead-XXXXXX";
	int fd = mkstemp(path);
	char page[4096];
	memset(page, 'x', sizeof page);
	if (fd < 0 || write(fd, page, sizeof page) != (ssize_t)sizeof page || close(fd) < 0) {
		perror(path);
		return 1;
	}
	static const char *const what[2] = {"preads", "lseek+reads, a matched file open,"};
	for (int seek = 0; seek < 2; seek++) {
		double plain[100], pre[100];
		int rc = 0;
		for (int i = 0; i < runs && rc == 0; i++) {
			plain[i] = run_child(self, path, n, size, NULL, seek);
			pre[i] = run_child(self, path, n, size, lib, seek);
			if (plain[i] < 0 || pre[i] < 0)
				rc = 1;
		}
		if (rc) {
			unlink(path);
			fprintf(stderr, "overhead: a measured run failed\n");
			return 1;
		}
		double mp = bench_median(plain, runs), mf = bench_median(pre, runs);
		printf("%ld %s of %zu bytes on an unmatched file, median of %d runs\n", n, what[seek], size, runs);
		printf("  plain      %.4f s  (%.1f ns/call)\n", mp, mp / (double)n * 1e9);
		printf("  preloaded  %.4f s  (%.1f ns/call)\n", mf, mf / (double)n * 1e9);
		printf("  overhead   %+.2f %%\n", (mf - mp) / mp * 100.0);
		printf("  preloaded: %.2f of the ceiling (the plain calls)\n", mp / mf);
	}
	unlink(path);
	return 0;
}
