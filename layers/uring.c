/* layers/uring.c -- the uring bottom layer: "uring:DEPTH" (flags .direct,
 * .sqpoll).  It opens the file itself and implements the stack's
 * asynchronous contract (submit / commit / reap) natively on an io_uring,
 * one ring per open file, at most DEPTH requests in flight.  Synchronous
 * calls take the fastest path per request: plain system calls, except large
 * O_DIRECT transfers, which are split and run at queue depth.  Where
 * io_uring cannot be set up it says so once and behaves as sys.  See
 * ffio-uring(7).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffio-internal.h"

#define URING_DIRECT 0x1u
#define URING_SQPOLL 0x2u

static const struct ffio_flag uring_flags[] = {
	{ .name = "direct", .bit = URING_DIRECT },
	{ .name = "sqpoll", .bit = URING_SQPOLL },
	{ NULL, 0, 0 },
};

static const struct ffio_param uring_params[] = {
	{ .name = "depth", .type = FFIO_P_COUNT, .def = 64, .min = 1, .max = 4096 },
	{ NULL, 0, 0, 0, 0, NULL },
};

#ifndef HAVE_LIBURING

const struct ffio_layer_ops ffio_layer_uring = {
	.name = "uring",
	.flags = uring_flags,
	.params = uring_params,
	.kind = FFIO_LAYER_BOTTOM,
	.instance_size = sizeof(struct ffio_layer),
	.unavailable = "built without liburing",
	.fallback = "sys",
};

#else /* HAVE_LIBURING */

#include <liburing.h>

/* Buffered writes at least this large go to a kernel worker (IOSQE_ASYNC). */
#define ASYNC_WRITE_MIN (256u << 10)

/* One request in flight: the submitter's request and our progress on it. */
struct uring_slot {
	struct ffio_req *r;      /* NULL when the slot is free */
	size_t want;             /* bytes asked for (read/write) */
	size_t done;             /* bytes transferred so far */
	struct iovec *tail;      /* the remainder after a short transfer (malloc'd) */
	struct uring_piece *pieces; /* a buffered write in flight as pieces (malloc'd) */
	unsigned npieces, pieces_left;
	struct uring_slot *next_free;
};

/* One piece of a large buffered write: the write goes to the kernel as
 * SQEs of at most FFIO_WRITE_PIECE bytes (see ffio_kernel_transfer;
 * measured with fio, io_uring buffered writes of 4 MiB ran at 0.4-1 GiB/s
 * and of 512 KiB at 5.8-6.9 GiB/s here).  The kernel runs the writes of
 * one file in submission order.  Its CQE's user data is the piece's
 * address with the low bit set (a slot's is the slot's). */
struct uring_piece {
	struct uring_slot *s;
	size_t len;              /* bytes of this piece */
	int res;                 /* its completion */
	struct iovec *iov;
	int cnt;
};

enum { RING_NONE, RING_READY, RING_UNAVAILABLE };

/* Every SQE names the file by its index among the ring's registered files
 * (IOSQE_FIXED_FILE), never by descriptor: the kernel resolves a
 * descriptor when it runs the request, and a request waiting in a kernel
 * worker would find the descriptor closed (a dup of it keeps the file
 * open), or another file that took its number, and write there.  The ring
 * holds the open file itself from set-up to close. */
#define RING_FILE 0

struct uring {
	struct ffio_layer base;
	unsigned depth;
	unsigned flags;
	int ring_state;            /* RING_* */
	struct io_uring ring;
	struct uring_slot *slots;  /* depth of them */
	struct uring_slot *free;   /* free slots */
	unsigned inflight;         /* slots in use (prepared or submitted) */
	unsigned writes;           /* of which writes and syncs */
	unsigned prepared;         /* SQEs prepared but not yet committed */
	struct ffio_stats st;
};

static int uring_unavailable_logged;
static int uring_sqpoll_logged;

static struct uring *U(struct ffio_layer *l)
{
	return (struct uring *)l;
}

static void count(struct uring *u, int op, size_t bytes)
{
	u->st.count[op]++;
	u->st.bytes[op] += bytes;
}

/* ---- the ring ------------------------------------------------------------ */

