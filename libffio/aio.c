/* aio.c -- POSIX AIO (aio_read, aio_write, aio_fsync, lio_listio, and the
 * calls that wait for and collect results) interposed for files ffio
 * manages.  glibc's AIO threads call pread/pwrite on the kernel descriptor
 * directly, which would bypass the file's cache (reads would miss cached
 * writes, writes would be overtaken by older cached data).  For a managed
 * descriptor the request is therefore performed through the file's stack,
 * synchronously under the file lock, before the submitting call returns;
 * the control block then reports the result (aio_error, aio_return,
 * aio_suspend) and the requested notification (SIGEV_NONE, SIGEV_SIGNAL,
 * SIGEV_THREAD) is delivered.  Requests on other descriptors go to the C
 * library unchanged.
 *
 * Completed control blocks are remembered in a small hash set until
 * aio_return() collects them (or the block is submitted again).
 */
#include "config.h"

#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h" /* managed(): the description behind a descriptor */

/* ---- the C library's calls ---------------------------------------------- */

static struct {
	int (*aio_read)(struct aiocb *);
	int (*aio_write)(struct aiocb *);
	int (*aio_fsync)(int, struct aiocb *);
	int (*aio_error)(const struct aiocb *);
	ssize_t (*aio_return)(struct aiocb *);
	int (*aio_suspend)(const struct aiocb *const[], int, const struct timespec *);
	int (*aio_cancel)(int, struct aiocb *);
	int (*lio_listio)(int, struct aiocb *const[], int, struct sigevent *);
} real_aio;
static pthread_once_t real_aio_once = PTHREAD_ONCE_INIT;

static void real_aio_resolve(void)
{
	*(void **)&real_aio.aio_read = dlsym(RTLD_NEXT, "aio_read");
	*(void **)&real_aio.aio_write = dlsym(RTLD_NEXT, "aio_write");
	*(void **)&real_aio.aio_fsync = dlsym(RTLD_NEXT, "aio_fsync");
	*(void **)&real_aio.aio_error = dlsym(RTLD_NEXT, "aio_error");
	*(void **)&real_aio.aio_return = dlsym(RTLD_NEXT, "aio_return");
	*(void **)&real_aio.aio_suspend = dlsym(RTLD_NEXT, "aio_suspend");
	*(void **)&real_aio.aio_cancel = dlsym(RTLD_NEXT, "aio_cancel");
	*(void **)&real_aio.lio_listio = dlsym(RTLD_NEXT, "lio_listio");
}

static void real_aio_init(void)
{
	pthread_once(&real_aio_once, real_aio_resolve);
}


/* ---- completed control blocks ------------------------------------------- */

struct done {
	const void *cb;
	int error;      /* 0 or an errno value */
	ssize_t result; /* what aio_return reports */
	struct done *next;
};

#define DONE_BUCKETS 256
static struct done *done_set[DONE_BUCKETS];
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void aio_fork_safe(void)
{
	ffio_atfork_hold(&done_lock, FFIO_LOCK_AIO);
}

static unsigned done_bucket(const void *cb)
{
	uintptr_t p = (uintptr_t)cb;
	return (unsigned)((p >> 4) ^ (p >> 12)) % DONE_BUCKETS;
}

/* Unlink cb's record; returns it (caller frees) or NULL. */
static struct done *done_take(const void *cb)
{
	struct done **pp = &done_set[done_bucket(cb)];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->cb == cb) {
			struct done *d = *pp;
			*pp = d->next;
			return d;
		}
	}
	return NULL;
}

static struct done *done_find(const void *cb)
{
	for (struct done *d = done_set[done_bucket(cb)]; d; d = d->next)
		if (d->cb == cb)
			return d;
	return NULL;
}

/* Forget cb (it is being submitted again, or collected). */
static void done_forget(const void *cb)
{
	pthread_mutex_lock(&done_lock);
	free(done_take(cb));
	pthread_mutex_unlock(&done_lock);
}

static int done_record(const void *cb, int error, ssize_t result)
{
	struct done *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->cb = cb;
	d->error = error;
	d->result = result;
	pthread_mutex_lock(&done_lock);
	free(done_take(cb));
	unsigned b = done_bucket(cb);
	d->next = done_set[b];
	done_set[b] = d;
	pthread_mutex_unlock(&done_lock);
	return 0;
}

/* 1 and the status of cb when it is one of ours, else 0. */
static int done_lookup(const void *cb, int *error, ssize_t *result)
{
	int found = 0;

	pthread_mutex_lock(&done_lock);
	struct done *d = done_find(cb);
	if (d) {
		found = 1;
		if (error)
			*error = d->error;
		if (result)
			*result = d->result;
	}
	pthread_mutex_unlock(&done_lock);
	return found;
}

/* ---- notification ------------------------------------------------------- */

struct notify_thread {
	void (*fn)(union sigval);
	union sigval value;
};

static void *notify_thread_main(void *arg)
{
	struct notify_thread nt = *(struct notify_thread *)arg;

	free(arg);
	nt.fn(nt.value);
	return NULL;
}

