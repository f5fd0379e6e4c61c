/* layers/event.c -- the event layer: for every operation that passes it,
 * counts, bytes, time, a request-size histogram (powers of two) and the
 * access pattern (sequential, strided, random) per direction; a summary at
 * close of the last descriptor (or at exit), optionally one trace line per
 * call.  Placed above and below a cache it shows what the application asked
 * for and what reached the file system.
 *
 * Flags: .summary (default), .trace (summary plus one line per call),
 * .notrace (= .summary); units .bytes (default), .kbytes, .mbytes.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"

#define EV_SUMMARY 0x01u
#define EV_TRACE   0x02u
#define EV_NOTRACE 0x04u
#define EV_MODE    (EV_SUMMARY | EV_TRACE | EV_NOTRACE)
#define EV_BYTES   0x08u
#define EV_KBYTES  0x10u
#define EV_MBYTES  0x20u
#define EV_UNITS   (EV_BYTES | EV_KBYTES | EV_MBYTES)

static const struct ffio_flag event_flags[] = {
	{ "summary", EV_SUMMARY, EV_MODE },
	{ "trace", EV_TRACE, EV_MODE },
	{ "notrace", EV_NOTRACE, EV_MODE },
	{ "bytes", EV_BYTES, EV_UNITS },
	{ "kbytes", EV_KBYTES, EV_UNITS },
	{ "mbytes", EV_MBYTES, EV_UNITS },
	{ NULL, 0, 0 },
};

/* The operations counted, in the order the summary lists them. */
enum ev_op {
	EV_OPEN, EV_READ, EV_WRITE, EV_AREAD, EV_AWRITE, EV_FLUSH, EV_FSYNC,
	EV_AFSYNC, EV_TRUNCATE, EV_SIZE, EV_INVALIDATE, EV_WILLNEED, EV_ADVISE, EV_CLOSE, EV_NOPS
};
static const char *const ev_op_name[EV_NOPS] = {
	"open", "read", "write", "aread", "awrite", "flush", "fsync",
	"afsync", "truncate", "size", "invalidate", "willneed", "advise", "close",
};

#define EV_BUCKETS 64 /* bucket 0: size 0; bucket k: [2^(k-1), 2^k) */
#define EV_STRIDES 8  /* distinct strides remembered per direction */

/* Access pattern and request sizes of one direction (reads or writes). */
struct ev_dir {
	int have_prev;         /* a request was seen */
	off_t prev_off;        /* start of the previous request */
	off_t prev_end;        /* where the previous request ended */
	int64_t last_stride;   /* distance between the previous two starts */
	int prev_tentative;    /* the previous request was counted random but may start a run */
	uint64_t sequential, strided, random;
	struct { int64_t stride; uint64_t count; } stride[EV_STRIDES];
	uint64_t size_hist[EV_BUCKETS];
};

struct event {
	struct ffio_layer base;
	pthread_mutex_t lock; /* guards everything below */
	uint64_t count[EV_NOPS], errors[EV_NOPS], bytes[EV_NOPS], nsec[EV_NOPS];
	struct ev_dir dir[2]; /* 0 reads, 1 writes */
	int reported;         /* the summary has been written */
};

/* An asynchronous request in flight through this layer. */
struct ev_req {
	void (*done)(struct ffio_req *r);
	void *data;
	struct event *ev;
	enum ev_op op;
	size_t len;
	uint64_t start;
};

/* ---- small text helpers ---------------------------------------------- */

/* Text built in a buffer of cap bytes: a trace line's is on the stack (a
 * signal handler on a small alternate stack may trace), a summary's on the
 * heap. */
struct ev_text {
	char *buf;
	size_t cap, len;
};
#define EV_TRACE_LINE 1024
#define EV_SUMMARY_TEXT 8192

static void text_add(struct ev_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct ev_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= t->cap - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	t->len += (size_t)n;
	if (t->len > t->cap - 1)
		t->len = t->cap - 1;
}

