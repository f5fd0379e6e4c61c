/* libffio/interpose.h -- what the interposed C-library names share
 * (posix.c, times.c, rlimit.c, ioctl.c, process.c, aio.c, api.c):
 * readiness of the real functions, the conversion of internal results at
 * the POSIX boundary, the reentrancy guard, the rule for which descriptors
 * ffio manages, the managed file behind a path's stat, and the calls in
 * which the kernel reads or writes a managed file itself. */
#ifndef FFIO_INTERPOSE_H
#define FFIO_INTERPOSE_H

#include <errno.h>
#include "ffio-internal.h"

/* A C-library name ffio interposes: exported from libffio.so, which
 * otherwise exports only the API of ffio.h and ffio_ext.h (the library is
 * built with -fvisibility=hidden). */
#define FFIO_EXPORT __attribute__((visibility("default")))

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Make sure ffio_real.name can be called; otherwise run the fallback statement. */
#define NEED(name, fallback)                                         \
	do {                                                         \
		if (unlikely(!ffio_real_ready() || !ffio_real.name)) \
			fallback;                                    \
	} while (0)
#define NOSYS                        \
	do {                         \
		errno = ENOSYS;      \
		return -1;           \
	} while (0)
/* A wrapper's own system call, before the C library's function is known:
 * -1 with the kernel's errno, as syscall(2), which ffio interposes too. */
#define SYSCALL(...) return FFIO_SYS(__VA_ARGS__)
#define NOSYS_NULL                   \
	do {                         \
		errno = ENOSYS;      \
		return NULL;         \
	} while (0)

/* Convert an internal result (-errno) at the POSIX boundary. */
static inline ssize_t result(ssize_t r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* Internal calls into the stack run with the reentrancy guard set. */
#define IN_LIB(expr)                        \
	({                                  \
		ffio_in_lib++;              \
		__typeof__(expr) r_ = expr; \
		ffio_leave();               \
		r_;                         \
	})

/* The description behind fd when ffio manages it, its file has not passed
 * through to the kernel, and we are not inside ffio. */
static inline struct ffio_ofd *managed(int fd)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	if (likely(o == NULL) || ffio_in_lib || o->is_private || o->file->through)
		return NULL;
	return o;
}

/* A deferred error of an operation whose own result must stay a success
 * (the lock is held, the descriptor was replaced, the call is not a
 * write): report it on the next write, fsync or close of the file. */
static inline void defer_error(struct ffio_file *f, int err)
{
	if (err >= 0)
		return;
	pthread_mutex_lock(&f->lock);
	ffio_file_set_error(f, err);
	pthread_mutex_unlock(&f->lock);
}

/* The file open through ffio (not passed through) on the regular file st
 * describes, held (ffio_file_put), or NULL. */
static inline struct ffio_file *file_of_stat(const struct stat *st)
{
	if (ffio_in_lib || !S_ISREG(st->st_mode))
		return NULL;
	struct ffio_file *f = ffio_file_find_inode(st->st_dev, st->st_ino);
	if (f != NULL && f->through) {
		ffio_file_put(f);
		return NULL;
	}
	return f;
}

/* Before the kernel reads or writes a managed file directly (posix.c's
 * copy_file_range, sendfile, splice; ioctl.c): flush it and give the
 * kernel the positions. */
static inline int kernel_io_begin(struct ffio_ofd *o)
{
	return o ? IN_LIB(ffio_file_sync_kernel(o->file)) : 0;
}

/* After: a written file drops what it cached (its data and size changed
 * underneath); when the kernel moved the descriptor's offset, the
 * position follows it. */
static inline void kernel_io_end(struct ffio_ofd *o, int fd, int written, int moved)
{
	if (o == NULL)
		return;
	if (written)
		defer_error(o->file, IN_LIB(ffio_file_invalidate(o->file)));
	if (moved) {
		off_t k = ffio_real.lseek(fd, 0, SEEK_CUR);
		if (k >= 0)
			IN_LIB(ffio_ofd_seek(o, k, SEEK_SET));
	}
}

#endif
