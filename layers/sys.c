/* layers/sys.c -- the synchronous bottom layer: plain POSIX calls on the
 * file's descriptor (aliases system, syscall; .direct opens with O_DIRECT),
 * made by the core's kernel I/O helpers (kernel_io.c).
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
	l->file->fd = ffio_fd_park(fd);
	s->st.count[FFIO_STAT_OPEN]++;
	l->passes = FFIO_PASS_READ | FFIO_PASS_WRITE; /* one kernel call each */
	return 0;
}

static int sys_close(struct ffio_layer *l)
{
	struct sys *s = (struct sys *)l;
	int fd = l->file->fd;

	s->st.count[FFIO_STAT_CLOSE]++;
	if (fd < 0)
		return 0; /* the core keeps it (ffio_file's kept_fd) */
	l->file->fd = -1;
	/* Linux releases the descriptor even when close reports an error. */
	return ffio_real.close(fd) < 0 && errno != EINTR ? -errno : 0;
}

static ssize_t sys_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return ffio_kernel_transfer(l->file->fd, 0, 0, iov, iovcnt, off, &((struct sys *)l)->st);
}

/* O_DIRECT, or a file system whose writes skip the page cache (FUSE:
 * ffio_file's write_whole): whole; buffered: in pieces. */
static ssize_t sys_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return ffio_kernel_transfer(l->file->fd, 1, (l->spec->flags & SYS_DIRECT) != 0 || l->file->write_whole, iov,
				    iovcnt, off, &((struct sys *)l)->st);
}

/* A request the core made for the stack: counted as ffio_kernel_transfer
 * counts its own (a write's call even when it fails). */
FFIO_HOT static void sys_passed(struct ffio_layer *l, int write, off_t off, size_t n, ssize_t r)
{
	struct ffio_stats *st = &((struct sys *)l)->st;
	int op = write ? FFIO_STAT_WRITE : FFIO_STAT_READ;

	(void)off, (void)n;
	if (write || r >= 0)
		st->count[op]++;
	if (r > 0)
		st->bytes[op] += (uint64_t)r;
}

static int sys_fsync(struct ffio_layer *l, int datasync)
{
	return ffio_kernel_sync(l->file->fd, datasync, &((struct sys *)l)->st);
}

static int sys_truncate(struct ffio_layer *l, off_t len)
{
	return ffio_kernel_truncate(l->file->fd, len, &((struct sys *)l)->st);
}

static int sys_size(struct ffio_layer *l, off_t *len)
{
	return ffio_kernel_size(l->file->fd, len);
}

static int sys_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	return ffio_kernel_advise(l, (l->spec->flags & SYS_DIRECT) != 0, off, len, advice);
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
	.passed = sys_passed,
	.fsync = sys_fsync,
	.truncate = sys_truncate,
	.size = sys_size,
	.stats = sys_stats,
	.advise = sys_advise,
};