/* s as the inside of a JSON string. */
static void text_add_json_string(struct ev_text *t, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			text_add(t, "\\%c", c);
		else if (c < 0x20)
			text_add(t, "\\u%04x", c);
		else
			text_add(t, "%c", c);
	}
}

/* "4k" for 4096: a power of two with a binary suffix. */
static void size_label(char *buf, size_t len, uint64_t v)
{
	static const char suffix[] = "\0kmgtpe";
	int i = 0;

	while (v >= 1024 && v % 1024 == 0 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[i]);
}

static uint64_t bucket_low(int b)
{
	return b == 0 ? 0 : (uint64_t)1 << (b - 1);
}

static int bucket_of(size_t n)
{
	int b = 0;
	while (n) {
		n >>= 1;
		b++;
	}
	return b; /* 0 for 0, 1 for 1, 2 for 2..3, ... */
}

static const char *ev_units(const struct event *ev, double *div)
{
	unsigned f = ev->base.spec ? ev->base.spec->flags : 0;

	if (f & EV_MBYTES) {
		*div = 1048576.0;
		return "MiB";
	}
	if (f & EV_KBYTES) {
		*div = 1024.0;
		return "KiB";
	}
	*div = 1.0;
	return "bytes";
}

static int ev_tracing(const struct event *ev)
{
	return ev->base.spec && (ev->base.spec->flags & EV_TRACE);
}

/* ---- counting ---------------------------------------------------------- */

/* Classify one request of a direction (call with ev->lock held). */
static void dir_note(struct ev_dir *d, off_t off, size_t n, ssize_t res)
{
	int64_t stride = d->have_prev ? (int64_t)(off - d->prev_off) : 0;
	int strided = 0;

	if (off == d->prev_end) {
		d->sequential++;
		d->prev_tentative = 0;
	} else if (d->have_prev && d->last_stride != 0 && stride == d->last_stride) {
		strided = 1;
		d->strided++;
		if (d->prev_tentative) {
			/* The previous jump began this constant-stride run. */
			d->random--;
			d->strided++;
			strided = 2;
		}
		d->prev_tentative = 0;
	} else {
		d->random++;
		d->prev_tentative = 1;
	}
	if (strided) {
		int i, free_slot = -1, least = 0;
		for (i = 0; i < EV_STRIDES; i++) {
			if (d->stride[i].count && d->stride[i].stride == stride)
				break;
			if (!d->stride[i].count && free_slot < 0)
				free_slot = i;
			if (d->stride[i].count < d->stride[least].count)
				least = i;
		}
		if (i == EV_STRIDES) {
			i = free_slot >= 0 ? free_slot : least;
			d->stride[i].stride = stride;
			d->stride[i].count = 0;
		}
		d->stride[i].count += (uint64_t)strided;
	}
	d->size_hist[bucket_of(n)]++;
	d->last_stride = stride;
	d->have_prev = 1;
	d->prev_off = off;
	d->prev_end = off + (res >= 0 ? (off_t)res : (off_t)n);
}

static void ev_count(struct event *ev, enum ev_op op, ssize_t res, uint64_t bytes, uint64_t ns)
{
	ev->count[op]++;
	if (res < 0)
		ev->errors[op]++;
	ev->bytes[op] += bytes;
	ev->nsec[op] += ns;
}

