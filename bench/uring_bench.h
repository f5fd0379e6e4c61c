/* bench/uring_bench.h -- small helpers of the uring benchmarks: a scratch
 * file, dropping its cached pages, timing, medians. */
#ifndef URING_BENCH_H
#define URING_BENCH_H

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ffio_ext.h"

/* Make path hold size bytes (written once, reused while the size fits). */
static inline void bench_make_file(const char *path, off_t size)
{
	struct stat st;
	if (stat(path, &st) == 0 && st.st_size == size)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	static char buf[1 << 20];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (char)(i * 13 + 7);
	for (off_t at = 0; at < size; at += (off_t)sizeof buf)
		if (pwrite(fd, buf, sizeof buf, at) != (ssize_t)sizeof buf) {
			perror("pwrite");
			exit(1);
		}
	if (fsync(fd) < 0 || close(fd) < 0) {
		perror("fsync");
		exit(1);
	}
}

/* Drop the file's pages from the page cache: the next reads are cold. */
static inline void bench_drop(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fsync(fd) < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		perror("drop");
		exit(1);
	}
	close(fd);
}

#endif
