/* layers/fault.c -- the fault layer, for tests: passes AFTER operations of
 * one kind (read, write, sync or any of them) down unchanged, then fails
 * every later one (or, with .once, only the next one) with ERRNO, without
 * calling the layer below.  fault:OP:ERRNO:AFTER =
 * fault:op=OP:errno=ERRNO:after=N.  Placed under a cache it shows what the
 * application sees when a write-behind fails.
 *
 * Kinds: read = pread, preadv and asynchronous reads; write = pwrite,
 * pwritev and asynchronous writes; sync = fsync, fdatasync and their
 * asynchronous forms.  Other calls (open, close, flush, truncate, size)
 * pass through and are not counted.
 */
#include "config.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include "ffio-internal.h"

#define FAULT_ONCE 0x1u

enum fault_kind { FAULT_READ, FAULT_WRITE, FAULT_SYNC, FAULT_ANY };
enum { FAULT_P_OP, FAULT_P_ERRNO, FAULT_P_AFTER };

static const char *const fault_kind_names[] = { "read", "write", "sync", "any", NULL };

static const struct ffio_flag fault_flags[] = {
	{ "once", FAULT_ONCE, 0 },
	{ NULL, 0, 0 },
};

static const struct ffio_param fault_params[] = {
	{ "op", FFIO_P_ENUM, FAULT_ANY, 0, FAULT_ANY, fault_kind_names },
	{ "errno", FFIO_P_ERRNO, EIO, 1, 4095, NULL },
	{ "after", FFIO_P_COUNT, 0, 0, INT64_MAX, NULL },
	{ NULL, 0, 0, 0, 0, NULL },
};

struct fault {
	struct ffio_layer base;
	_Atomic uint64_t seen;            /* operations of the chosen kind so far */
	_Atomic uint64_t count[3];        /* operations of each kind seen (stats) */
	_Atomic uint64_t bytes[3];        /* bytes passed down (stats) */
};

/* 0 to pass an operation of kind k down, or the -errno to fail it with. */
static int fault_check(struct ffio_layer *l, enum fault_kind k)
{
	struct fault *fl = (struct fault *)l;
	const struct ffio_layer_spec *s = l->spec;
	uint64_t after = (uint64_t)s->arg[FAULT_P_AFTER];
	uint64_t n;

	atomic_fetch_add(&fl->count[k], 1);
	if (s->arg[FAULT_P_OP] != FAULT_ANY && s->arg[FAULT_P_OP] != (int64_t)k)
		return 0;
	n = atomic_fetch_add(&fl->seen, 1);
	if (n < after || ((s->flags & FAULT_ONCE) && n != after))
		return 0;
	return -(int)s->arg[FAULT_P_ERRNO];
}

static void fault_bytes(struct ffio_layer *l, enum fault_kind k, ssize_t r)
{
	if (r > 0)
		atomic_fetch_add(&((struct fault *)l)->bytes[k], (uint64_t)r);
}

static ssize_t fault_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t r = fault_check(l, FAULT_READ);

	if (r == 0)
		fault_bytes(l, FAULT_READ, r = ffio_below_preadv(l, iov, iovcnt, off));
	return r;
}

static ssize_t fault_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t r = fault_check(l, FAULT_WRITE);

	if (r == 0)
		fault_bytes(l, FAULT_WRITE, r = ffio_below_pwritev(l, iov, iovcnt, off));
	return r;
}

static int fault_fsync(struct ffio_layer *l, int datasync)
{
	int r = fault_check(l, FAULT_SYNC);

	return r ? r : ffio_below_fsync(l, datasync);
}

/* An asynchronous request to fail is completed at once with res = -ERRNO. */
static int fault_submit(struct ffio_layer *l, struct ffio_req *r)
{
	enum fault_kind k = r->op == FFIO_OP_READ ? FAULT_READ : r->op == FFIO_OP_WRITE ? FAULT_WRITE : FAULT_SYNC;
	int err = fault_check(l, k);

	if (err == 0) {
		if (k != FAULT_SYNC)
			fault_bytes(l, k, (ssize_t)ffio_iov_len(r->iov, r->iovcnt));
		return ffio_below_submit(l, r);
	}
	r->res = err;
	if (r->done)
		r->done(r);
	return 0;
}

/* Operations of each kind that reached this layer (failed ones included),
 * and the bytes passed down. */
static int fault_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	struct fault *fl = (struct fault *)l;
	static const enum ffio_stat_op map[3] = { FFIO_STAT_READ, FFIO_STAT_WRITE, FFIO_STAT_SYNC };

	for (int k = 0; k < 3; k++) {
		st->count[map[k]] = atomic_load(&fl->count[k]);
		st->bytes[map[k]] = atomic_load(&fl->bytes[k]);
	}
	return 0;
}

const struct ffio_layer_ops ffio_layer_fault = {
	.name = "fault",
	.flags = fault_flags,
	.params = fault_params,
	.instance_size = sizeof(struct fault),
	.preadv = fault_preadv,
	.pwritev = fault_pwritev,
	.fsync = fault_fsync,
	.submit = fault_submit,
	.stats = fault_stats,
};