/* Rings of closed files, kept for the next file that needs one: setting
 * a ring up costs about 100 us (mmap of its queues), more than opening,
 * writing and closing a small file.  A ring is kept only when nothing is
 * in flight on it; a forked child drops the parent's (they are not its). */
#define IDLE_RINGS 4
struct idle_ring {
	struct io_uring ring;
	unsigned depth, flags;
};
static struct idle_ring idle[IDLE_RINGS];
static int nidle;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;

/* A ring's end: its descriptor is ffio's own (ffio_fd_own) until then. */
static void ring_exit(struct io_uring *ring)
{
	ffio_fd_disown(ring->ring_fd);
	io_uring_queue_exit(ring);
}

static void idle_drop_in_child(void)
{
	for (int i = 0; i < nidle; i++)
		ring_exit(&idle[i].ring); /* our copy of the mappings and fd */
	nidle = 0;
}

/* The program ran out of descriptors (ffio_fd_pressure): one idle ring's
 * is given up (1), if there is one. */
static int idle_release(void)
{
	struct io_uring ring;
	int found = 0;
	pthread_mutex_lock(&idle_lock);
	if (nidle > 0) {
		ring = idle[--nidle].ring;
		found = 1;
	}
	pthread_mutex_unlock(&idle_lock);
	if (found)
		ring_exit(&ring);
	return found;
}

static void idle_init(void)
{
	ffio_atfork_hold(&idle_lock, FFIO_LOCK_IDLE_RINGS);
	ffio_atfork(NULL, NULL, idle_drop_in_child);
	ffio_fd_on_pressure(idle_release);
}

/* Take an idle ring made for the same depth and flags (1), or none (0). */
static int idle_take(struct uring *u)
{
	int found = 0;
	pthread_mutex_lock(&idle_lock);
	for (int i = nidle - 1; i >= 0 && !found; i--) {
		if (idle[i].depth == u->depth && idle[i].flags == (u->flags & URING_SQPOLL)) {
			u->ring = idle[i].ring;
			idle[i] = idle[--nidle];
			found = 1;
		}
	}
	pthread_mutex_unlock(&idle_lock);
	return found;
}

/* Keep a drained ring for later (1), or let the caller free it (0). */
static int idle_put(struct uring *u)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int kept = 0;
	pthread_once(&once, idle_init);
	pthread_mutex_lock(&idle_lock);
	if (nidle < IDLE_RINGS) {
		idle[nidle++] = (struct idle_ring){u->ring, u->depth, u->flags & URING_SQPOLL};
		kept = 1;
	}
	pthread_mutex_unlock(&idle_lock);
	return kept;
}

/* Every request slot on the free list. */
static void slots_link(struct uring *u)
{
	for (unsigned i = 0; i < u->depth; i++)
		u->slots[i].next_free = i + 1 < u->depth ? &u->slots[i + 1] : NULL;
	u->free = u->depth ? &u->slots[0] : NULL;
}

/* The request slots, set up with the ring: a file that never submits
 * asynchronously (Program I's 1 MiB calls go straight through) does not
 * pay for DEPTH of them at every open.  0 or -ENOMEM. */
static int slots_init(struct uring *u)
{
	if (u->slots)
		return 0;
	if (!(u->slots = calloc(u->depth, sizeof *u->slots)))
		return -ENOMEM;
	slots_link(u);
	return 0;
}

/* Set the ring up on first use.  Returns 1 when the ring is ready, 0 when
 * the layer runs as sys (io_uring unavailable here). */