/* One trace line (when .trace is set). */
static void ev_trace(struct event *ev, enum ev_op op, off_t off, size_t n, int64_t res, uint64_t ns)
{
	char line[EV_TRACE_LINE], label[160];
	struct ev_text t = {.buf = line, .cap = sizeof line};

	if (!ev_tracing(ev))
		return;
	ffio_layer_label(&ev->base, label, sizeof label);
	if (ffio_logformat_json) {
		text_add(&t, "{\"trace\":\"");
		text_add_json_string(&t, label);
		text_add(&t, "\",\"op\":\"%s\",\"offset\":%lld,\"size\":%zu,\"result\":%" PRId64
			 ",\"seconds\":%.9f}\n",
			 ev_op_name[op], (long long)off, n, res, ns / 1e9);
	} else {
		text_add(&t, "ffio: %s trace: %s", label, ev_op_name[op]);
		if (op == EV_READ || op == EV_WRITE || op == EV_AREAD || op == EV_AWRITE || op == EV_WILLNEED)
			text_add(&t, " off=%lld size=%zu", (long long)off, n);
		else if (op == EV_TRUNCATE)
			text_add(&t, " len=%lld", (long long)off);
		else if (op == EV_ADVISE)
			text_add(&t, " %s", off == POSIX_FADV_RANDOM ? "random" : off == POSIX_FADV_NORMAL ? "normal" : "other");
		text_add(&t, " res=%" PRId64 " time=%.6fs\n", res, ns / 1e9);
	}
	ffio_log_raw(t.buf, t.len);
}

/* Count a read or write request of n bytes at off. */
static void ev_io(struct event *ev, enum ev_op op, off_t off, size_t n, ssize_t res, uint64_t ns)
{
	int dir = (op == EV_WRITE || op == EV_AWRITE);

	pthread_mutex_lock(&ev->lock);
	ev_count(ev, op, res, res > 0 ? (uint64_t)res : 0, ns);
	dir_note(&ev->dir[dir], off, n, res);
	pthread_mutex_unlock(&ev->lock);
	ev_trace(ev, op, off, n, res, ns);
}

/* Count any other operation; arg is shown as the offset in the trace. */
static void ev_other(struct event *ev, enum ev_op op, off_t arg, int64_t res, uint64_t ns)
{
	pthread_mutex_lock(&ev->lock);
	ev_count(ev, op, res, 0, ns);
	pthread_mutex_unlock(&ev->lock);
	ev_trace(ev, op, arg, 0, res, ns);
}

/* ---- the summary ------------------------------------------------------- */

/* The file's note i (ffio_layer_note): its text if a layer below this one
 * made it, "" if another did, NULL past the last one kept. */
static const char *note_below(const struct event *ev, int i)
{
	const struct ffio_file *f = ev->base.file;
	if (!f || i >= f->nnotes || i >= FFIO_NOTES)
		return NULL;
	return f->notes[i].layer > ev->base.index ? f->notes[i].text : "";
}

static void summary_text(struct event *ev, struct ev_text *t, const char *label)
{
	static const char *const dname[2] = { "read", "write" };
	double div;
	const char *units = ev_units(ev, &div);

	text_add(t, "ffio: %s summary: %s\n", label, ev->base.file && ev->base.file->path ? ev->base.file->path : "?");
	text_add(t, "  %-10s %12s %8s %16s %12s\n", "op", "calls", "errors", units, "seconds");
	for (int op = 0; op < EV_NOPS; op++) {
		if (!ev->count[op])
			continue;
		text_add(t, "  %-10s %12" PRIu64 " %8" PRIu64 " ", ev_op_name[op], ev->count[op], ev->errors[op]);
		if (op == EV_READ || op == EV_WRITE || op == EV_AREAD || op == EV_AWRITE || op == EV_WILLNEED) {
			if (div == 1.0)
				text_add(t, "%16" PRIu64, ev->bytes[op]);
			else
				text_add(t, "%16.3f", ev->bytes[op] / div);
		} else {
			text_add(t, "%16s", "-");
		}
		text_add(t, " %12.6f\n", ev->nsec[op] / 1e9);
	}
	for (int d = 0; d < 2; d++) {
		const struct ev_dir *dir = &ev->dir[d];
		if (!dir->have_prev)
			continue;
		text_add(t, "  %s pattern: %" PRIu64 " sequential, %" PRIu64 " strided", dname[d],
			 dir->sequential, dir->strided);
		if (dir->strided) {
			int best = 0;
			for (int i = 1; i < EV_STRIDES; i++)
				if (dir->stride[i].count > dir->stride[best].count)
					best = i;
			text_add(t, " (stride %" PRId64 ")", dir->stride[best].stride);
		}
		text_add(t, ", %" PRIu64 " random\n", dir->random);
		text_add(t, "  %s sizes:", dname[d]);
		for (int b = 0; b < EV_BUCKETS; b++) {
			char lab[32];
			if (!dir->size_hist[b])
				continue;
			size_label(lab, sizeof lab, bucket_low(b));
			text_add(t, " %s:%" PRIu64, lab, dir->size_hist[b]);
		}
		text_add(t, "\n");
	}
	const char *note;
	for (int i = 0; (note = note_below(ev, i)) != NULL; i++)
		if (*note)
			text_add(t, "  note: %s%s\n",
				 i == FFIO_NOTES - 1 && ev->base.file->nnotes > FFIO_NOTES ? "(the last of more) " : "", note);
}

