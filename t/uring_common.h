/* t/uring_common.h -- helpers shared by the uring tests: a scratch
 * directory, the bottom layer of an ffopen'ed stack, request bookkeeping. */
#ifndef URING_COMMON_H
#define URING_COMMON_H

#include "config.h" /* _GNU_SOURCE, HAVE_LIBURING */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "tap.h"

static char ut_dir[256];

static inline void ut_cleanup(void)
{
	char cmd[300];
	if (ut_dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", ut_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", ut_dir);
	}
}

/* A fresh scratch directory in the build tree (a real disk file system,
 * so that O_DIRECT works), removed at exit. */
static inline const char *ut_mkdir(const char *name)
{
	snprintf(ut_dir, sizeof ut_dir, "./%s.XXXXXX", name);
	if (!mkdtemp(ut_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(ut_cleanup);
	return ut_dir;
}

static inline const char *ut_path(const char *leaf)
{
	static char p[2][300];
	static int which;
	which ^= 1;
	snprintf(p[which], sizeof p[which], "%s/%s", ut_dir, leaf);
	return p[which];
}

/* The lowest layer of fd's stack (the bottom), or NULL (none: not
 * managed, or passed through to the kernel). */
static inline struct ffio_layer *ut_bottom(int fd)
{
	struct ffio_file *f = ffio_fd_file(fd);
	if (!f || !f->top)
		return NULL;
	struct ffio_layer *l = f->top;
	while (l->below)
		l = l->below;
	return l;
}

/* A request with its own iovec and completion record. */
struct ut_req {
	struct ffio_req r;
	struct iovec iov[2];
	int ndone;          /* times done() ran */
	int seq;            /* order of completion */
};

static int ut_completed;

static inline void ut_done(struct ffio_req *r)
{
	struct ut_req *u = r->data;
	u->ndone++;
	u->seq = ++ut_completed;
}

static inline void ut_prep(struct ut_req *u, enum ffio_op op, void *buf, size_t n, off_t off)
{
	memset(u, 0, sizeof *u);
	u->iov[0].iov_base = buf;
	u->iov[0].iov_len = n;
	u->r.op = op;
	u->r.iov = u->iov;
	u->r.iovcnt = 1;
	u->r.off = off;
	u->r.done = ut_done;
	u->r.data = u;
}

/* Run the bottom's reap until want requests (counted by ut_completed) are
 * done; returns 0 or the first error of reap. */
static inline int ut_reap_until(struct ffio_layer *l, int want)
{
	while (ut_completed < want) {
		int n = ffio_below_reap(&(struct ffio_layer){ .below = l }, 1);
		if (n < 0)
			return n;
	}
	return 0;
}

/* Enter the bottom directly (ffio_below_* from a layer just above it). */
static struct ffio_layer ut_above;
static inline struct ffio_layer *ut_at(struct ffio_layer *l)
{
	ut_above.below = l;
	ut_above.file = l->file;
	return &ut_above;
}

static inline int ut_uring_is_real(void)
{
	return ffio_layer_uring.unavailable == NULL;
}

#endif
