/* t/crash_log.h -- the call log of the crash tests (t/crash_kill,
 * t/crash_mpi): a writer makes random calls on a file (write after lseek,
 * pwrite, writev, appends through a second descriptor opened O_APPEND,
 * ftruncate shrinking and extending, fsync where asked), deterministic from
 * a seed, and logs each one in shared memory that outlives it: "started"
 * before the call, "returned" with its result after it.  A process that
 * did not run the calls (not preloaded) replays the returned ones through
 * the kernel alone and compares (t/crash_kill.c, check).
 *
 * The log is an ordinary MAP_SHARED mapping: a memfd inherited over exec,
 * or a file whose name no stack's pattern matches.  ffio never sees its
 * stores.  The writer writes nothing to a pipe or a terminal and sleeps
 * never while it works: either is a flush point of ffio (ffio(7),
 * SEMANTICS), and would write its cache back behind the test's back.
 *
 * Data: byte j of a call of data seed d is cl_byte(d, j); a writev cuts the
 * same bytes into pieces, so the replay writes them in one piece. */
#ifndef FFIO_TEST_CRASH_LOG_H
#define FFIO_TEST_CRASH_LOG_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rng.h"

#define CL_MAXREC (1 << 16)   /* calls one writer logs at most */
#define CL_MAXGUARD 8         /* distinct guardian pids remembered */
#define CL_SPAN (4 << 20)     /* offsets below 4 MiB by default */
#define CL_BIG (64 << 10)     /* the largest call */

enum cl_kind { CL_NONE, CL_WRITE, CL_PWRITE, CL_WRITEV, CL_APPEND, CL_TRUNC, CL_FSYNC };

static const char *const cl_kind_name[] = {"none", "write", "pwrite", "writev", "append", "ftruncate", "fsync"};

/* Phases the writer reports (cl_log.phase). */
enum { CL_WORKING, CL_IN_FSYNC, CL_IDLE, CL_CLOSING };

struct cl_rec {
	int64_t off;    /* where (write, pwrite, writev); the new size (ftruncate);
			   an append's offset once it returned (-1 before) */
	int64_t res;    /* bytes written, 0 (ftruncate, fsync), or -errno */
	uint64_t dseed; /* the data */
	uint32_t len;   /* bytes asked for */
	uint8_t kind;
	uint8_t pad[3];
};

struct cl_log {
	/* set by whoever starts the writer, read by it */
	uint64_t seed;
	int64_t span;            /* offsets below this */
	uint64_t self_exit;      /* end by itself after this many calls (0: no) */
	int32_t self_how;        /* 0: _exit(3), 1: abort() */
	int32_t fsync_after;     /* log an fsync after this many calls (0: none) */
	/* the writer's progress */
	_Atomic uint64_t started, returned;
	_Atomic int32_t pid;     /* the writer's process */
	int32_t ppid;            /* its parent when it opened the file */
	_Atomic int32_t phase;
	_Atomic int32_t has_sym; /* 1: ffio_guardian_pid found, 0: not (yet) */
	_Atomic int32_t nguard;  /* guardian pids seen, in guard[] */
	_Atomic int32_t guard[CL_MAXGUARD];
	_Atomic uint64_t stop_at; /* close and exit(0) once this many returned (0: never) */
	char err[160];           /* why the writer gave up (it prints nothing) */
	struct cl_rec rec[CL_MAXREC];
};

static inline uint64_t cl_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void cl_fill(unsigned char *b, size_t n, uint64_t dseed)
{
	size_t j = 0;

	for (uint64_t w = 0; j < n; w++) {
		uint64_t v = cl_mix(dseed + w * 0x9e3779b97f4a7c15ULL);
		for (int k = 0; k < 8 && j < n; k++, j++)
			b[j] = (unsigned char)(v >> (8 * k));
	}
}

/* ---- the writer ---------------------------------------------------------- */

struct cl_writer {
	struct cl_log *L;
	int fd, afd;         /* the file, and the same file opened O_APPEND */
	int64_t size;        /* the file's size as the calls left it */
	int64_t last;        /* where the previous write ended */
	pid_t (*guardian_pid)(void);
	unsigned char buf[CL_BIG];
};

static inline void cl_fail(struct cl_writer *w, const char *what)
{
	snprintf(w->L->err, sizeof w->L->err, "%s: %s", what, strerror(errno));
	_exit(2);
}

/* Remember the guardian pid the library reports now, if it is new. */
static inline void cl_note_guardian(struct cl_writer *w)
{
	struct cl_log *L = w->L;

	if (!w->guardian_pid)
		return;
	pid_t g = w->guardian_pid();
	int n = atomic_load(&L->nguard);
	if (g <= 0 || (n > 0 && atomic_load(&L->guard[n - 1]) == g))
		return;
	for (int i = 0; i < n; i++)
		if (atomic_load(&L->guard[i]) == g)
			return;
	if (n < CL_MAXGUARD) {
		atomic_store(&L->guard[n], g);
		atomic_store(&L->nguard, n + 1);
	}
}

/* Open path afresh (twice: once O_APPEND) for the writer of log L. */
static inline void cl_open(struct cl_writer *w, struct cl_log *L, const char *path)
{
	w->L = L;
	rs = L->seed;
	w->size = w->last = 0;
	atomic_store(&L->pid, (int32_t)getpid());
	L->ppid = (int32_t)getppid();
	w->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (w->fd < 0)
		cl_fail(w, path);
	w->afd = open(path, O_WRONLY | O_APPEND);
	if (w->afd < 0)
		cl_fail(w, path);
	*(void **)&w->guardian_pid = dlsym(RTLD_DEFAULT, "ffio_guardian_pid");
	atomic_store(&L->has_sym, w->guardian_pid != NULL);
}