static int ring_ready(struct uring *u)
{
	if (u->ring_state == RING_READY)
		return 1;
	if (u->ring_state == RING_UNAVAILABLE)
		return 0;

	int err = -ENOSYS;
	if (ffio_env_flag(FFIO_ENV_URING_DISABLE)) { /* test and debug knob */
		err = -EPERM;
	} else if (idle_take(u)) {
		err = 0;
	} else {
		struct io_uring_params p;
		memset(&p, 0, sizeof p);
		if (u->flags & URING_SQPOLL) {
			p.flags = IORING_SETUP_SQPOLL;
			p.sq_thread_idle = 50; /* ms */
			err = io_uring_queue_init_params(u->depth, &u->ring, &p);
			if (err < 0) {
				ffio_log_once(&uring_sqpoll_logged,
					      "layer 'uring': .sqpoll is not available here (%s); using a ring without it",
					      strerror(-err));
				memset(&p, 0, sizeof p);
			}
		}
		if (!(u->flags & URING_SQPOLL) || err < 0)
			err = io_uring_queue_init_params(u->depth, &u->ring, &p);
		if (err == 0) { /* the ring's descriptor out of the program's way */
			int old = u->ring.ring_fd, fd = ffio_fd_own(old);
			u->ring.ring_fd = fd;
			if (u->ring.enter_ring_fd == old)
				u->ring.enter_ring_fd = fd;
		}
	}
	if (err == 0) {
		int fd = u->base.file->fd;
		err = slots_init(u);
		if (err == 0)
			err = io_uring_register_files(&u->ring, &fd, 1);
		if (err < 0)
			ring_exit(&u->ring);
	}
	if (err < 0) {
		ffio_log_once(&uring_unavailable_logged,
			      "layer 'uring' is not available here (io_uring cannot be set up: %s); using 'sys'",
			      strerror(-err));
		u->ring_state = RING_UNAVAILABLE;
		return 0;
	}
	u->ring_state = RING_READY;
	return 1;
}

/* Commit prepared SQEs: one io_uring_enter for all of them. */
static int ring_commit(struct uring *u)
{
	while (u->prepared > 0) {
		int n = io_uring_submit(&u->ring);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		if ((unsigned)n >= u->prepared)
			u->prepared = 0;
		else
			u->prepared -= n;
		if (n == 0 && io_uring_sq_ready(&u->ring) == 0)
			u->prepared = 0;
	}
	return 0;
}

static struct io_uring_sqe *ring_sqe(struct uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		if (ring_commit(u) < 0)
			return NULL;
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

/* The remaining part of a read or write after slot->done bytes: fills
 * the iovec array and its count (the request's, or slot->tail). */
static int slot_remainder(struct uring_slot *s, const struct iovec **iov, int *cnt)
{
	const struct ffio_req *r = s->r;
	if (s->done == 0) {
		*iov = r->iov;
		*cnt = r->iovcnt;
		return 0;
	}
	if (!s->tail) {
		s->tail = malloc(sizeof *s->tail * (size_t)r->iovcnt);
		if (!s->tail)
			return -ENOMEM;
	}
	size_t skip = s->done;
	int i = 0;
	while (i < r->iovcnt && skip >= r->iov[i].iov_len)
		skip -= r->iov[i++].iov_len;
	int n = 0;
	for (; i < r->iovcnt; i++, n++) {
		s->tail[n].iov_base = (char *)r->iov[i].iov_base + skip;
		s->tail[n].iov_len = r->iov[i].iov_len - skip;
		skip = 0;
	}
	*iov = s->tail;
	*cnt = n;
	return 0;
}

/* Prepare the rest of a buffered write, (iov, cnt), at off, as pieces.
 * Returns 0 when at least one piece is prepared (pieces that could not be
 * count as completed with -EAGAIN: they are written again afterwards). */
static int slot_prepare_pieces(struct uring *u, struct uring_slot *s, const struct iovec *iov, int cnt,
			       off_t off)
{
	size_t n = ffio_iov_len(iov, cnt), np = (n + FFIO_WRITE_PIECE - 1) / FFIO_WRITE_PIECE;
	struct uring_piece *pc = malloc(np * sizeof *pc + ((size_t)cnt + np) * sizeof(struct iovec));
	if (!pc)
		return -ENOMEM;
	/* cut the vector: cnt + np entries hold every piece whole */
	struct iovec *v = (struct iovec *)(pc + np);
	struct ffio_iov_cursor cur = {.iov = iov, .cnt = cnt};
	int room = cnt + (int)np;
	for (size_t k = 0; k < np; k++) {
		pc[k] = (struct uring_piece){.s = s, .iov = v};
		pc[k].cnt = ffio_iov_take(&cur, FFIO_WRITE_PIECE, v, room, &pc[k].len);
		v += pc[k].cnt;
		room -= pc[k].cnt;
	}
	s->pieces = pc;
	s->npieces = s->pieces_left = (unsigned)np;
	size_t k, at;
	for (k = 0, at = 0; k < np; at += pc[k].len, k++) {
		struct io_uring_sqe *sqe = ring_sqe(u);
		if (!sqe)
			break;
		if (pc[k].cnt == 1)
			io_uring_prep_write(sqe, RING_FILE, pc[k].iov[0].iov_base, pc[k].iov[0].iov_len, off + (off_t)at);
		else
			io_uring_prep_writev(sqe, RING_FILE, pc[k].iov, pc[k].cnt, off + (off_t)at);
		io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE | IOSQE_ASYNC);
		io_uring_sqe_set_data(sqe, (void *)((uintptr_t)&pc[k] | 1));
		u->prepared++;
	}
	if (k == 0) {
		free(pc);
		s->pieces = NULL;
		return -EAGAIN;
	}
	for (size_t j = k; j < np; j++) /* not in flight: written again later */
		pc[j].res = -EAGAIN;
	s->pieces_left = (unsigned)k;
	return 0;
}

