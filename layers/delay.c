/* layers/delay.c -- the delay layer, a benchmarking aid: it simulates a
 * parallel file system whose every request is a network round trip.  Each
 * request that passes it (pread, pwrite, preadv, pwritev, fsync, each
 * asynchronous request) costs LATENCY + bytes/BANDWIDTH of wall time:
 * delay:LATENCY:BANDWIDTH = delay:latency=T:bandwidth=R (0 = none), e.g.
 * `cache, delay:200us:1g, sys`.
 *
 * The model: the link moves one request's bytes at a time (transfers
 * queue behind each other at BANDWIDTH) while latencies overlap, so
 * asynchronous requests in flight together (up to the submitter's queue
 * depth) share the bandwidth but not the latency.  A request's simulated
 * completion time is computed when it starts; the real I/O is done, then
 * the caller sleeps until that absolute deadline (clock_nanosleep), so the
 * real work is hidden in the simulated cost, not added to it; a wake-up's
 * overshoot is taken off the next requests' cost (at most half of each).  An
 * asynchronous request is handed back (its done() called) from reap()
 * once its deadline has passed.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "ffio-internal.h"

enum { DELAY_P_LATENCY, DELAY_P_BANDWIDTH };

static const struct ffio_param delay_params[] = {
	{ "latency", FFIO_P_TIME, 200000, 0, 60LL * 1000000000, NULL },
	{ "bandwidth", FFIO_P_RATE, 1LL << 30, 0, INT64_MAX, NULL },
	{ NULL, 0, 0, 0, 0, NULL },
};

struct delay;

/* An asynchronous request in flight through this layer. */
struct delay_req {
	struct delay *d;
	struct ffio_req *r;
	void (*done)(struct ffio_req *r);
	void *data;
	uint64_t deadline;     /* CLOCK_MONOTONIC ns when it may complete */
	struct delay_req *next; /* in the list of completed-below requests */
};

struct delay {
	struct ffio_layer base;
	pthread_mutex_t lock;   /* guards everything below */
	uint64_t link_free;     /* when the simulated link finishes its transfers */
	uint64_t credit;        /* ns the last synchronous sleep overshot its deadline */
	unsigned inflight;      /* submitted below, not yet completed there */
	struct delay_req *held; /* completed below, waiting for their deadline */
	struct ffio_stats st;   /* requests, bytes, simulated time charged */
};

static struct delay *DL(struct ffio_layer *l)
{
	return (struct delay *)l;
}

/* The simulated completion time of a request of n bytes starting now;
 * records it in the statistics under op. */
static uint64_t delay_deadline(struct delay *d, enum ffio_stat_op op, size_t n)
{
	const struct ffio_layer_spec *s = d->base.spec;
	uint64_t latency = (uint64_t)s->arg[DELAY_P_LATENCY];
	uint64_t rate = (uint64_t)s->arg[DELAY_P_BANDWIDTH];
	uint64_t xfer = rate ? (uint64_t)((unsigned __int128)n * 1000000000u / rate) : 0;
	uint64_t now = ffio_now_ns(), start, deadline;

	pthread_mutex_lock(&d->lock);
	start = d->link_free > now ? d->link_free : now;
	d->link_free = start + xfer;
	deadline = start + xfer + latency;
	if (d->credit) {
		/* Give back what the previous sleep overshot, so that a run of
		 * requests costs the sum of their simulated times, not that
		 * plus every wake-up latency; at most half of this request's
		 * own cost, so that on a busy machine no request looks free (a
		 * cache above times its loads to tell a device from memory). */
		uint64_t half = (xfer + latency) / 2;
		uint64_t c = d->credit < half ? d->credit : half;
		deadline -= c;
		d->credit -= c;
	}
	d->st.count[op]++;
	d->st.bytes[op] += n;
	d->st.nsec[op] += deadline - now;
	pthread_mutex_unlock(&d->lock);
	return deadline;
}

/* Sleep until deadline; returns by how much the wake-up overshot it. */
static uint64_t sleep_until(uint64_t deadline)
{
	struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };
	uint64_t now = ffio_now_ns();

	if (now >= deadline)
		return 0;
	while (ffio_real.clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	now = ffio_now_ns();
	return now > deadline ? now - deadline : 0;
}

/* A synchronous request's wait; its overshoot is credited to the next one
 * (at most 10 ms, so that one long stall is not paid back as free I/O). */
static void delay_wait(struct delay *d, uint64_t deadline)
{
	uint64_t over = sleep_until(deadline);

	pthread_mutex_lock(&d->lock);
	d->credit = over < 10000000u ? over : 10000000u;
	pthread_mutex_unlock(&d->lock);
}

static ssize_t delay_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	uint64_t deadline = delay_deadline(DL(l), FFIO_STAT_READ, ffio_iov_len(iov, iovcnt));
	ssize_t r = ffio_below_preadv(l, iov, iovcnt, off);

	delay_wait(DL(l), deadline);
	return r;
}

static ssize_t delay_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	uint64_t deadline = delay_deadline(DL(l), FFIO_STAT_WRITE, ffio_iov_len(iov, iovcnt));
	ssize_t r = ffio_below_pwritev(l, iov, iovcnt, off);

	delay_wait(DL(l), deadline);
	return r;
}

static int delay_fsync(struct ffio_layer *l, int datasync)
{
	uint64_t deadline = delay_deadline(DL(l), FFIO_STAT_SYNC, 0);
	int r = ffio_below_fsync(l, datasync);

	delay_wait(DL(l), deadline);
	return r;
}