/* Deliver the notification sev asks for; 0 or -errno. */
static int notify(const struct sigevent *sev)
{
	if (!sev)
		return 0;
	switch (sev->sigev_notify) {
	case SIGEV_NONE:
		return 0;
	case SIGEV_SIGNAL: {
		/* As the C library does: a queued signal with si_code SI_ASYNCIO. */
		siginfo_t info;
		memset(&info, 0, sizeof(info));
		info.si_signo = sev->sigev_signo;
		info.si_code = SI_ASYNCIO;
		info.si_pid = getpid();
		info.si_uid = getuid();
		info.si_value = sev->sigev_value;
		if (FFIO_SYS(SYS_rt_sigqueueinfo, getpid(), sev->sigev_signo, &info) < 0)
			return -errno;
		return 0;
	}
	case SIGEV_THREAD: {
		pthread_attr_t attr, *ap = sev->sigev_notify_attributes;
		pthread_t tid;
		int ret;
		struct notify_thread *nt = malloc(sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		nt->fn = sev->sigev_notify_function;
		nt->value = sev->sigev_value;
		if (!ap) {
			ap = &attr;
			pthread_attr_init(ap);
			pthread_attr_setdetachstate(ap, PTHREAD_CREATE_DETACHED);
		}
		ret = pthread_create(&tid, ap, notify_thread_main, nt);
		if (ap == &attr)
			pthread_attr_destroy(&attr);
		if (ret != 0) {
			free(nt);
			return -ret;
		}
		if (ap != &attr) {
			/* The caller's attributes may ask for a joinable thread;
			 * nobody joins it, so detach it. */
			pthread_detach(tid);
		}
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/* ---- performing a request through the stack ------------------------------ */

enum aio_kind { AIO_READ, AIO_WRITE, AIO_SYNC, AIO_DSYNC };

/* Perform one request on o; returns the byte count or -errno.  An
 * appending description writes at the end, as write(2) does. */
static ssize_t perform(struct ffio_ofd *o, enum aio_kind kind, volatile void *buf,
		       size_t n, off_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = n };
	switch (kind) {
	case AIO_READ:
		return ffio_ofd_preadv(o, &iov, 1, off);
	case AIO_WRITE:
		return ffio_ofd_pwritev(o, &iov, 1, off);
	case AIO_SYNC:
		return ffio_file_fsync(o->file, 0);
	case AIO_DSYNC:
		return ffio_file_fsync(o->file, 1);
	}
	return -EINVAL;
}

/* Submit one request on a managed file: perform it, record the result for
 * cb and notify (notify_now 0: the caller notifies for a whole list).
 * Returns 0, or -errno when the request could not be queued at all. */
static int submit(struct ffio_ofd *o, const void *cb, enum aio_kind kind, volatile void *buf,
		  size_t n, off_t off, const struct sigevent *sev, int notify_now)
{
	if (kind == AIO_READ || kind == AIO_WRITE) {
		if (off < 0)
			return -EINVAL;
		if (kind == AIO_READ && (o->oflags & O_ACCMODE) == O_WRONLY)
			return -EBADF;
		if (kind == AIO_WRITE && (o->oflags & O_ACCMODE) == O_RDONLY)
			return -EBADF;
	}
	ssize_t res = perform(o, kind, buf, n, off);
	int ret = done_record(cb, res < 0 ? (int)-res : 0, res < 0 ? -1 : res);
	if (ret < 0)
		return ret;
	if (notify_now) {
		ret = notify(sev);
		if (ret < 0)
			ffio_log("aio: cannot deliver the completion notification: %s", strerror(-ret));
	}
	return 0;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

/* ---- the interposed calls ------------------------------------------------ */

/* struct aiocb64 is struct aiocb on LP64 and under _FILE_OFFSET_BITS=64;
 * elsewhere the 64 variants differ only in the offset field. */
#define CB_SUBMIT(cb, kind)                                                               \
	do {                                                                              \
		struct ffio_ofd *f_ = managed((cb)->aio_fildes);                         \
		if (!f_)                                                                  \
			break;                                                            \
		int r_ = submit(f_, (cb), (kind), (cb)->aio_buf, (cb)->aio_nbytes,        \
				(off_t)(cb)->aio_offset, &(cb)->aio_sigevent, 1);        \
		return r_ < 0 ? fail(-r_) : 0;                                            \
	} while (0)

FFIO_EXPORT int aio_read(struct aiocb *cb)
{
	done_forget(cb);
	CB_SUBMIT(cb, AIO_READ);
	real_aio_init();
	return real_aio.aio_read(cb);
}

FFIO_EXPORT int aio_write(struct aiocb *cb)
{
	done_forget(cb);
	CB_SUBMIT(cb, AIO_WRITE);
	real_aio_init();
	return real_aio.aio_write(cb);
}

FFIO_EXPORT int aio_fsync(int op, struct aiocb *cb)
{
	if (op != O_SYNC && op != O_DSYNC)
		return fail(EINVAL);
	done_forget(cb);
	CB_SUBMIT(cb, op == O_DSYNC ? AIO_DSYNC : AIO_SYNC);
	real_aio_init();
	return real_aio.aio_fsync(op, cb);
}

FFIO_EXPORT int aio_error(const struct aiocb *cb)
{
	int error;

	if (done_lookup(cb, &error, NULL))
		return error;
	real_aio_init();
	return real_aio.aio_error(cb);
}

FFIO_EXPORT ssize_t aio_return(struct aiocb *cb)
{
	int error;
	ssize_t result;

	if (done_lookup(cb, &error, &result)) {
		done_forget(cb);
		if (result < 0)
			errno = error;
		return result;
	}
	real_aio_init();
	return real_aio.aio_return(cb);
}

FFIO_EXPORT int aio_suspend(const struct aiocb *const list[], int n, const struct timespec *timeout)
{
	/* Our requests are complete as soon as they are submitted. */
	for (int i = 0; i < n; i++)
		if (list[i] && done_lookup(list[i], NULL, NULL))
			return 0;
	real_aio_init();
	return real_aio.aio_suspend(list, n, timeout);
}

FFIO_EXPORT int aio_cancel(int fd, struct aiocb *cb)
{
	if (cb && cb->aio_fildes != fd)
		return fail(EINVAL);
	if (managed(fd)) {
		/* Nothing of a managed file is ever in flight. */
		return AIO_ALLDONE;
	}
	real_aio_init();
	return real_aio.aio_cancel(fd, cb);
}

FFIO_EXPORT int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
	struct aiocb **rest;
	int nrest = 0, failed = 0;

	if ((mode != LIO_WAIT && mode != LIO_NOWAIT) || n < 0)
		return fail(EINVAL);
	rest = calloc(n ? (size_t)n : 1, sizeof(*rest));
	if (!rest)
		return fail(EAGAIN);
	for (int i = 0; i < n; i++) {
		struct aiocb *cb = list[i];
		if (!cb || cb->aio_lio_opcode == LIO_NOP)
			continue;
		struct ffio_ofd *f = managed(cb->aio_fildes);
		if (!f) {
			done_forget(cb);
			rest[i] = cb;
			nrest++;
			continue;
		}
		enum aio_kind kind = cb->aio_lio_opcode == LIO_READ ? AIO_READ : AIO_WRITE;
		if (cb->aio_lio_opcode != LIO_READ && cb->aio_lio_opcode != LIO_WRITE) {
			done_record(cb, EINVAL, -1);
			failed = 1;
			continue;
		}
		int ret = submit(f, cb, kind, cb->aio_buf, cb->aio_nbytes, (off_t)cb->aio_offset,
				 NULL, 0);
		if (ret < 0) {
			done_record(cb, -ret, -1);
			failed = 1;
			continue;
		}
		int error;
		if (done_lookup(cb, &error, NULL) && error)
			failed = 1;
	}
	int ret = 0;
	if (nrest > 0) {
		/* The C library's part carries the list's notification: it
		 * completes after ours, which are already done. */
		real_aio_init();
		ret = real_aio.lio_listio(mode, rest, n, sev);
	} else if (mode == LIO_NOWAIT) {
		int nret = notify(sev);
		if (nret < 0)
			ffio_log("aio: cannot deliver the list notification: %s", strerror(-nret));
	}
	free(rest);
	if (ret < 0)
		return ret;
	if (failed)
		return fail(EIO);
	return 0;
}

#if !defined(__LP64__) && !defined(__USE_FILE_OFFSET64)
/* 32-bit targets without _FILE_OFFSET_BITS=64: the 64 variants have a
 * different control block; only the submitting calls need their own
 * definitions there, the others treat the block as opaque. */
FFIO_EXPORT int aio_read64(struct aiocb64 *cb)
{
	done_forget(cb);
	CB_SUBMIT(cb, AIO_READ);
	static int (*real)(struct aiocb64 *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "aio_read64");
	return real(cb);
}

FFIO_EXPORT int aio_write64(struct aiocb64 *cb)
{
	done_forget(cb);
	CB_SUBMIT(cb, AIO_WRITE);
	static int (*real)(struct aiocb64 *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "aio_write64");
	return real(cb);
}
#else
/* The 64 names are the same calls. */
FFIO_EXPORT int aio_read64(struct aiocb64 *cb) __attribute__((alias("aio_read")));
FFIO_EXPORT int aio_write64(struct aiocb64 *cb) __attribute__((alias("aio_write")));
FFIO_EXPORT int aio_fsync64(int op, struct aiocb64 *cb) __attribute__((alias("aio_fsync")));
FFIO_EXPORT int aio_error64(const struct aiocb64 *cb) __attribute__((alias("aio_error")));
FFIO_EXPORT ssize_t aio_return64(struct aiocb64 *cb) __attribute__((alias("aio_return")));
FFIO_EXPORT int aio_suspend64(const struct aiocb64 *const list[], int n, const struct timespec *timeout)
	__attribute__((alias("aio_suspend")));
FFIO_EXPORT int aio_cancel64(int fd, struct aiocb64 *cb) __attribute__((alias("aio_cancel")));
FFIO_EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sev)
	__attribute__((alias("lio_listio")));
#endif