/* Prepare the SQE for (the rest of) slot s.  No system call. */
static int slot_prepare(struct uring *u, struct uring_slot *s)
{
	struct ffio_req *r = s->r;
	if (r->op == FFIO_OP_WRITE && !(u->flags & URING_DIRECT) && s->want - s->done > FFIO_WRITE_PIECE) {
		const struct iovec *iov;
		int cnt, err = slot_remainder(s, &iov, &cnt);
		return err < 0 ? err : slot_prepare_pieces(u, s, iov, cnt, r->off + (off_t)s->done);
	}
	struct io_uring_sqe *sqe = ring_sqe(u);
	if (!sqe)
		return -EAGAIN;
	unsigned flags = IOSQE_FIXED_FILE;
	if (r->op == FFIO_OP_FSYNC || r->op == FFIO_OP_FDATASYNC) {
		io_uring_prep_fsync(sqe, RING_FILE, r->op == FFIO_OP_FDATASYNC ? IORING_FSYNC_DATASYNC : 0);
		flags |= IOSQE_IO_DRAIN; /* after everything submitted before it */
	} else {
		const struct iovec *iov;
		int cnt;
		int err = slot_remainder(s, &iov, &cnt);
		if (err < 0) {
			io_uring_prep_nop(sqe); /* give the SQE back harmlessly */
			io_uring_sqe_set_data(sqe, NULL);
			u->prepared++;
			return err;
		}
		off_t off = r->off + (off_t)s->done;
		if (r->op == FFIO_OP_READ) {
			if (cnt == 1)
				io_uring_prep_read(sqe, RING_FILE, iov[0].iov_base, iov[0].iov_len, off);
			else
				io_uring_prep_readv(sqe, RING_FILE, iov, cnt, off);
		} else {
			if (cnt == 1)
				io_uring_prep_write(sqe, RING_FILE, iov[0].iov_base, iov[0].iov_len, off);
			else
				io_uring_prep_writev(sqe, RING_FILE, iov, cnt, off);
			/* A large buffered write would otherwise be copied into the
			 * page cache inside io_uring_enter, in the application's
			 * time: hand it to a kernel worker so that it overlaps. */
			if (!(u->flags & URING_DIRECT) && s->want - s->done >= ASYNC_WRITE_MIN)
				flags |= IOSQE_ASYNC;
		}
	}
	io_uring_sqe_set_flags(sqe, flags);
	io_uring_sqe_set_data(sqe, s);
	u->prepared++;
	return 0;
}

/* Give slot s back (its request is no longer in flight). */
static void slot_release(struct uring *u, struct uring_slot *s)
{
	if (s->r->op != FFIO_OP_READ)
		u->writes--;
	free(s->tail);
	s->tail = NULL;
	free(s->pieces);
	s->pieces = NULL;
	s->r = NULL;
	s->next_free = u->free;
	u->free = s;
	u->inflight--;
}

static void slot_finish(struct uring *u, struct uring_slot *s, ssize_t res)
{
	struct ffio_req *r = s->r;
	slot_release(u, s);
	r->res = res;
	r->done(r); /* last: it may submit again */
}

