/* libffio/file.c -- the open file: building a stack of layers for an entry,
 * the calls that walk down the stack (a NULL method passes through), the
 * shared file position, deferred errors, close across dup'ed descriptors,
 * and the process events (fork, exec, exit) that flush every file. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ffio_file *files; /* every open file (files_lock) */
static int fd_high;              /* highest descriptor ever attached */

/* ---- walking down the stack ------------------------------------------- */

/* The first layer at or below x whose method m is set, or NULL. */
#define FIND(x, m)                                \
	({                                        \
		struct ffio_layer *f_ = (x);      \
		while (f_ && !f_->ops->m)         \
			f_ = f_->below;           \
		f_;                               \
	})

int ffio_below_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct ffio_layer *x = FIND(l->below, open);
	return x ? x->ops->open(x, dirfd, path, flags, mode) : -ENOSYS;
}

int ffio_below_close(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l->below, close);
	return x ? x->ops->close(x) : 0;
}

/* A vector transfer entering at x: the first layer implementing either
 * form of the direction handles it; with only the plain form, one call per
 * buffer, stopping at a short one. */
static ssize_t layer_rwv(struct ffio_layer *x, int write, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t total = 0;

	for (; x; x = x->below) {
		if (write ? x->ops->pwritev != NULL : x->ops->preadv != NULL)
			return write ? x->ops->pwritev(x, iov, iovcnt, off) : x->ops->preadv(x, iov, iovcnt, off);
		if (write ? x->ops->pwrite != NULL : x->ops->pread != NULL)
			break;
	}
	if (!x)
		return -ENOSYS;
	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = write ? x->ops->pwrite(x, iov[i].iov_base, iov[i].iov_len, off + total)
				  : x->ops->pread(x, iov[i].iov_base, iov[i].iov_len, off + total);
		if (n < 0)
			return total ? total : n;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return total;
}

static ssize_t layer_preadv(struct ffio_layer *x, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_rwv(x, 0, iov, iovcnt, off);
}

static ssize_t layer_pwritev(struct ffio_layer *x, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_rwv(x, 1, iov, iovcnt, off);
}

static ssize_t layer_pread(struct ffio_layer *x, void *buf, size_t n, off_t off)
{
	for (; x; x = x->below) {
		if (x->ops->pread)
			return x->ops->pread(x, buf, n, off);
		if (x->ops->preadv) {
			struct iovec iov = {buf, n};
			return x->ops->preadv(x, &iov, 1, off);
		}
	}
	return -ENOSYS;
}

static ssize_t layer_pwrite(struct ffio_layer *x, const void *buf, size_t n, off_t off)
{
	for (; x; x = x->below) {
		if (x->ops->pwrite)
			return x->ops->pwrite(x, buf, n, off);
		if (x->ops->pwritev) {
			struct iovec iov = {(void *)buf, n};
			return x->ops->pwritev(x, &iov, 1, off);
		}
	}
	return -ENOSYS;
}

ssize_t ffio_below_pread(struct ffio_layer *l, void *buf, size_t n, off_t off)
{
	return layer_pread(l->below, buf, n, off);
}

ssize_t ffio_below_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off)
{
	return layer_pwrite(l->below, buf, n, off);
}

ssize_t ffio_below_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_preadv(l->below, iov, iovcnt, off);
}

ssize_t ffio_below_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_pwritev(l->below, iov, iovcnt, off);
}

ssize_t ffio_layer_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_preadv(l, iov, iovcnt, off);
}

ssize_t ffio_layer_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return layer_pwritev(l, iov, iovcnt, off);
}

int ffio_layer_flush(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l, flush);
	return x ? x->ops->flush(x) : 0;
}

int ffio_below_flush(struct ffio_layer *l)
{
	return l->below ? ffio_layer_flush(l->below) : 0;
}

int ffio_layer_fsync(struct ffio_layer *l, int datasync)
{
	struct ffio_layer *x = FIND(l, fsync);
	return x ? x->ops->fsync(x, datasync) : -ENOSYS;
}

int ffio_below_fsync(struct ffio_layer *l, int datasync)
{
	return l->below ? ffio_layer_fsync(l->below, datasync) : -ENOSYS;
}

int ffio_layer_truncate(struct ffio_layer *l, off_t len)
{
	struct ffio_layer *x = FIND(l, truncate);
	return x ? x->ops->truncate(x, len) : -ENOSYS;
}

int ffio_below_truncate(struct ffio_layer *l, off_t len)
{
	return l->below ? ffio_layer_truncate(l->below, len) : -ENOSYS;
}

