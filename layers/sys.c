/* layers/sys.c -- the synchronous bottom layer: plain POSIX calls on the
 * file's descriptor (aliases system, syscall; .direct opens with O_DIRECT).
 * It keeps counts of the requests it issues, so a stack can tell how many
 * reached the system.  Asynchronous requests need nothing here: the core
 * performs them synchronously on a stack without a submit method. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"

#define SYS_DIRECT 0x1u

struct sys {
	struct ffio_layer base;
	struct ffio_stats st;
};

static int sys_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct sys *s = (struct sys *)l;
	int fd;

	if (l->spec->flags & SYS_DIRECT)
		flags |= O_DIRECT;
	do
		fd = ffio_real.openat(dirfd, path, flags, mode);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	l->file->fd = fd;
	s->st.count[FFIO_STAT_OPEN]++;
	return 0;
}

static int sys_close(struct ffio_layer *l)
{
	struct sys *s = (struct sys *)l;
	int fd = l->file->fd;

	s->st.count[FFIO_STAT_CLOSE]++;
	l->file->fd = -1;
	/* Linux releases the descriptor even when close reports an error. */
	return ffio_real.close(fd) < 0 && errno != EINTR ? -errno : 0;
}

#define COUNT(s, op, r)                                        \
	do {                                                   \
		(s)->st.count[op]++;                           \
		if ((r) > 0)                                   \
			(s)->st.bytes[op] += (uint64_t)(r);    \
	} while (0)

static ssize_t sys_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	struct sys *s = (struct sys *)l;
	ssize_t r = iovcnt == 1 ? ffio_real.pread(l->file->fd, iov[0].iov_base, iov[0].iov_len, off)
				: ffio_real.preadv(l->file->fd, iov, iovcnt, off);
	if (r < 0)
		return -errno;
	COUNT(s, FFIO_STAT_READ, r);
	return r;
}

static ssize_t sys_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	struct sys *s = (struct sys *)l;
	ssize_t r;

	if (l->spec->flags & SYS_DIRECT) { /* O_DIRECT: whole, never in the page cache */
		r = iovcnt == 1 ? ffio_real.pwrite(l->file->fd, iov[0].iov_base, iov[0].iov_len, off)
				: ffio_real.pwritev(l->file->fd, iov, iovcnt, off);
		if (r < 0)
			return -errno;
		COUNT(s, FFIO_STAT_WRITE, r);
		return r;
	}
	r = ffio_real_pwritev_pieces(l->file->fd, iov, iovcnt, off, &s->st.count[FFIO_STAT_WRITE]);
	if (r > 0)
		s->st.bytes[FFIO_STAT_WRITE] += (uint64_t)r;
	return r;
}

static int sys_fsync(struct ffio_layer *l, int datasync)
{
	struct sys *s = (struct sys *)l;
	int r = datasync ? ffio_real.fdatasync(l->file->fd) : ffio_real.fsync(l->file->fd);
	s->st.count[FFIO_STAT_SYNC]++;
	return r < 0 ? -errno : 0;
}

static int sys_truncate(struct ffio_layer *l, off_t len)
{
	struct sys *s = (struct sys *)l;
	s->st.count[FFIO_STAT_TRUNCATE]++;
	return ffio_real.ftruncate(l->file->fd, len) < 0 ? -errno : 0;
}

static int sys_size(struct ffio_layer *l, off_t *len)
{
	struct stat st;
	if (ffio_real.fstat(l->file->fd, &st) < 0)
		return -errno;
	*len = st.st_size;
	return 0;
}

static int sys_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	return ffio_real_advise(l, (l->spec->flags & SYS_DIRECT) != 0, off, len, advice);
}

static int sys_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	struct sys *s = (struct sys *)l;
	char name[sizeof st->layer];

	memcpy(name, st->layer, sizeof name);
	*st = s->st;
	memcpy(st->layer, name, sizeof name);
	st->position = l->index;
	return 0;
}

static const char *const sys_aliases[] = {"system", "syscall", NULL};
static const struct ffio_flag sys_flags[] = {
	{.name = "direct", .bit = SYS_DIRECT},
	{NULL},
};
static const struct ffio_param sys_params[] = {{NULL}};

const struct ffio_layer_ops ffio_layer_sys = {
	.name = "sys",
	.aliases = sys_aliases,
	.flags = sys_flags,
	.params = sys_params,
	.kind = FFIO_LAYER_BOTTOM,
	.instance_size = sizeof(struct sys),
	.open = sys_open,
	.close = sys_close,
	.preadv = sys_preadv,
	.pwritev = sys_pwritev,
	.fsync = sys_fsync,
	.truncate = sys_truncate,
	.size = sys_size,
	.stats = sys_stats,
	.advise = sys_advise,
};