/* Handle one completion.  Returns 1 when a request completed, 0 when it
 * was resubmitted for its remainder. */
static int slot_complete(struct uring *u, struct uring_slot *s, int res)
{
	struct ffio_req *r = s->r;
	if (r->op == FFIO_OP_FSYNC || r->op == FFIO_OP_FDATASYNC) {
		if (res == -EINTR || res == -EAGAIN)
			goto again;
		slot_finish(u, s, res < 0 ? res : 0);
		return 1;
	}
	if (res == -EINTR || res == -EAGAIN)
		goto again;
	if (res < 0) {
		slot_finish(u, s, res);
		return 1;
	}
	if (res == 0) {
		/* end of file for a read; a write that makes no progress is an error */
		if (r->op == FFIO_OP_WRITE && s->done < s->want)
			slot_finish(u, s, -EIO);
		else
			slot_finish(u, s, (ssize_t)s->done);
		return 1;
	}
	s->done += (size_t)res;
	if (s->done >= s->want) {
		slot_finish(u, s, (ssize_t)s->done);
		return 1;
	}
again:;
	int err = slot_prepare(u, s); /* the rest of a short transfer */
	if (err < 0) {
		slot_finish(u, s, err);
		return 1;
	}
	return 0;
}

/* Handle the completion of one piece; when it is the slot's last, the
 * leading run of whole pieces counts as written (as one transfer of that
 * length would) and the rest, if any, goes again.  Returns as
 * slot_complete. */
static int piece_complete(struct uring *u, struct uring_piece *p, int res)
{
	struct uring_slot *s = p->s;
	p->res = res;
	if (--s->pieces_left > 0)
		return 0;
	size_t got = 0;
	int first = 0; /* the completion of the first piece not written whole */
	for (unsigned k = 0; k < s->npieces; k++) {
		if (s->pieces[k].res >= 0)
			got += (size_t)s->pieces[k].res;
		if (s->pieces[k].res < 0 || (size_t)s->pieces[k].res < s->pieces[k].len) {
			first = s->pieces[k].res;
			break;
		}
	}
	free(s->pieces);
	s->pieces = NULL;
	if (got == 0) /* as slot_complete does with one SQE's completion */
		return slot_complete(u, s, first);
	return slot_complete(u, s, got > INT32_MAX ? INT32_MAX : (int)got);
}

/* Run the callbacks of completed requests; wait until at least min have
 * completed (fewer if fewer are in flight).  Returns the number completed. */
static int ring_reap(struct uring *u, unsigned min)
{
	int completed = 0;
	for (;;) {
		struct io_uring_cqe *cqe;
		int err = io_uring_peek_cqe(&u->ring, &cqe);
		if (err == -EAGAIN) {
			/* remainders of short transfers go to the kernel too */
			err = ring_commit(u);
			if (err < 0)
				return err;
			if ((unsigned)completed >= min || u->inflight == 0)
				return completed;
			err = io_uring_wait_cqe(&u->ring, &cqe);
			if (err == -EINTR)
				continue;
		}
		if (err < 0)
			return err;
		uintptr_t data = (uintptr_t)io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		if (data & 1)
			completed += piece_complete(u, (struct uring_piece *)(data & ~(uintptr_t)1), res);
		else if (data)
			completed += slot_complete(u, (struct uring_slot *)data, res);
	}
}

/* Wait until no request in flight conflicts with [off, off+len): writes
 * (and syncs) always conflict; reads only with a write (write != 0). */
static int ring_wait_overlap(struct uring *u, off_t off, size_t len, int write)
{
	for (;;) {
		int busy = 0;
		for (unsigned i = 0; i < u->depth && !busy; i++) {
			const struct uring_slot *s = &u->slots[i];
			if (!s->r || (!write && s->r->op == FFIO_OP_READ))
				continue;
			if (s->r->op == FFIO_OP_FSYNC || s->r->op == FFIO_OP_FDATASYNC)
				busy = write;
			else
				busy = s->r->off < off + (off_t)len && off < s->r->off + (off_t)s->want;
		}
		if (!busy)
			return 0;
		int n = ring_reap(u, 1);
		if (n < 0)
			return n;
	}
}