int ffio_layer_size(struct ffio_layer *l, off_t *len)
{
	struct ffio_layer *x = FIND(l, size);
	return x ? x->ops->size(x, len) : -ENOSYS;
}

int ffio_below_size(struct ffio_layer *l, off_t *len)
{
	return l->below ? ffio_layer_size(l->below, len) : -ENOSYS;
}

int ffio_layer_invalidate(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l, invalidate);
	return x ? x->ops->invalidate(x) : 0;
}

int ffio_below_invalidate(struct ffio_layer *l)
{
	return l->below ? ffio_layer_invalidate(l->below) : 0;
}

int ffio_below_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	struct ffio_layer *x = FIND(l->below, advise);
	return x ? x->ops->advise(x, off, len, advice) : -EOPNOTSUPP;
}

/* A stack whose layers below l do not implement submit: perform the
 * request synchronously on the layers below and complete it at once. */
static int submit_sync(struct ffio_layer *l, struct ffio_req *r)
{
	switch (r->op) {
	case FFIO_OP_READ:
		r->res = layer_preadv(l, r->iov, r->iovcnt, r->off);
		break;
	case FFIO_OP_WRITE:
		r->res = layer_pwritev(l, r->iov, r->iovcnt, r->off);
		break;
	case FFIO_OP_FSYNC:
	case FFIO_OP_FDATASYNC:
		r->res = ffio_layer_fsync(l, r->op == FFIO_OP_FDATASYNC);
		break;
	default:
		return -EINVAL;
	}
	if (r->done)
		r->done(r);
	return 0;
}

int ffio_below_submit(struct ffio_layer *l, struct ffio_req *r)
{
	struct ffio_layer *x = FIND(l->below, submit);
	return x ? x->ops->submit(x, r) : submit_sync(l->below, r);
}

int ffio_below_commit(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l->below, commit);
	return x ? x->ops->commit(x) : 0;
}

int ffio_below_reap(struct ffio_layer *l, unsigned min)
{
	struct ffio_layer *x = FIND(l->below, reap);
	return x ? x->ops->reap(x, min) : 0;
}

int ffio_below_pread_full(struct ffio_layer *l, void *buf, size_t n, off_t off, size_t *got)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = ffio_below_pread(l, (char *)buf + done, n - done, off + (off_t)done);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return (int)r;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	if (got)
		*got = done;
	return 0;
}

int ffio_below_pwritev_full(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	struct iovec local[64];
	const struct iovec *v = iov;
	int cnt = iovcnt;

	while (cnt > 0) {
		ssize_t r = ffio_below_pwritev(l, v, cnt, off);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return (int)r;
		if (r == 0)
			return -EIO;
		off += r;
		/* Skip what was written; copy the rest so the caller's array is untouched. */
		while (cnt > 0 && (size_t)r >= v->iov_len) {
			r -= (ssize_t)v->iov_len;
			v++;
			cnt--;
		}
		if (cnt == 0)
			break;
		if (cnt > (int)(sizeof local / sizeof local[0])) {
			/* Rare: finish the first buffer alone, then go on with the rest. */
			int e = ffio_below_pwritev_full(l, &(struct iovec){(char *)v->iov_base + r, v->iov_len - (size_t)r}, 1, off);
			if (e < 0)
				return e;
			off += (off_t)(v->iov_len - (size_t)r);
			v++;
			cnt--;
			continue;
		}
		memmove(local, v, (size_t)cnt * sizeof *v);
		local[0].iov_base = (char *)local[0].iov_base + r;
		local[0].iov_len -= (size_t)r;
		v = local;
	}
	return 0;
}

/* ---- opening and closing ---------------------------------------------- */

static void file_free(struct ffio_file *f)
{
	struct ffio_layer *l = f->top, *next;

	for (; l; l = next) {
		next = l->below;
		free(l);
	}
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f);
}

static int build_stack(struct ffio_file *f, struct ffio_entry *e)
{
	struct ffio_layer **link = &f->top;

	for (int i = 0; i < e->nlayers; i++) {
		const struct ffio_layer_ops *ops = e->layer[i].ops;
		size_t size = ops->instance_size < sizeof(struct ffio_layer) ? sizeof(struct ffio_layer) : ops->instance_size;
		struct ffio_layer *l = calloc(1, size);
		if (!l)
			return -ENOMEM;
		l->ops = ops;
		l->spec = &e->layer[i];
		l->file = f;
		l->index = i;
		*link = l;
		link = &l->below;
	}
	return f->top ? 0 : -EINVAL;
}

