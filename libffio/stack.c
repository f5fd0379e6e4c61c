/* libffio/stack.c -- walking down a stack of layers: each ffio_below_* call
 * finds the first layer at or below the given one that implements the
 * method (a NULL slot passes the call through) and makes it; vector and
 * plain transfers stand in for each other; a stack without an asynchronous
 * bottom completes requests synchronously. */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "ffio-internal.h"

/* Every call into a stack passes here (or through the few direct calls of
 * ofd.c and file.c, which count too, and learn nothing): the file's
 * stack_calls moves on.  A call that may bring data or a size into the
 * stack says which (FFIO_LEARNT_*): what a message heard must undo
 * (coherence.c). */
static inline struct ffio_layer *entered(struct ffio_layer *x, int learns)
{
	if (x) {
		x->file->stack_calls++;
		ffio_note_learnt(learns);
	}
	return x;
}

/* The first layer at or below x whose method m is set, or NULL. */
#define FIND(x, m, learns)                                \
	({                                                \
		struct ffio_layer *f_ = entered(x, learns); \
		while (f_ && !f_->ops->m)                \
			f_ = f_->below;                  \
		f_;                                      \
	})

int ffio_below_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct ffio_layer *x = FIND(l->below, open, FFIO_LEARNT_DATA | FFIO_LEARNT_SIZE);
	return x ? x->ops->open(x, dirfd, path, flags, mode) : -ENOSYS;
}

int ffio_below_close(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l->below, close, 0);
	return x ? x->ops->close(x) : 0;
}

/* A vector transfer entering at x: the first layer implementing either
 * form of the direction handles it; with only the plain form, one call per
 * buffer, stopping at a short one. */
static ssize_t layer_rwv(struct ffio_layer *x, int write, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t total = 0;

	for (x = entered(x, write ? 0 : FFIO_LEARNT_DATA); x; x = x->below) {
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
	for (x = entered(x, FFIO_LEARNT_DATA); x; x = x->below) {
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
	for (x = entered(x, 0); x; x = x->below) {
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

/* A request every layer of the stack passes (struct ffio_layer's passes):
 * the one kernel call the bottom would make, made here, then each layer
 * told.  A layer standing aside costs its own test and its note of the
 * request, not a walk down the stack (a 320 B write into a shared file
 * through a cache aside took about 600 instructions beyond the call). */
static inline int stack_passes(const struct ffio_layer *x, unsigned what, size_t len)
{
	if (!x || len > FFIO_WRITE_WHOLE)
		return 0;
	for (; x; x = x->below)
		if (!(x->passes & what))
			return 0;
	return 1;
}

FFIO_HOT static ssize_t stack_pass(struct ffio_file *f, int write, const struct iovec *iov, int iovcnt, off_t off,
			  size_t len)
{
	ssize_t r = ffio_kernel_once(entered(f->top, 0)->file->fd, write, iov, iovcnt, off);
	for (struct ffio_layer *x = f->top; x; x = x->below)
		if (x->ops->passed)
			x->ops->passed(x, write, off, len, r);
	return r;
}

FFIO_HOT ssize_t ffio_stack_preadv(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off, size_t len)
{
	if (stack_passes(f->top, FFIO_PASS_READ, len))
		return stack_pass(f, 0, iov, iovcnt, off, len);
	return layer_preadv(f->top, iov, iovcnt, off);
}

FFIO_HOT ssize_t ffio_stack_pwritev(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off, size_t len)
{
	if (stack_passes(f->top, FFIO_PASS_WRITE, len))
		return stack_pass(f, 1, iov, iovcnt, off, len);
	return layer_pwritev(f->top, iov, iovcnt, off);
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
	struct ffio_layer *x = FIND(l, flush, 0);
	return x ? x->ops->flush(x) : 0;
}

int ffio_below_flush(struct ffio_layer *l)
{
	return l->below ? ffio_layer_flush(l->below) : 0;
}

int ffio_layer_fsync(struct ffio_layer *l, int datasync)
{
	struct ffio_layer *x = FIND(l, fsync, 0);
	return x ? x->ops->fsync(x, datasync) : -ENOSYS;
}

int ffio_below_fsync(struct ffio_layer *l, int datasync)
{
	return l->below ? ffio_layer_fsync(l->below, datasync) : -ENOSYS;
}

int ffio_layer_truncate(struct ffio_layer *l, off_t len)
{
	struct ffio_layer *x = FIND(l, truncate, FFIO_LEARNT_SIZE);
	return x ? x->ops->truncate(x, len) : -ENOSYS;
}

int ffio_below_truncate(struct ffio_layer *l, off_t len)
{
	return l->below ? ffio_layer_truncate(l->below, len) : -ENOSYS;
}

int ffio_layer_size(struct ffio_layer *l, off_t *len)
{
	struct ffio_layer *x = FIND(l, size, FFIO_LEARNT_SIZE);
	return x ? x->ops->size(x, len) : -ENOSYS;
}

int ffio_below_size(struct ffio_layer *l, off_t *len)
{
	return l->below ? ffio_layer_size(l->below, len) : -ENOSYS;
}

int ffio_layer_invalidate(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l, invalidate, 0);
	return x ? x->ops->invalidate(x) : 0;
}

int ffio_below_invalidate(struct ffio_layer *l)
{
	return l->below ? ffio_layer_invalidate(l->below) : 0;
}

int ffio_below_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	struct ffio_layer *x = FIND(l->below, advise, FFIO_LEARNT_DATA);
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
	struct ffio_layer *x = FIND(l->below, submit, r->op == FFIO_OP_READ ? FFIO_LEARNT_DATA : 0);
	return x ? x->ops->submit(x, r) : submit_sync(l->below, r);
}

int ffio_below_commit(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l->below, commit, 0);
	return x ? x->ops->commit(x) : 0;
}

int ffio_below_reap(struct ffio_layer *l, unsigned min)
{
	struct ffio_layer *x = FIND(l->below, reap, 0);
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

int ffio_layer_close(struct ffio_layer *l)
{
	struct ffio_layer *x = FIND(l, close, 0);
	return x ? x->ops->close(x) : 0;
}

int ffio_layer_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct ffio_layer *x = FIND(l, open, FFIO_LEARNT_DATA | FFIO_LEARNT_SIZE);
	return x ? x->ops->open(x, dirfd, path, flags, mode) : -ENOSYS;
}