/* Wait for every write and sync in flight. */
static int ring_wait_writes(struct uring *u)
{
	while (u->writes > 0) {
		int n = ring_reap(u, 1);
		if (n < 0)
			return n;
	}
	return 0;
}

static int ring_wait_all(struct uring *u)
{
	while (u->inflight > 0) {
		int n = ring_reap(u, u->inflight);
		if (n < 0)
			return n;
	}
	return 0;
}

/* ---- synchronous fallback for requests (ring unavailable) --------------- */

static void sync_request(struct uring *u, struct ffio_req *r)
{
	int fd = u->base.file->fd;
	ssize_t res;

	switch (r->op) {
	case FFIO_OP_FSYNC:
	case FFIO_OP_FDATASYNC:
		res = ffio_kernel_sync(fd, r->op == FFIO_OP_FDATASYNC, &u->st);
		break;
	default: {
		int write = r->op == FFIO_OP_WRITE;
		res = ffio_kernel_transfer_full(fd, write, r->iov, r->iovcnt, r->off);
		count(u, write ? FFIO_STAT_WRITE : FFIO_STAT_READ, res > 0 ? (size_t)res : 0);
		break;
	}
	}
	r->res = res;
	r->done(r);
}

/* ---- the asynchronous contract ------------------------------------------ */

static int uring_submit(struct ffio_layer *l, struct ffio_req *r)
{
	struct uring *u = U(l);
	if (!ring_ready(u)) {
		sync_request(u, r);
		return 0;
	}
	int err;
	if (r->op == FFIO_OP_READ || r->op == FFIO_OP_WRITE) {
		/* keep overlapping requests in order (write after read/write,
		 * read after write) */
		err = ring_wait_overlap(u, r->off, ffio_iov_len(r->iov, r->iovcnt),
					r->op == FFIO_OP_WRITE);
		if (err < 0)
			return err;
	}
	while (!u->free) { /* back-pressure: DEPTH requests in flight */
		err = ring_reap(u, 1);
		if (err < 0)
			return err;
	}
	struct uring_slot *s = u->free;
	u->free = s->next_free;
	s->r = r;
	s->done = 0;
	s->tail = NULL;
	s->pieces = NULL;
	s->want = r->op == FFIO_OP_READ || r->op == FFIO_OP_WRITE ? ffio_iov_len(r->iov, r->iovcnt) : 0;
	r->next = NULL;
	u->inflight++;
	if (r->op != FFIO_OP_READ)
		u->writes++;
	switch (r->op) {
	case FFIO_OP_READ: count(u, FFIO_STAT_READ, s->want); break;
	case FFIO_OP_WRITE: count(u, FFIO_STAT_WRITE, s->want); break;
	default: count(u, FFIO_STAT_SYNC, 0); break;
	}
	if (s->want == 0 && (r->op == FFIO_OP_READ || r->op == FFIO_OP_WRITE)) {
		slot_finish(u, s, 0);
		return 0;
	}
	err = slot_prepare(u, s);
	if (err < 0) {
		/* the slot was taken but nothing is in flight for it */
		slot_release(u, s);
		return err;
	}
	return 0;
}

static int uring_commit(struct ffio_layer *l)
{
	struct uring *u = U(l);
	if (u->ring_state != RING_READY)
		return 0;
	return ring_commit(u);
}

static int uring_reap(struct ffio_layer *l, unsigned min)
{
	struct uring *u = U(l);
	if (u->ring_state != RING_READY)
		return 0;
	return ring_reap(u, min);
}

/* ---- synchronous methods --------------------------------------------------- */

/* A synchronous transfer: wait for requests in flight that overlap it
 * (they were submitted first), then one plain call (buffered writes in
 * pieces), the fastest path here.  Large O_DIRECT transfers are not cut
 * into pieces at queue depth: measured with bench/uring_direct and
 * bench/uring_overlap -d, 4 MiB reads so cut ran 0.91-1.02x as fast as
 * one call, and 4 MiB writes 0.81x. */