/* A size: 1-600 bytes mostly, some up to 64 KiB. */
static inline uint32_t cl_len(void)
{
	return rnd(100) < 85 ? 1 + (uint32_t)rnd(600) : 601 + (uint32_t)rnd(CL_BIG - 600);
}

/* An offset below the span: after the previous write, near it, or anywhere. */
static inline int64_t cl_off(struct cl_writer *w, uint32_t len)
{
	int64_t span = w->L->span > 0 ? w->L->span : CL_SPAN, o;
	int r = (int)rnd(100);

	if (r < 30)
		o = w->last;
	else if (r < 50)
		o = w->last + rnd(8192) - 4096;
	else
		o = rnd(span);
	if (o + len > span)
		o = span - len;
	return o < 0 ? 0 : o;
}

static inline ssize_t cl_res(ssize_t n)
{
	return n < 0 ? -errno : n;
}

/* Log and make one call of kind k (CL_NONE: drawn at random). */
static inline void cl_call(struct cl_writer *w, int k)
{
	struct cl_log *L = w->L;
	uint64_t i = atomic_load(&L->started);
	struct cl_rec *c = &L->rec[i];
	int r = (int)rnd(100);

	if (k == CL_NONE)
		k = r < 34 ? CL_WRITE : r < 64 ? CL_PWRITE : r < 96 ? CL_WRITEV : r < 98 ? CL_APPEND : CL_TRUNC;
	c->kind = (uint8_t)k;
	c->dseed = rnd64();
	c->len = k == CL_FSYNC || k == CL_TRUNC ? 0 : cl_len();
	c->off = k == CL_APPEND ? -1 : k == CL_FSYNC ? 0 : cl_off(w, c->len);
	c->res = 0;
	if (k == CL_TRUNC) { /* cut, or extend by up to 64 KiB */
		c->off = rnd(2) && w->size > 0 ? rnd(w->size) : w->size + rnd(CL_BIG);
		if (c->off > (L->span > 0 ? L->span : CL_SPAN))
			c->off = L->span > 0 ? L->span : CL_SPAN;
	}
	if (c->len)
		cl_fill(w->buf, c->len, c->dseed);
	if ((k == CL_WRITE || k == CL_WRITEV) && lseek(w->fd, c->off, SEEK_SET) != c->off)
		cl_fail(w, "lseek");
	/* pieces of a writev: 2 to 8, some maybe empty */
	struct iovec iov[8];
	int niov = 0;
	if (k == CL_WRITEV) {
		int want = 2 + (int)rnd(7);
		size_t at = 0;
		for (niov = 0; niov < want - 1; niov++) {
			size_t m = (size_t)rnd((long long)(c->len - at) + 1);
			iov[niov] = (struct iovec){w->buf + at, m};
			at += m;
		}
		iov[niov++] = (struct iovec){w->buf + at, c->len - at};
	}
	atomic_store(&L->started, i + 1);
	if (k == CL_FSYNC)
		atomic_store(&L->phase, CL_IN_FSYNC);

	ssize_t n = 0;
	switch (k) {
	case CL_WRITE: n = cl_res(write(w->fd, w->buf, c->len)); break;
	case CL_PWRITE: n = cl_res(pwrite(w->fd, w->buf, c->len, c->off)); break;
	case CL_WRITEV: n = cl_res(writev(w->fd, iov, niov)); break;
	case CL_APPEND: n = cl_res(write(w->afd, w->buf, c->len)); break;
	case CL_TRUNC: n = cl_res(ftruncate(w->fd, c->off)); break;
	case CL_FSYNC: n = cl_res(fsync(w->fd)); break;
	}

	c->res = n;
	if (k == CL_APPEND && n > 0) {
		off_t e = lseek(w->afd, 0, SEEK_CUR);
		c->off = e - n;
	}
	/* the guardian: looked for after each call until there is one, then
	 * now and then (it may change); before the call counts as returned,
	 * so that a kill after it finds the guardian to wait for */
	if (atomic_load(&L->nguard) == 0 || (i & 63) == 0)
		cl_note_guardian(w);
	atomic_store(&L->returned, i + 1);
	if (k == CL_FSYNC)
		atomic_store(&L->phase, CL_WORKING);
	if (n > 0) {
		int64_t end = c->off + n;
		w->last = end;
		if (end > w->size)
			w->size = end;
	} else if (k == CL_TRUNC && n == 0) {
		w->size = c->off;
	}
}

/* Make calls until the log is full, L->self_exit calls (then end as asked)
 * or L->stop_at calls (then close and return); a full log waits, without a
 * call ffio sees, to be killed or told to stop. */
static inline void cl_run(struct cl_writer *w)
{
	struct cl_log *L = w->L;

	for (;;) {
		uint64_t i = atomic_load(&L->returned), stop = atomic_load(&L->stop_at);
		if (stop && i >= stop)
			break;
		if (L->self_exit && i >= L->self_exit) {
			if (L->self_how)
				abort();
			_exit(3);
		}
		if (i >= CL_MAXREC - 1) {
			atomic_store(&L->phase, CL_IDLE);
			if (getppid() != L->ppid) /* nobody left to kill it */
				_exit(4);
			sched_yield();
			continue;
		}
		cl_call(w, L->fsync_after && i == (uint64_t)L->fsync_after ? CL_FSYNC : CL_NONE);
	}
	atomic_store(&L->phase, CL_CLOSING);
	if (close(w->afd) < 0 || close(w->fd) < 0)
		cl_fail(w, "close");
}

#endif