/* ---- asynchronous requests ---------------------------------------------- */

/* Completion below: give the request its own done() back and hold it
 * until its deadline (reap hands it on). */
static void delay_done(struct ffio_req *r)
{
	struct delay_req *w = r->data;
	struct delay *d = w->d;

	r->done = w->done;
	r->data = w->data;
	pthread_mutex_lock(&d->lock);
	d->inflight--;
	w->next = d->held;
	d->held = w;
	pthread_mutex_unlock(&d->lock);
}

static int delay_submit(struct ffio_layer *l, struct ffio_req *r)
{
	struct delay *d = DL(l);
	struct delay_req *w = malloc(sizeof *w);
	enum ffio_stat_op op;
	size_t n = 0;
	int rc;

	if (!w)
		return -ENOMEM;
	if (r->op == FFIO_OP_READ || r->op == FFIO_OP_WRITE) {
		op = r->op == FFIO_OP_READ ? FFIO_STAT_READ : FFIO_STAT_WRITE;
		n = ffio_iov_len(r->iov, r->iovcnt);
	} else {
		op = FFIO_STAT_SYNC;
	}
	w->d = d;
	w->r = r;
	w->done = r->done;
	w->data = r->data;
	w->next = NULL;
	w->deadline = delay_deadline(d, op, n);
	r->done = delay_done;
	r->data = w;
	pthread_mutex_lock(&d->lock);
	d->inflight++;
	pthread_mutex_unlock(&d->lock);
	rc = ffio_below_submit(l, r);
	if (rc < 0 && r->done == delay_done) {
		/* Refused without completion: the request is the caller's again. */
		r->done = w->done;
		r->data = w->data;
		pthread_mutex_lock(&d->lock);
		d->inflight--;
		pthread_mutex_unlock(&d->lock);
		free(w);
	}
	return rc;
}

/* Take the held request with the earliest deadline if it is due by now
 * (or, with now == UINT64_MAX, whatever its deadline); *next gets the
 * earliest deadline still held (UINT64_MAX when none). */
static struct delay_req *take_due(struct delay *d, uint64_t now, uint64_t *next)
{
	struct delay_req **best = NULL, *w = NULL;

	pthread_mutex_lock(&d->lock);
	for (struct delay_req **p = &d->held; *p; p = &(*p)->next)
		if (!best || (*p)->deadline < (*best)->deadline)
			best = p;
	if (best && (*best)->deadline <= now) {
		w = *best;
		*best = w->next;
	}
	*next = UINT64_MAX;
	for (struct delay_req *p = d->held; p; p = p->next)
		if (p->deadline < *next)
			*next = p->deadline;
	pthread_mutex_unlock(&d->lock);
	return w;
}

/* Hand back at least min requests (fewer only when no more are in
 * flight), waiting for their deadlines.  Returns how many were handed back,
 * or -errno from the layer below. */
static int delay_reap(struct ffio_layer *l, unsigned min)
{
	struct delay *d = DL(l);
	unsigned handed = 0, inflight;
	uint64_t next;
	int rc;

	pthread_mutex_lock(&d->lock);
	inflight = d->inflight;
	pthread_mutex_unlock(&d->lock);
	if (inflight && (rc = ffio_below_reap(l, 0)) < 0)
		return rc;
	for (;;) {
		struct delay_req *w;
		while ((w = take_due(d, ffio_now_ns(), &next)) != NULL) {
			struct ffio_req *r = w->r;
			free(w);
			if (r->done)
				r->done(r);
			handed++;
		}
		if (handed >= min)
			break;
		if (next != UINT64_MAX) {
			sleep_until(next);
			continue;
		}
		pthread_mutex_lock(&d->lock);
		inflight = d->inflight;
		pthread_mutex_unlock(&d->lock);
		if (!inflight)
			break;
		if ((rc = ffio_below_reap(l, 1)) < 0)
			return rc;
		pthread_mutex_lock(&d->lock);
		rc = d->inflight == inflight && !d->held;
		pthread_mutex_unlock(&d->lock);
		if (rc)
			break; /* the layer below completed nothing: do not spin */
	}
	return (int)handed;
}

static int delay_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	int rc = pthread_mutex_init(&DL(l)->lock, NULL);

	return rc ? -rc : ffio_below_open(l, dirfd, path, flags, mode);
}

/* Whatever is still held (the layer above should have reaped it) is
 * handed back before the file closes. */
static int delay_close(struct ffio_layer *l)
{
	int rc = delay_reap(l, UINT32_MAX);
	int rc2 = ffio_below_close(l);

	return rc < 0 ? rc : rc2;
}

static int delay_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	struct delay *d = DL(l);

	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < FFIO_STAT_NOPS; i++) {
		st->count[i] = d->st.count[i];
		st->bytes[i] = d->st.bytes[i];
		st->nsec[i] = d->st.nsec[i];
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}

const struct ffio_layer_ops ffio_layer_delay = {
	.name = "delay",
	.params = delay_params,
	.instance_size = sizeof(struct delay),
	.open = delay_open,
	.close = delay_close,
	.preadv = delay_preadv,
	.pwritev = delay_pwritev,
	.fsync = delay_fsync,
	.submit = delay_submit,
	.reap = delay_reap,
	.stats = delay_stats,
};