static ssize_t sync_transfer(struct ffio_layer *l, int write, const struct iovec *iov, int iovcnt, off_t off)
{
	struct uring *u = U(l);
	if (u->inflight) {
		int err = ring_wait_overlap(u, off, ffio_iov_len(iov, iovcnt), write);
		if (err < 0)
			return err;
	}
	return ffio_kernel_transfer(l->file->fd, write, (u->flags & URING_DIRECT) != 0 || l->file->write_whole, iov,
				    iovcnt, off, &u->st);
}

static ssize_t uring_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return sync_transfer(l, 0, iov, iovcnt, off);
}

static ssize_t uring_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	return sync_transfer(l, 1, iov, iovcnt, off);
}

/* Push: everything prepared goes to the kernel, and every write in flight
 * completes (its callback runs). */
static int uring_flush(struct ffio_layer *l)
{
	struct uring *u = U(l);
	if (u->ring_state != RING_READY)
		return 0;
	int err = ring_commit(u);
	if (err < 0)
		return err;
	return ring_wait_writes(u);
}

static int uring_fsync(struct ffio_layer *l, int datasync)
{
	struct uring *u = U(l);
	int err = uring_flush(l);
	if (err < 0)
		return err;
	return ffio_kernel_sync(l->file->fd, datasync, &u->st);
}

static int uring_truncate(struct ffio_layer *l, off_t len)
{
	struct uring *u = U(l);
	int err = uring_flush(l);
	if (err < 0)
		return err;
	return ffio_kernel_truncate(l->file->fd, len, &u->st);
}

static int uring_size(struct ffio_layer *l, off_t *len)
{
	struct uring *u = U(l);
	if (u->writes) {
		int err = uring_flush(l); /* the size includes writes in flight */
		if (err < 0)
			return err;
	}
	return ffio_kernel_size(l->file->fd, len);
}

/* ---- life ------------------------------------------------------------------ */

static int uring_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct uring *u = U(l);
	u->depth = (unsigned)l->spec->arg[0];
	u->flags = l->spec->flags;
	snprintf(u->st.layer, sizeof u->st.layer, "uring");
	u->st.position = l->index;

	flags &= ~O_APPEND; /* the core appends at the logical end */
	if (u->flags & URING_DIRECT)
		flags |= O_DIRECT;
	int fd = ffio_real.openat(dirfd, path, flags, mode);
	if (fd < 0)
		return -errno;
	l->file->fd = ffio_fd_park(fd);
	count(u, FFIO_STAT_OPEN, 0);
	/* the ring is set up on first asynchronous use: opening a file over
	 * uring costs what it costs over sys (bench/uring_direct) */
	return 0;
}

static int uring_close(struct ffio_layer *l)
{
	struct uring *u = U(l);
	int err = 0;
	if (u->ring_state == RING_READY) {
		int e = ring_commit(u);
		if (e == 0)
			e = ring_wait_all(u);
		err = e;
		if (e < 0 || u->inflight || io_uring_unregister_files(&u->ring) < 0 || !idle_put(u))
			ring_exit(&u->ring);
		u->ring_state = RING_NONE;
	}
	free(u->slots);
	u->slots = NULL;
	count(u, FFIO_STAT_CLOSE, 0);
	if (l->file->fd >= 0 && ffio_real.close(l->file->fd) < 0 && err == 0)
		err = -errno;
	l->file->fd = -1;
	return err;
}

static int uring_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	return ffio_kernel_advise(l, (U(l)->flags & URING_DIRECT) != 0, off, len, advice);
}

static int uring_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	*st = U(l)->st;
	return 0;
}

const struct ffio_layer_ops ffio_layer_uring = {
	.name = "uring",
	.flags = uring_flags,
	.params = uring_params,
	.kind = FFIO_LAYER_BOTTOM,
	.instance_size = sizeof(struct uring),
	.open = uring_open,
	.close = uring_close,
	.preadv = uring_preadv,
	.pwritev = uring_pwritev,
	.flush = uring_flush,
	.fsync = uring_fsync,
	.truncate = uring_truncate,
	.size = uring_size,
	.submit = uring_submit,
	.commit = uring_commit,
	.reap = uring_reap,
	.stats = uring_stats,
	.advise = uring_advise,
};

#endif /* HAVE_LIBURING */