static void summary_json(struct event *ev, struct ev_text *t, const char *label)
{
	static const char *const dname[2] = { "read", "write" };
	double div;
	const char *units = ev_units(ev, &div);
	int first = 1;

	text_add(t, "{\"event\":\"");
	text_add_json_string(t, label);
	text_add(t, "\",\"layer\":\"event\",\"position\":%d,\"path\":\"", ev->base.index);
	text_add_json_string(t, ev->base.file ? ev->base.file->path : NULL);
	text_add(t, "\",\"units\":\"%s\",\"ops\":{", units);
	for (int op = 0; op < EV_NOPS; op++) {
		if (!ev->count[op])
			continue;
		text_add(t, "%s\"%s\":{\"calls\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"bytes\":%" PRIu64
			 ",\"seconds\":%.9f}",
			 first ? "" : ",", ev_op_name[op], ev->count[op], ev->errors[op], ev->bytes[op],
			 ev->nsec[op] / 1e9);
		first = 0;
	}
	text_add(t, "}");
	for (int d = 0; d < 2; d++) {
		const struct ev_dir *dir = &ev->dir[d];
		int best = 0, firstb = 1;
		if (!dir->have_prev)
			continue;
		for (int i = 1; i < EV_STRIDES; i++)
			if (dir->stride[i].count > dir->stride[best].count)
				best = i;
		text_add(t, ",\"%s\":{\"sequential\":%" PRIu64 ",\"strided\":%" PRIu64 ",\"stride\":%" PRId64
			 ",\"random\":%" PRIu64 ",\"sizes\":{",
			 dname[d], dir->sequential, dir->strided, dir->strided ? dir->stride[best].stride : 0,
			 dir->random);
		for (int b = 0; b < EV_BUCKETS; b++) {
			if (!dir->size_hist[b])
				continue;
			text_add(t, "%s\"%" PRIu64 "\":%" PRIu64, firstb ? "" : ",", bucket_low(b), dir->size_hist[b]);
			firstb = 0;
		}
		text_add(t, "}}");
	}
	const char *note;
	int notes = 0;
	for (int i = 0; (note = note_below(ev, i)) != NULL; i++) {
		if (!*note)
			continue;
		text_add(t, "%s\"", notes++ ? "," : ",\"notes\":[");
		text_add_json_string(t, note);
		text_add(t, "\"");
	}
	text_add(t, "%s}\n", notes ? "]" : "");
}

/* Write the summary once. */
static void ev_report(struct event *ev)
{
	struct ev_text text = {.buf = malloc(EV_SUMMARY_TEXT), .cap = EV_SUMMARY_TEXT}, *t = &text;
	char label[160];

	if (!t->buf)
		return;
	ffio_layer_label(&ev->base, label, sizeof label);
	pthread_mutex_lock(&ev->lock);
	if (ev->reported) {
		pthread_mutex_unlock(&ev->lock);
		free(t->buf);
		return;
	}
	ev->reported = 1;
	if (ffio_logformat_json)
		summary_json(ev, t, label);
	else
		summary_text(ev, t, label);
	pthread_mutex_unlock(&ev->lock);
	ffio_log_raw(t->buf, t->len);
	free(t->buf);
}