int ffio_file_open(struct ffio_entry *e, int dirfd, const char *path, int flags, mode_t mode,
		   struct ffio_file **out)
{
	struct ffio_file *f = calloc(1, sizeof *f);
	int err;

	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	f->fd = -1;
	f->oflags = flags;
	f->entry = e;
	f->path = strdup(path);
	if (!f->path || (err = build_stack(f, e)) < 0) {
		file_free(f);
		return -ENOMEM;
	}
	ffio_in_lib++;
	/* O_APPEND is the core's: writes go to the logical end, which only
	 * the stack knows. */
	flags &= ~O_APPEND;
	err = f->top->ops->open ? f->top->ops->open(f->top, dirfd, path, flags, mode)
				: ffio_below_open(&(struct ffio_layer){.below = f->top}, dirfd, path, flags, mode);
	if (err == 0 && f->fd < 0)
		err = -EBADF; /* a stack without a bottom that opens the file */
	if (err == 0 && (err = ffio_fd_attach(f->fd, f)) < 0) {
		struct ffio_layer *x = FIND(f->top, close);
		if (x)
			x->ops->close(x);
	}
	ffio_in_lib--;
	if (err < 0) {
		file_free(f);
		return err;
	}
	pthread_mutex_lock(&files_lock);
	f->next = files;
	if (files)
		files->prev = f;
	files = f;
	if (f->fd > fd_high)
		fd_high = f->fd;
	pthread_mutex_unlock(&files_lock);
	*out = f;
	return 0;
}

/* Another descriptor of f still attached, other than fd, or -1. */
static int other_fd(struct ffio_file *f, int fd)
{
	for (int i = 0; i <= fd_high && i < ffio_fdtab_size; i++)
		if (i != fd && ffio_fdtab[i] == f)
			return i;
	return -1;
}

int ffio_fd_dup(int oldfd, int newfd)
{
	struct ffio_file *f = ffio_fd_get(oldfd);
	int err;

	if (!f)
		return -EBADF;
	pthread_mutex_lock(&files_lock);
	err = ffio_fd_attach(newfd, f);
	if (err == 0 && newfd > fd_high)
		fd_high = newfd;
	pthread_mutex_unlock(&files_lock);
	return err;
}

int ffio_fd_close(int fd)
{
	struct ffio_file *f;
	int err = 0, last;

	pthread_mutex_lock(&files_lock);
	f = ffio_fd_detach(fd);
	if (!f) {
		pthread_mutex_unlock(&files_lock);
		return -EBADF;
	}
	last = __atomic_sub_fetch(&f->refs, 1, __ATOMIC_RELAXED) == 0;
	if (last) {
		if (f->prev)
			f->prev->next = f->next;
		else
			files = f->next;
		if (f->next)
			f->next->prev = f->prev;
	}
	pthread_mutex_lock(&f->lock);
	if (!last && fd == f->fd)
		f->fd = other_fd(f, fd);
	pthread_mutex_unlock(&files_lock);

	ffio_in_lib++;
	if (last) {
		/* Close every layer, top first: each flushes into the one below. */
		struct ffio_layer *x = FIND(f->top, close);
		int e = x ? x->ops->close(x) : 0;
		if (e < 0)
			ffio_file_set_error(f, e);
	} else if (ffio_real.close(fd) < 0) {
		err = -errno;
	}
	if (err == 0)
		err = ffio_file_take_error(f);
	pthread_mutex_unlock(&f->lock);
	ffio_in_lib--;
	if (last)
		file_free(f);
	return err;
}

/* ---- deferred errors --------------------------------------------------- */

void ffio_file_set_error(struct ffio_file *f, int err)
{
	if (err < 0 && f->error == 0)
		f->error = err;
}

int ffio_file_take_error(struct ffio_file *f)
{
	int err = f->error;
	f->error = 0;
	return err;
}

/* ---- operations on an open file ---------------------------------------- */

#define LOCKED(f, expr)                           \
	({                                        \
		ffio_in_lib++;                    \
		pthread_mutex_lock(&(f)->lock);   \
		__typeof__(expr) r_ = (expr);     \
		pthread_mutex_unlock(&(f)->lock); \
		ffio_in_lib--;                    \
		r_;                               \
	})

