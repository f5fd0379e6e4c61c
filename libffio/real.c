/* libffio/real.c -- the C library functions behind the interposed names,
 * found once with dlsym(RTLD_NEXT) from the one table FFIO_REAL_FUNCS, so
 * that ffio's own I/O and the wrappers' pass-through reach the system. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio-internal.h"

struct ffio_real ffio_real;
int ffio_real_state;
_Thread_local int ffio_in_lib __attribute__((tls_model("initial-exec")));
static _Thread_local int resolving; /* this thread is inside the resolution */

/* RTLD_NEXT finds the definition after libffio (the C library, or another
 * interposer in between).  When libffio was loaded after the C library (as
 * a dependency of a glue library, not preloaded), there is nothing after
 * it: then ask the C library itself. */
static void *real_sym(const char *sym)
{
	static void *libc;
	void *p = dlsym(RTLD_NEXT, sym);

	if (p)
		return p;
	if (!libc)
		libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	return libc ? dlsym(libc, sym) : NULL;
}

#define REAL_RESOLVE(ret, name, params, ...) ffio_real.name = (ret(*) params)real_sym(#name);

int ffio_real_resolve(void)
{
	int expect = FFIO_REAL_NONE;

	if (__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY)
		return 1;
	if (resolving)
		return 0;
	if (__atomic_compare_exchange_n(&ffio_real_state, &expect, FFIO_REAL_RESOLVING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		resolving = 1;
		FFIO_REAL_FUNCS(REAL_RESOLVE)
		resolving = 0;
		__atomic_store_n(&ffio_real_state, FFIO_REAL_READY, __ATOMIC_RELEASE);
		return 1;
	}
	while (__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) != FFIO_REAL_READY)
		sched_yield();
	return 1;
}

void ffio_real_init(void)
{
	static const char msg[] = "ffio: cannot resolve the C library's file calls\n";

	if (ffio_real_ready() && ffio_real.pwrite && ffio_real.openat && ffio_real.close)
		return;
	/* Without the real calls nothing can work; say so and stop. */
	(void)!syscall(SYS_write, 2, msg, sizeof msg - 1);
	abort();
}

__attribute__((constructor(101))) static void real_ctor(void)
{
	ffio_real_resolve();
}

/* Buffered writes longer than FFIO_WRITE_WHOLE go to the kernel in calls of
 * at most FFIO_WRITE_PIECE.  Measured on this project's machine (Linux
 * 6.18, ext4 with large folios): writing 15 MB in 1 MiB calls takes 2.6
 * ms, or, in some states of the kernel's memory, 34 ms, every time, while
 * the same bytes in 512 KiB calls take 2.6 to 3.4 ms in both states; a
 * flush writing a long run in one call would always meet the slow case.
 * A write of up to 1 MiB goes in one call, as the application would make
 * it: cut in two, it cost a second update of the file's times, 4 us, 5% of
 * an iteration of Program I (open, write 1 MiB, close, open, read, close:
 * 75 us against 79 us).  A piece ends at FFIO_WRITE_PIECE bytes or
 * PIECE_IOVS vector entries. */
#define PIECE_IOVS 256

static ssize_t write_once(int fd, const struct iovec *iov, int iovcnt, off_t off, uint64_t *calls)
{
	ssize_t r = iovcnt == 1 ? ffio_real.pwrite(fd, iov[0].iov_base, iov[0].iov_len, off)
				: ffio_real.pwritev(fd, iov, iovcnt, off);
	(*calls)++;
	return r < 0 ? -errno : r;
}

int ffio_iov_take(struct ffio_iov_cursor *c, size_t max, struct iovec *part, int max_parts, size_t *len)
{
	size_t got = 0;
	int n = 0;
	while (c->i < c->cnt && n < max_parts && got < max) {
		size_t take = c->iov[c->i].iov_len - c->skip;
		if (take > max - got)
			take = max - got;
		part[n++] = (struct iovec){(char *)c->iov[c->i].iov_base + c->skip, take};
		got += take;
		c->skip += take;
		if (c->skip == c->iov[c->i].iov_len) {
			c->i++;
			c->skip = 0;
		}
	}
	*len = got;
	return n;
}

ssize_t ffio_real_pwritev_pieces(int fd, const struct iovec *iov, int iovcnt, off_t off, uint64_t *calls)
{
	if (ffio_iov_len(iov, iovcnt) <= FFIO_WRITE_WHOLE)
		return write_once(fd, iov, iovcnt, off, calls);

	struct ffio_iov_cursor cur = {.iov = iov, .cnt = iovcnt};
	struct iovec part[PIECE_IOVS];
	size_t done = 0, want;
	int n;
	while ((n = ffio_iov_take(&cur, FFIO_WRITE_PIECE, part, PIECE_IOVS, &want)) > 0 && want > 0) {
		ssize_t r = write_once(fd, part, n, off + (off_t)done, calls);
		if (r < 0)
			return done > 0 ? (ssize_t)done : r;
		done += (size_t)r;
		if ((size_t)r < want) /* short: the bytes written so far are the result */
			break;
	}
	return (ssize_t)done;
}

int ffio_real_advise(const struct ffio_layer *l, int direct, off_t off, off_t len, int advice)
{
	if (direct || (l->file->oflags & O_DIRECT))
		return -EOPNOTSUPP; /* the page cache is not used */
	return -ffio_real.posix_fadvise(l->file->fd, off, len, advice);
}