/* ---- methods ----------------------------------------------------------- */

static struct event *EV(struct ffio_layer *l)
{
	return (struct event *)l;
}

static int event_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode)
{
	struct event *ev = EV(l);
	uint64_t t0;
	int rc;

	rc = pthread_mutex_init(&ev->lock, NULL);
	if (rc)
		return -rc;
	t0 = ffio_now_ns();
	rc = ffio_below_open(l, dirfd, path, flags, mode);
	ev_other(ev, EV_OPEN, 0, rc, ffio_now_ns() - t0);
	return rc;
}

static int event_close(struct ffio_layer *l)
{
	struct event *ev = EV(l);
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_close(l);

	ev_other(ev, EV_CLOSE, 0, rc, ffio_now_ns() - t0);
	ev_report(ev);
	return rc;
}

static ssize_t event_pread(struct ffio_layer *l, void *buf, size_t n, off_t off)
{
	uint64_t t0 = ffio_now_ns();
	ssize_t rc = ffio_below_pread(l, buf, n, off);

	ev_io(EV(l), EV_READ, off, n, rc, ffio_now_ns() - t0);
	return rc;
}

static ssize_t event_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off)
{
	uint64_t t0 = ffio_now_ns();
	ssize_t rc = ffio_below_pwrite(l, buf, n, off);

	ev_io(EV(l), EV_WRITE, off, n, rc, ffio_now_ns() - t0);
	return rc;
}

static ssize_t event_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	uint64_t t0 = ffio_now_ns();
	ssize_t rc = ffio_below_preadv(l, iov, iovcnt, off);

	ev_io(EV(l), EV_READ, off, ffio_iov_len(iov, iovcnt), rc, ffio_now_ns() - t0);
	return rc;
}

static ssize_t event_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off)
{
	uint64_t t0 = ffio_now_ns();
	ssize_t rc = ffio_below_pwritev(l, iov, iovcnt, off);

	ev_io(EV(l), EV_WRITE, off, ffio_iov_len(iov, iovcnt), rc, ffio_now_ns() - t0);
	return rc;
}

static int event_flush(struct ffio_layer *l)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_flush(l);

	ev_other(EV(l), EV_FLUSH, 0, rc, ffio_now_ns() - t0);
	return rc;
}

static int event_fsync(struct ffio_layer *l, int datasync)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_fsync(l, datasync);

	ev_other(EV(l), EV_FSYNC, 0, rc, ffio_now_ns() - t0);
	return rc;
}

static int event_truncate(struct ffio_layer *l, off_t len)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_truncate(l, len);

	ev_other(EV(l), EV_TRUNCATE, len, rc, ffio_now_ns() - t0);
	return rc;
}

static int event_size(struct ffio_layer *l, off_t *len)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_size(l, len);

	ev_other(EV(l), EV_SIZE, 0, rc < 0 ? rc : (int64_t)*len, ffio_now_ns() - t0);
	return rc;
}

static int event_invalidate(struct ffio_layer *l)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_invalidate(l);

	ev_other(EV(l), EV_INVALIDATE, 0, rc, ffio_now_ns() - t0);
	return rc;
}

/* Read advice: WILLNEED is counted with its range (bytes); the kernel's
 * read-ahead turned off or on (RANDOM, NORMAL) as "advise", the advice
 * shown as the offset in the trace. */
static int event_advise(struct ffio_layer *l, off_t off, off_t len, int advice)
{
	uint64_t t0 = ffio_now_ns();
	int rc = ffio_below_advise(l, off, len, advice);
	struct event *ev = EV(l);

	if (advice == POSIX_FADV_WILLNEED) {
		pthread_mutex_lock(&ev->lock);
		ev_count(ev, EV_WILLNEED, rc, rc == 0 ? (uint64_t)len : 0, ffio_now_ns() - t0);
		pthread_mutex_unlock(&ev->lock);
		ev_trace(ev, EV_WILLNEED, off, (size_t)len, rc, ffio_now_ns() - t0);
	} else {
		ev_other(ev, EV_ADVISE, advice, rc, ffio_now_ns() - t0);
	}
	return rc;
}

