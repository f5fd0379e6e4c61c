/* t/layer_common.h -- helpers shared by the layer tests: a scratch
 * directory, a log file whose new text each test step reads, and a way to
 * reach a file's stack directly (asynchronous requests).  The directory is
 * removed at exit unless FFIO_KEEP_TEST_FILES is set. */
#ifndef FFIO_T_LAYER_COMMON_H
#define FFIO_T_LAYER_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw; this header comes before any other */
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "tap.h"

static char lt_dir[256];
static char lt_log[300];
static size_t lt_log_seen; /* bytes of the log already returned */
static pid_t lt_owner;     /* the process that removes the directory */

static inline int lt_remove(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static inline void lt_cleanup(void)
{
	if (getpid() == lt_owner && !getenv("FFIO_KEEP_TEST_FILES"))
		nftw(lt_dir, lt_remove, 16, FTW_DEPTH | FTW_PHYS);
}

/* A scratch directory, and FF_IO_LOGFILE in it (before any log line). */
static inline void lt_setup(const char *name)
{
	snprintf(lt_dir, sizeof lt_dir, "%s/ffio-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	if (!mkdtemp(lt_dir)) {
		perror("mkdtemp");
		exit(99);
	}
	snprintf(lt_log, sizeof lt_log, "%s/log", lt_dir);
	setenv("FF_IO_LOGFILE", lt_log, 1);
	lt_owner = getpid();
	atexit(lt_cleanup);
}

static inline char *lt_path(const char *name)
{
	static char buf[4][400];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof buf[0], "%s/%s", lt_dir, name);
	return p;
}

/* The log text written since the previous call (malloc'd, NUL-ended). */
static inline char *lt_log_new(void)
{
	FILE *fp = fopen(lt_log, "r");
	char *text;
	long len;

	if (!fp)
		return strdup("");
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	if (len < (long)lt_log_seen)
		lt_log_seen = 0;
	text = calloc(1, (size_t)len - lt_log_seen + 1);
	fseek(fp, (long)lt_log_seen, SEEK_SET);
	if (text && fread(text, 1, (size_t)len - lt_log_seen, fp) != (size_t)len - lt_log_seen)
		text[0] = '\0';
	fclose(fp);
	lt_log_seen = (size_t)len;
	return text ? text : strdup("");
}

/* The line of text that contains key (copied into line), or NULL. */
static inline const char *lt_line(const char *text, const char *key, char *line, size_t len)
{
	const char *p = strstr(text, key), *b, *e;

	if (!p)
		return NULL;
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	if ((size_t)(e - b) >= len)
		e = b + len - 1;
	memcpy(line, b, (size_t)(e - b));
	line[e - b] = '\0';
	return line;
}

/* How many times needle occurs in text. */
static inline int lt_count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The size of a file as the kernel sees it, or -1. */
static inline long long lt_disk_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* The byte at off of a file made by lt_make_file: a pattern that differs
 * between neighbouring records and pages. */
static inline unsigned char lt_byte_at(off_t off)
{
	return (unsigned char)((off / 4093) * 31 + off % 251);
}

/* A file of len bytes (a multiple of 64 KiB) whose every byte is
 * lt_byte_at(its offset). */
static inline void lt_make_file(const char *path, off_t len)
{
	static unsigned char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		exit(99);
	}
	for (off_t o = 0; o < len; o += (off_t)sizeof buf) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = lt_byte_at(o + (off_t)i);
		if (pwrite(fd, buf, sizeof buf, o) != (ssize_t)sizeof buf) {
			perror("pwrite");
			exit(99);
		}
	}
	if (close(fd) < 0)
		exit(99);
}

/* Are the n bytes of buf those of such a file at off? */
static inline int lt_bytes_ok(const unsigned char *buf, size_t n, off_t off)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != lt_byte_at(off + (off_t)i))
			return 0;
	return 1;
}

/* Submit one asynchronous request to fd's stack (r), or reap completions
 * (r NULL), as a layer above its top would. */
static inline int lt_async(int fd, struct ffio_req *r, unsigned min)
{
	struct ffio_file *f = ffio_fd_file(fd);
	struct ffio_layer head = {0};
	int rc;

	if (!f)
		return -EBADF;
	head.below = f->top;
	head.file = f;
	pthread_mutex_lock(&f->lock);
	rc = r ? ffio_below_submit(&head, r) : ffio_below_reap(&head, min);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static inline int lt_submit(int fd, struct ffio_req *r)
{
	return lt_async(fd, r, 0);
}

static inline int lt_reap(int fd, unsigned min)
{
	return lt_async(fd, NULL, min);
}

#endif