static ssize_t do_preadv(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off)
{
	if (off < 0)
		return -EINVAL;
	if ((f->oflags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	return layer_preadv(f->top, iov, iovcnt, off);
}

/* A write: report a deferred error first; one raised while writing is
 * reported by this call (the data was taken, a retry rewrites the same
 * bytes). */
static ssize_t do_pwritev(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t n;
	size_t len = ffio_iov_len(iov, iovcnt);

	if ((f->oflags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (f->error)
		return ffio_file_take_error(f);
	if (off < 0)
		return -EINVAL;
	if (len > (size_t)(LLONG_MAX - off))
		return -EFBIG;
	if (len == 0)
		return 0;
	n = layer_pwritev(f->top, iov, iovcnt, off);
	if (n >= 0 && f->error)
		return ffio_file_take_error(f);
	return n;
}

ssize_t ffio_file_preadv(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off)
{
	return LOCKED(f, do_preadv(f, iov, iovcnt, off));
}

ssize_t ffio_file_pwritev(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off)
{
	return LOCKED(f, do_pwritev(f, iov, iovcnt, off));
}

ssize_t ffio_file_pread(struct ffio_file *f, void *buf, size_t n, off_t off)
{
	struct iovec iov = {buf, n};
	return ffio_file_preadv(f, &iov, 1, off);
}

ssize_t ffio_file_pwrite(struct ffio_file *f, const void *buf, size_t n, off_t off)
{
	struct iovec iov = {(void *)buf, n};
	return ffio_file_pwritev(f, &iov, 1, off);
}

static ssize_t do_readv(struct ffio_file *f, const struct iovec *iov, int iovcnt)
{
	ssize_t n = do_preadv(f, iov, iovcnt, f->pos);
	if (n > 0)
		f->pos += n;
	return n;
}

static ssize_t do_writev(struct ffio_file *f, const struct iovec *iov, int iovcnt)
{
	ssize_t n;

	if (f->oflags & O_APPEND) {
		off_t end;
		int err = ffio_layer_size(f->top, &end);
		if (err < 0)
			return err;
		f->pos = end;
	}
	n = do_pwritev(f, iov, iovcnt, f->pos);
	if (n > 0)
		f->pos += n;
	return n;
}

ssize_t ffio_file_readv(struct ffio_file *f, const struct iovec *iov, int iovcnt)
{
	return LOCKED(f, do_readv(f, iov, iovcnt));
}

ssize_t ffio_file_writev(struct ffio_file *f, const struct iovec *iov, int iovcnt)
{
	return LOCKED(f, do_writev(f, iov, iovcnt));
}

static off_t do_seek(struct ffio_file *f, off_t off, int whence)
{
	off_t base, r;
	int err;

	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END:
		if ((err = ffio_layer_size(f->top, &base)) < 0)
			return err;
		break;
#ifdef SEEK_DATA
	case SEEK_DATA:
	case SEEK_HOLE:
		/* Only the file system knows its holes: write everything first. */
		if ((err = ffio_layer_flush(f->top)) < 0)
			return err;
		r = ffio_real.lseek(f->fd, off, whence);
		if (r < 0)
			return -errno;
		return f->pos = r;
#endif
	default:
		return -EINVAL;
	}
	if ((off > 0 && base > LLONG_MAX - off) || base + off < 0)
		return off > 0 ? -EOVERFLOW : -EINVAL;
	return f->pos = base + off;
}

off_t ffio_file_seek(struct ffio_file *f, off_t off, int whence)
{
	return LOCKED(f, do_seek(f, off, whence));
}

static int do_flush(struct ffio_file *f)
{
	int err = ffio_layer_flush(f->top);
	if (err == 0)
		err = ffio_file_take_error(f);
	return err;
}

int ffio_file_flush(struct ffio_file *f)
{
	return LOCKED(f, do_flush(f));
}

static int do_fsync(struct ffio_file *f, int datasync)
{
	int err = ffio_layer_fsync(f->top, datasync);
	int deferred = ffio_file_take_error(f);
	return err < 0 ? err : deferred;
}

int ffio_file_fsync(struct ffio_file *f, int datasync)
{
	return LOCKED(f, do_fsync(f, datasync));
}

static int do_truncate(struct ffio_file *f, off_t len)
{
	if (len < 0)
		return -EINVAL;
	if ((f->oflags & O_ACCMODE) == O_RDONLY)
		return -EINVAL;
	return ffio_layer_truncate(f->top, len);
}

int ffio_file_truncate(struct ffio_file *f, off_t len)
{
	return LOCKED(f, do_truncate(f, len));
}

int ffio_file_size(struct ffio_file *f, off_t *len)
{
	return LOCKED(f, ffio_layer_size(f->top, len));
}

static int do_invalidate(struct ffio_file *f)
{
	int err = ffio_layer_flush(f->top);
	int e2 = ffio_layer_invalidate(f->top);
	return err < 0 ? err : e2;
}

int ffio_file_invalidate(struct ffio_file *f)
{
	return LOCKED(f, do_invalidate(f));
}

static int do_sync_kernel(struct ffio_file *f)
{
	int err = ffio_layer_flush(f->top);
	if (err < 0)
		return err;
	/* Pipes and sockets have no offset to set. */
	if (ffio_real.lseek(f->fd, f->pos, SEEK_SET) < 0 && errno != ESPIPE)
		return -errno;
	return 0;
}

int ffio_file_sync_kernel(struct ffio_file *f)
{
	return LOCKED(f, do_sync_kernel(f));
}

/* Drop buffered data without writing it (a file being deleted): every
 * layer's discard method, top first; -ENOTSUP when no layer has one (the
 * data will then be written as usual). */
static int do_discard(struct ffio_file *f)
{
	int err = -ENOTSUP;

	for (struct ffio_layer *l = f->top; l; l = l->below) {
		if (!l->ops->discard)
			continue;
		int e = l->ops->discard(l);
		if (err == -ENOTSUP || (err == 0 && e < 0))
			err = e;
	}
	/* The data is gone on purpose: a write-behind error of it is moot. */
	if (err == 0)
		(void)ffio_file_take_error(f);
	return err;
}

int ffio_file_discard(struct ffio_file *f)
{
	return LOCKED(f, do_discard(f));
}

static int do_stats(struct ffio_file *f, struct ffio_stats *st, int max)
{
	int n = 0;
	for (struct ffio_layer *l = f->top; l && n < max; l = l->below) {
		if (!l->ops->stats)
			continue;
		memset(&st[n], 0, sizeof st[n]);
		snprintf(st[n].layer, sizeof st[n].layer, "%s", l->ops->name);
		st[n].position = l->index;
		if (l->ops->stats(l, &st[n]) == 0)
			n++;
	}
	return n;
}

int ffio_file_stats(struct ffio_file *f, struct ffio_stats *st, int max)
{
	return LOCKED(f, do_stats(f, st, max));
}

static int do_set_hint(struct ffio_file *f, unsigned bit, int on)
{
	if (on)
		f->hints |= bit;
	else
		f->hints &= ~bit;
	return 0;
}

void ffio_file_set_hint(struct ffio_file *f, unsigned bit, int on)
{
	(void)LOCKED(f, do_set_hint(f, bit, on));
}

struct ffio_file *ffio_file_find_inode(dev_t dev, ino_t ino)
{
	struct ffio_file *f;

	if (!files)
		return NULL;
	pthread_mutex_lock(&files_lock);
	for (f = files; f; f = f->next) {
		/* Learnt on the first search, not at open: most programs never
		 * stat a path they have open, and open stays one system call. */
		if (!f->inode_known) {
			struct stat st;
			if (ffio_real.fstat(f->fd, &st) < 0)
				continue;
			f->dev = st.st_dev;
			f->ino = st.st_ino;
			f->inode_known = 1;
		}
		if (f->dev == dev && f->ino == ino)
			break;
	}
	pthread_mutex_unlock(&files_lock);
	return f;
}

/* ---- process events ----------------------------------------------------- */

int ffio_flush_all(void)
{
	int first = 0;

	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		int err = LOCKED(f, do_sync_kernel(f));
		if (err < 0) {
			pthread_mutex_lock(&f->lock);
			ffio_file_set_error(f, err);
			pthread_mutex_unlock(&f->lock);
			if (!first)
				first = err;
		}
	}
	pthread_mutex_unlock(&files_lock);
	return first;
}

void ffio_exit_all(void)
{
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next) {
		ffio_in_lib++;
		pthread_mutex_lock(&f->lock);
		int err = ffio_layer_flush(f->top);
		if (err < 0 || f->error)
			ffio_log("%s: data written through ffio could not be flushed at exit: %s",
				 f->path, strerror(-(err < 0 ? err : f->error)));
		for (struct ffio_layer *l = f->top; l; l = l->below)
			if (l->ops->atexit)
				l->ops->atexit(l);
		pthread_mutex_unlock(&f->lock);
		ffio_in_lib--;
	}
	pthread_mutex_unlock(&files_lock);
}

/* Before fork: flush every file so that the child starts with nothing to
 * flush, then hold every lock so that no file is mid-change in the child. */
void ffio_fork_prepare(void)
{
	ffio_flush_all();
	pthread_mutex_lock(&files_lock);
	for (struct ffio_file *f = files; f; f = f->next)
		pthread_mutex_lock(&f->lock);
}

void ffio_fork_parent(void)
{
	for (struct ffio_file *f = files; f; f = f->next)
		pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&files_lock);
}

void ffio_fork_child(void)
{
	for (struct ffio_file *f = files; f; f = f->next) {
		for (struct ffio_layer *l = f->top; l; l = l->below)
			if (l->ops->atfork_child)
				l->ops->atfork_child(l);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&files_lock);
}