/* Completion of an asynchronous request: count it, then hand it back. */
static void event_done(struct ffio_req *r)
{
	struct ev_req *w = r->data;
	struct event *ev = w->ev;
	uint64_t ns = ffio_now_ns() - w->start;
	enum ev_op op = w->op;

	r->done = w->done;
	r->data = w->data;
	if (op == EV_AFSYNC)
		ev_other(ev, op, 0, r->res, ns);
	else
		ev_io(ev, op, r->off, w->len, r->res, ns);
	free(w);
	r->done(r);
}

static int event_submit(struct ffio_layer *l, struct ffio_req *r)
{
	struct ev_req *w = malloc(sizeof *w);
	int rc;

	if (!w)
		return -ENOMEM;
	w->done = r->done;
	w->data = r->data;
	w->ev = EV(l);
	w->op = r->op == FFIO_OP_READ ? EV_AREAD : r->op == FFIO_OP_WRITE ? EV_AWRITE : EV_AFSYNC;
	w->len = (r->op == FFIO_OP_READ || r->op == FFIO_OP_WRITE) ? ffio_iov_len(r->iov, r->iovcnt) : 0;
	w->start = ffio_now_ns();
	r->done = event_done;
	r->data = w;
	rc = ffio_below_submit(l, r);
	if (rc < 0 && r->done == event_done) {
		/* Refused without completion: the request is the caller's again. */
		r->done = w->done;
		r->data = w->data;
		if (w->op == EV_AFSYNC)
			ev_other(EV(l), w->op, 0, rc, ffio_now_ns() - w->start);
		else
			ev_io(EV(l), w->op, r->off, w->len, rc, ffio_now_ns() - w->start);
		free(w);
	}
	return rc;
}

static int event_stats(struct ffio_layer *l, struct ffio_stats *st)
{
	struct event *ev = EV(l);
	static const struct { enum ev_op op; enum ffio_stat_op stat; } map[] = {
		{ EV_READ, FFIO_STAT_READ },     { EV_AREAD, FFIO_STAT_READ },
		{ EV_WRITE, FFIO_STAT_WRITE },   { EV_AWRITE, FFIO_STAT_WRITE },
		{ EV_FSYNC, FFIO_STAT_SYNC },    { EV_AFSYNC, FFIO_STAT_SYNC },
		{ EV_TRUNCATE, FFIO_STAT_TRUNCATE }, { EV_SIZE, FFIO_STAT_SEEK },
		{ EV_OPEN, FFIO_STAT_OPEN },     { EV_CLOSE, FFIO_STAT_CLOSE },
	};

	memset(st, 0, sizeof *st);
	snprintf(st->layer, sizeof st->layer, "%s", "event");
	st->position = l->index;
	pthread_mutex_lock(&ev->lock);
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		st->count[map[i].stat] += ev->count[map[i].op];
		st->bytes[map[i].stat] += ev->bytes[map[i].op];
		st->nsec[map[i].stat] += ev->nsec[map[i].op];
	}
	pthread_mutex_unlock(&ev->lock);
	return 0;
}

/* At exit, for a file never closed. */
static void event_atexit(struct ffio_layer *l)
{
	ev_report(EV(l));
}

const struct ffio_layer_ops ffio_layer_event = {
	.name = "event",
	.flags = event_flags,
	.params = NULL,
	.instance_size = sizeof(struct event),
	.open = event_open,
	.close = event_close,
	.pread = event_pread,
	.pwrite = event_pwrite,
	.preadv = event_preadv,
	.pwritev = event_pwritev,
	.flush = event_flush,
	.fsync = event_fsync,
	.truncate = event_truncate,
	.size = event_size,
	.invalidate = event_invalidate,
	.submit = event_submit,
	.stats = event_stats,
	.advise = event_advise,
	.atexit = event_atexit,
};
