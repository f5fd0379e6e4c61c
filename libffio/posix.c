/* libffio/posix.c -- POSIX interposition: the libc file calls a program or
 * library makes, redirected through the layer stack when the descriptor (or
 * the path at open) is managed by ffio, and straight to libc otherwise.
 *
 * The same code serves the preloaded library (LD_PRELOAD) and a program
 * linked with -lffio.  The libc functions are found with dlsym(RTLD_NEXT)
 * from one table (FFIO_REAL_FUNCS, resolved by real.c); the calls on one
 * descriptor are made from one table too (FD_CALLS).  An unmanaged descriptor costs one
 * fd-table load before the real call.  Before the table is resolved, and
 * while it is being resolved (dlsym may call back into us), the basic calls
 * fall back to raw system calls; the others fail with ENOSYS.
 *
 * Only LP64 Linux is supported: there off_t is 64 bits, so each "64" name
 * (open64, pread64, fstat64, ...) is the same function as the plain one.
 */
#include "config.h"
/* The wrappers define the plain names: no large-file or fortify renaming. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

_Static_assert(sizeof(off_t) == 8 && sizeof(long) == 8, "ffio interposition needs LP64");

/* glibc names that the headers no longer (or only under fortify) declare. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
void __chk_fail(void) __attribute__((noreturn));

/* ---- the libc functions ------------------------------------------------ */

/* The hot calls: an unmanaged descriptor takes the real call at once, with
 * no stack frame; everything else (not resolved yet, managed, inside ffio)
 * is the out-of-line body NAME_slow. */
#define SLOW __attribute__((noinline, cold))

/* ---- helpers ----------------------------------------------------------- */

/* ---- open -------------------------------------------------------------- */

static int real_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	NEED(openat, SYSCALL(SYS_openat, dirfd, path, flags, mode));
	return ffio_real.openat(dirfd, path, flags, mode);
}

/* An open: the kernel's, always; ffio_open then attaches a regular file
 * that an entry matches, or that is open through ffio already (a second
 * open of a file shares its cache). */
static int open_impl(int dirfd, const char *path, int flags, mode_t mode)
{
	if (ffio_in_lib || path == NULL || (flags & (O_PATH | O_DIRECTORY))) {
		int fd = real_openat(dirfd, path, flags, mode);
		if (fd >= 0 && !ffio_in_lib && ffio_fd_get(fd))
			ffio_fd_fresh(fd);
		return fd;
	}
	IN_LIB((ffio_init(), 0));
	NEED(openat, SYSCALL(SYS_openat, dirfd, path, flags, mode));
	if (flags & O_CREAT) /* a name made: a sign to other processes, maybe */
		ffio_tell_any();
	struct ffio_entry *e = IN_LIB(ffio_entry_for(path));
	if (e != NULL && ffio_open_diags)
		IN_LIB((ffio_log("open %s: entry %d (%s)", path, e->index, e->pattern), 0));
	return (int)result(IN_LIB(ffio_open(e, dirfd, path, flags, mode, 0)));
}

static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

FFIO_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	return open_impl(AT_FDCWD, path, flags, mode);
}

FFIO_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	return open_impl(dirfd, path, flags, mode);
}

FFIO_EXPORT int creat(const char *path, mode_t mode)
{
	return open_impl(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* _FORTIFY_SOURCE opens without a mode; creating without one is a bug that
 * glibc's own check reports (and aborts). */
FFIO_EXPORT int __open_2(const char *path, int flags)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		NEED(__open_2, abort());
		return ffio_real.__open_2(path, flags);
	}
	return open_impl(AT_FDCWD, path, flags, 0);
}

FFIO_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		NEED(__openat_2, abort());
		return ffio_real.__openat_2(dirfd, path, flags);
	}
	return open_impl(dirfd, path, flags, 0);
}

/* Every descriptor in the table comes here, managed, passed through or
 * ffio's own (which is not the program's to close: EBADF, as for a
 * descriptor that is not open).  A vfork child shares ffio's memory with
 * its parent: it only closes. */
static SLOW int close_slow(int fd)
{
	NEED(close, SYSCALL(SYS_close, fd));
	if (likely(ffio_fd_get(fd) == NULL) || ffio_in_lib || ffio_in_vfork_child())
		return ffio_real.close(fd);
	return (int)result(IN_LIB(ffio_fd_close(fd, 1)));
}

FFIO_EXPORT int close(int fd)
{
	ffio_fd_forget(fd);
	if (likely(__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY &&
		   ffio_real.close && !ffio_fd_get(fd)))
		return ffio_real.close(fd);
	return close_slow(fd);
}

/* ---- calls on one descriptor: one table ------------------------------- */

/* The calls whose managed form is one call on the description (or its
 * file): X(ret, name, params, args, fallback, managed, hit, passage).  Each
 * row makes NAME, which takes the real call at once for a descriptor ffio
 * does not manage, and its out-of-line body NAME_slow.  fallback: the
 * statement run before the C library's functions are known; managed: an
 * internal call (0, a count or -errno) on o; hit: a statement that returns
 * the call's result when the hit path took it (ffio-internal.h), tried
 * first on a managed descriptor; passage: how the real call is made on a
 * descriptor ffio does not manage, NO_TELL (as it is), TELL for a write
 * that may carry a message to another process, HEAR for a read that may
 * bring one (coherence.c).  The large-file names are aliases (below). */
#define NO_HIT (void)0
#define NO_TELL(call) return call
#define TELL_FD(fd)                           \
	do {                                  \
		if (ffio_unwritten_pending()) \
			ffio_tell(fd);        \
	} while (0)
#define TELL(call)            \
	do {                  \
		TELL_FD(fd);  \
		return call;  \
	} while (0)
#define HEAR(call)                              \
	do {                                    \
		ssize_t r_ = call;              \
		if (r_ >= 0 && ffio_any_open()) \
			ffio_heard(fd);         \
		return r_;                      \
	} while (0)
#define HIT(expr)                             \
	do {                                  \
		ssize_t h_ = (expr);          \
		if (h_ > 0)                   \
			return h_;            \
	} while (0)
#define IOV1(buf, n) &(struct iovec){(void *)(buf), n}, 1
#define FD_CALLS(X)                                                                                        \
	X(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n),                                      \
	  SYSCALL(SYS_read, fd, buf, n), ffio_ofd_readv(o, IOV1(buf, n)),                                  \
	  HIT(ffio_ofd_read_hit_pos(o, buf, n)), HEAR)                                                     \
	X(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n),                               \
	  SYSCALL(SYS_write, fd, buf, n), ffio_ofd_writev(o, IOV1(buf, n)),                                \
	  HIT(ffio_ofd_write_hit_pos(o, buf, n)), TELL)                                                    \
	X(ssize_t, pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off),                     \
	  SYSCALL(SYS_pread64, fd, buf, n, off), ffio_ofd_preadv(o, IOV1(buf, n), off),                    \
	  HIT(off >= 0 ? ffio_ofd_read_hit(o, buf, n, off) : 0), NO_TELL)                                  \
	X(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off),              \
	  SYSCALL(SYS_pwrite64, fd, buf, n, off), ffio_ofd_pwritev(o, IOV1(buf, n), off),                  \
	  HIT(off >= 0 ? ffio_ofd_write_hit(o, buf, n, off) : 0), NO_TELL)                                 \
	X(ssize_t, readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), NOSYS,               \
	  vec_read(o, iov, cnt, -1, 0), NO_HIT, HEAR)                                                      \
	X(ssize_t, writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), NOSYS,              \
	  vec_write(o, iov, cnt, -1, 0), NO_HIT, TELL)                                                     \
	X(ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off),                          \
	  (fd, iov, cnt, off), NOSYS, off < 0 ? -EINVAL : vec_read(o, iov, cnt, off, 0), NO_HIT, NO_TELL)  \
	X(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),                         \
	  (fd, iov, cnt, off), NOSYS, off < 0 ? -EINVAL : vec_write(o, iov, cnt, off, 0), NO_HIT, NO_TELL) \
	X(ssize_t, preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),              \
	  (fd, iov, cnt, off, flags), NOSYS, vec_read(o, iov, cnt, off, flags), NO_HIT, NO_TELL)           \
	X(ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags),             \
	  (fd, iov, cnt, off, flags), NOSYS, vec_write(o, iov, cnt, off, flags), NO_HIT, NO_TELL)          \
	X(off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence),                                \
	  SYSCALL(SYS_lseek, fd, off, whence), ffio_ofd_seek(o, off, whence),                              \
	  if (ffio_ofd_seek_hit(o, off, whence)) return o->pos, NO_TELL)                                   \
	X(int, fsync, (int fd), (fd), SYSCALL(SYS_fsync, fd), ffio_file_fsync(o->file, 0),                 \
	  NO_HIT, NO_TELL)                                                                                 \
	X(int, fdatasync, (int fd), (fd), SYSCALL(SYS_fdatasync, fd),                                      \
	  ffio_file_fsync(o->file, 1), NO_HIT, NO_TELL)                                                    \
	X(int, ftruncate, (int fd, off_t len), (fd, len), SYSCALL(SYS_ftruncate, fd, len),                 \
	  ffio_ofd_truncate(o, len), NO_HIT, NO_TELL)

/* preadv2/pwritev2 flags on a managed file: offset -1 means the file
 * position; RWF_HIPRI and RWF_NOWAIT are hints (the stack may block);
 * RWF_APPEND, RWF_NOAPPEND, RWF_DSYNC and RWF_SYNC act as the kernel's. */
#define RWF_HINTS (RWF_HIPRI | RWF_NOWAIT)
#define RWF_WRITE (RWF_DSYNC | RWF_SYNC | RWF_APPEND | RWF_NOAPPEND)

static ssize_t vec_read(struct ffio_ofd *o, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (flags & ~RWF_HINTS)
		return -EOPNOTSUPP;
	if (off < -1 || cnt < 0 || cnt > IOV_MAX)
		return -EINVAL;
	return off == -1 ? ffio_ofd_readv(o, iov, cnt) : ffio_ofd_preadv(o, iov, cnt, off);
}

static ssize_t vec_write(struct ffio_ofd *o, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (flags & ~(RWF_HINTS | RWF_WRITE))
		return -EOPNOTSUPP;
	if (off < -1 || cnt < 0 || cnt > IOV_MAX)
		return -EINVAL;
	return ffio_ofd_pwritev2(o, iov, cnt, off, flags & RWF_WRITE);
}

/* NAME for a descriptor ffio does not manage: one look-up, then the real
 * call (a jump); NAME_managed, for one it manages: the hit, else NAME_full,
 * the full path, or NAME_slow for the rare cases (before the C library's
 * functions are known, inside ffio, a file that passes through).  Each
 * calls the next as its last act, so that a hit saves no more registers
 * than it needs. */
#define WITH_O(...) (struct ffio_ofd *o, __VA_ARGS__)
#define AND_O(...)  (o, __VA_ARGS__)
#define REAL_READY(name) (__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY && ffio_real.name)
#define FD_WRAPPER(ret, name, params, args, fallback, call, hit, passage)                      \
	static SLOW ret name##_slow params                                                     \
	{                                                                                      \
		NEED(name, fallback);                                                          \
		struct ffio_ofd *o = managed(fd);                                              \
		if (likely(o == NULL))                                                         \
			return ffio_real.name args;                                            \
		return (ret)result(IN_LIB(call));                                              \
	}                                                                                      \
	__attribute__((noinline)) FFIO_HOT static ret name##_full WITH_O params               \
	{                                                                                      \
		if (likely(REAL_READY(name) && !ffio_in_lib && !o->is_private && !o->file->through)) \
			return (ret)result(IN_LIB(call));                                      \
		return name##_slow args;                                                       \
	}                                                                                      \
	__attribute__((noinline)) FFIO_HOT static ret name##_managed WITH_O params            \
	{                                                                                      \
		if (likely(!ffio_in_lib))                                                      \
			hit;                                                                   \
		return name##_full AND_O args;                                                 \
	}                                                                                      \
	FFIO_EXPORT FFIO_HOT ret name params                                                   \
	{                                                                                      \
		struct ffio_ofd *o = ffio_fd_get(fd);                                          \
		if (likely(o == NULL)) {                                                       \
			if (likely(REAL_READY(name)))                                          \
				passage(ffio_real.name args);                                  \
			return name##_slow args;                                               \
		}                                                                              \
		return name##_managed AND_O args;                                              \
	}
FD_CALLS(FD_WRAPPER)

/* _FORTIFY_SOURCE's checked reads. */
FFIO_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return read(fd, buf, n);
}

FFIO_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, buf, n, off);
}

/* ---- calls by path ----------------------------------------------------- */

FFIO_EXPORT int truncate(const char *path, off_t len)
{
	NEED(truncate, NOSYS);
	struct stat st;
	struct ffio_file *f = NULL;
	if (!ffio_in_lib && ffio_kernel_stat_at(AT_FDCWD, path, 0, &st) == 0)
		f = file_of_stat(&st);
	if (f == NULL)
		return ffio_real.truncate(path, len);
	int rc = IN_LIB(ffio_file_truncate_path(f, path, len));
	ffio_file_put(f);
	return (int)result(rc);
}

/* ---- stat: what the kernel would say ---------------------------------- */

/* A stat of a file ffio holds: the writes go to the kernel first, when
 * there are any since the last stat (ffio_file_stat_sync), so that
 * st_mtime, st_ctime and st_blocks are the kernel's with them; st_size is
 * the kernel's too, which another process may have moved, unless a write
 * back failed (ffio_file_stat_size).  By
 * descriptor, the file is known before the call; by path, only after it,
 * which is then made again when there was anything to write. */
static void stat_begin(struct ffio_ofd *o)
{
	if (o != NULL)
		(void)IN_LIB(ffio_file_stat_sync(o->file));
}

static void size_fix(struct ffio_file *f, off_t *size)
{
	off_t len;
	if (IN_LIB(ffio_file_stat_size(f, *size, &len)) == 0)
		*size = len;
}

static void statx_size_fix(struct ffio_file *f, struct statx *stx)
{
	off_t len;
	if ((stx->stx_mask & STATX_SIZE) && IN_LIB(ffio_file_stat_size(f, (off_t)stx->stx_size, &len)) == 0)
		stx->stx_size = (uint64_t)len;
}

/* A stat by a managed descriptor (o, the description), or by path or
 * another descriptor (o NULL: the file is found by st's inode): call
 * fills *st, and is made again after a write-back found that way. */
#define STAT_CALL(o, call, st)                                                             \
	__extension__({                                                                    \
		struct ffio_ofd *o_ = ffio_in_lib ? NULL : (o);                            \
		struct ffio_file *f_ = NULL;                                               \
		stat_begin(o_);                                                            \
		int rc_ = (call);                                                          \
		if (rc_ == 0 && o_ != NULL) {                                              \
			size_fix(o_->file, &(st)->st_size);                                \
		} else if (rc_ == 0 && (f_ = file_of_stat(st)) != NULL) {                     \
			if (IN_LIB(ffio_file_stat_sync(f_)) > 0)                           \
				rc_ = (call);                                              \
			if (rc_ == 0 && (st)->st_ino == f_->ino && (st)->st_dev == f_->dev) \
				size_fix(f_, &(st)->st_size);                              \
			ffio_file_put(f_);                                                 \
		}                                                                          \
		rc_;                                                                       \
	})

/* The description a *at call with AT_EMPTY_PATH names through dirfd, or NULL. */
static struct ffio_ofd *empty_path_ofd(int dirfd, const char *path, int flags)
{
	if ((flags & AT_EMPTY_PATH) && path != NULL && path[0] == '\0')
		return managed(dirfd);
	return NULL;
}

FFIO_EXPORT int fstat(int fd, struct stat *st)
{
	NEED(fstat, SYSCALL(SYS_fstat, fd, st));
	return STAT_CALL(managed(fd), ffio_real.fstat(fd, st), st);
}

FFIO_EXPORT int stat(const char *path, struct stat *st)
{
	NEED(stat, SYSCALL(SYS_newfstatat, AT_FDCWD, path, st, 0));
	return STAT_CALL(NULL, ffio_real.stat(path, st), st);
}

FFIO_EXPORT int lstat(const char *path, struct stat *st)
{
	NEED(lstat, SYSCALL(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW));
	return STAT_CALL(NULL, ffio_real.lstat(path, st), st);
}

FFIO_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	NEED(fstatat, SYSCALL(SYS_newfstatat, dirfd, path, st, flags));
	return STAT_CALL(empty_path_ofd(dirfd, path, flags), ffio_real.fstatat(dirfd, path, st, flags), st);
}

/* statx by path: the inode is known when the kernel gave the type and
 * number (the mask). */
FFIO_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	NEED(statx, NOSYS);
	struct ffio_ofd *o = ffio_in_lib ? NULL : empty_path_ofd(dirfd, path, flags);
	stat_begin(o);
	int rc = ffio_real.statx(dirfd, path, flags, mask, stx);
	if (rc != 0 || ffio_in_lib)
		return rc;
	struct ffio_file *f = o ? o->file : NULL;
	if (f == NULL && (stx->stx_mask & (STATX_TYPE | STATX_INO)) == (STATX_TYPE | STATX_INO)) {
		struct stat st;
		ffio_stat_of_statx(stx, &st);
		f = file_of_stat(&st);
		if (f != NULL && IN_LIB(ffio_file_stat_sync(f)) > 0 &&
		    ((rc = ffio_real.statx(dirfd, path, flags, mask, stx)) != 0 || stx->stx_ino != f->ino))
			f = (ffio_file_put(f), NULL);
		if (f != NULL) {
			statx_size_fix(f, stx);
			ffio_file_put(f);
		}
	} else if (f != NULL) {
		statx_size_fix(f, stx);
	}
	return rc;
}

/* Programs built against glibc before 2.33 call these. */
FFIO_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	NEED(__fxstat, NOSYS);
	return STAT_CALL(managed(fd), ffio_real.__fxstat(ver, fd, st), st);
}

FFIO_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	NEED(__xstat, NOSYS);
	return STAT_CALL(NULL, ffio_real.__xstat(ver, path, st), st);
}

FFIO_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	NEED(__lxstat, NOSYS);
	return STAT_CALL(NULL, ffio_real.__lxstat(ver, path, st), st);
}

FFIO_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	NEED(__fxstatat, NOSYS);
	return STAT_CALL(empty_path_ofd(dirfd, path, flags), ffio_real.__fxstatat(ver, dirfd, path, st, flags),
			 st);
}

/* ---- fcntl, locks ------------------------------------------------------ */

static int is_setlk(int cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

static int is_getlk(int cmd)
{
	return cmd == F_GETLK || cmd == F_OFD_GETLK;
}

/* Around a lock on any file (ffio_files_order): before one is released,
 * every file's writes go to the kernel; after one is taken, every file
 * drops its clean data, so that reads see what other processes wrote
 * under the lock before.  errno is the lock call's. */
static void lock_order(int drop_clean)
{
	int saved = errno;
	(void)IN_LIB(ffio_files_order(drop_clean, NULL));
	errno = saved;
}

/* A lock was taken on fd: a record lock (fcntl, lockf) is followed for
 * the shared mappings of its file (coherence.c); then lock_order. */
static void lock_taken(int fd, int record)
{
	if (record)
		ffio_shared_map_locked(fd);
	lock_order(1);
}

/* A lock on a descriptor ffio does not cache (another file, or one that
 * passes through): it may guard cached files all the same.  A bad
 * pointer is not read: the kernel refuses it. */
static int lock_other(int fd, int cmd, struct flock *fl)
{
	int release = !ffio_user_range_odd(fl, sizeof *fl) && fl->l_type == F_UNLCK;
	if (release)
		lock_order(0);
	int rc = ffio_real.fcntl(fd, cmd, fl);
	if (rc == 0 && !release)
		lock_taken(fd, 1);
	return rc;
}

/* A lock that may wait: the wait is the program's, made outside ffio
 * (which holds nothing meanwhile), so that its signal handlers run as
 * their signals come, as with the kernel: an alarm's that leaves the wait
 * by siglongjmp, or one that closes the descriptor (the caller holds the
 * file). */
static int wait_outside(int fd, int cmd, struct flock *fl)
{
	if (ffio_in_lib != 1) /* not the program's call alone */
		return ffio_real.fcntl(fd, cmd, fl);
	ffio_leave();
	int rc = ffio_real.fcntl(fd, cmd, fl);
	ffio_in_lib++;
	return rc;
}

/* A record lock on a managed file.  Positions relative to the file
 * position or its end are made absolute from ffio's view (the kernel's
 * offset and size lag behind the stack's).  Releasing flushes the dirty
 * data first, so that the next holder reads it.  A process-wide (not OFD)
 * lock is released by the close of any descriptor of the file: the file
 * remembers to flush before such closes. */
static int lock_managed(struct ffio_ofd *o, int fd, int cmd, struct flock *app)
{
	struct ffio_file *f = o->file;
	struct flock fl = *app;
	if (fl.l_whence == SEEK_CUR) {
		off_t pos = ffio_ofd_pos(o);
		if (pos < 0)
			return (int)pos;
		fl.l_start += pos;
		fl.l_whence = SEEK_SET;
	} else if (fl.l_whence == SEEK_END) {
		off_t len;
		int rc = ffio_file_size(f, &len);
		if (rc < 0)
			return rc;
		fl.l_start += len;
		fl.l_whence = SEEK_SET;
	}
	int release = is_setlk(cmd) && fl.l_type == F_UNLCK;
	if (release)
		lock_order(0);
	int waits = !release && (cmd == F_SETLKW || cmd == F_OFD_SETLKW);
	if (waits)
		ffio_file_get(f);
	int rc = waits ? wait_outside(fd, cmd, &fl) : ffio_real.fcntl(fd, cmd, &fl);
	if (rc < 0) {
		rc = -errno;
	} else if (is_getlk(cmd)) {
		*app = fl;
	} else {
		ffio_file_note_lock(f, &fl, cmd == F_SETLK || cmd == F_SETLKW);
		if (!release)
			lock_taken(fd, 1);
	}
	if (waits)
		ffio_file_put(f);
	return rc;
}

/* fcntl on a managed descriptor: the kernel's descriptor has the flags the
 * application gave (ffio writes through its own), so only duplicates,
 * the status flags ffio follows and locks need more than the kernel. */
static int fcntl_managed(struct ffio_ofd *o, int fd, int cmd, void *arg)
{
	int rc;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		rc = FFIO_FD_ROOM(ffio_real.fcntl(fd, cmd, (int)(long)arg), r_ < 0);
		if (rc < 0)
			return -errno;
		{
			int err = ffio_fd_dup(fd, rc);
			if (err < 0) {
				ffio_real.close(rc);
				return err;
			}
		}
		return rc;
	case F_SETFL:
		rc = ffio_real.fcntl(fd, F_SETFL, (int)(long)arg);
		if (rc < 0)
			return -errno;
		int now = ffio_real.fcntl(fd, F_GETFL);
		if (now >= 0)
			ffio_ofd_set_flags(o, now);
		return rc;
	default:
		if (is_setlk(cmd) || is_getlk(cmd)) {
			if (arg == NULL)
				return -EFAULT;
			return lock_managed(o, fd, cmd, arg);
		}
		rc = ffio_real.fcntl(fd, cmd, arg);
		return rc < 0 ? -errno : rc;
	}
}

FFIO_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *); /* every fcntl argument fits a pointer */
	va_end(ap);
	NEED(fcntl, SYSCALL(SYS_fcntl, fd, cmd, arg));
	struct ffio_ofd *o = managed(fd);
	if (likely(o == NULL)) {
		if (unlikely(is_setlk(cmd)) && !ffio_in_lib && ffio_any_open())
			return lock_other(fd, cmd, arg);
		int rc = ffio_real.fcntl(fd, cmd, arg);
		if (unlikely(rc < 0) && errno == EMFILE && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
		    ffio_fd_pressure())
			rc = FFIO_FD_ROOM(ffio_real.fcntl(fd, cmd, arg), r_ < 0);
		/* A duplicate of a passed-through descriptor is one too. */
		if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && !ffio_in_lib &&
		    (ffio_fd_get(fd) != NULL || ffio_fd_get(rc) != NULL)) {
			if (ffio_fd_file(fd) != NULL)
				IN_LIB(ffio_fd_dup(fd, rc));
			else
				IN_LIB((ffio_fd_fresh(rc), 0));
		}
		return rc;
	}
	return (int)result(IN_LIB(fcntl_managed(o, fd, cmd, arg)));
}

FFIO_EXPORT int flock(int fd, int op)
{
	NEED(flock, NOSYS);
	if (ffio_in_lib || !ffio_any_open())
		return ffio_real.flock(fd, op);
	int release = (op & ~LOCK_NB) == LOCK_UN;
	if (release)
		lock_order(0);
	int rc = ffio_real.flock(fd, op);
	if (rc == 0 && !release)
		lock_taken(fd, 0);
	return rc;
}

/* lockf is a record lock from the file position: made on ffio's position. */
static int lockf_managed(struct ffio_ofd *o, int fd, int cmd, off_t len)
{
	struct flock fl = { .l_whence = SEEK_CUR, .l_start = 0, .l_len = len };
	int rc;
	switch (cmd) {
	case F_TEST:
		fl.l_type = F_RDLCK;
		rc = lock_managed(o, fd, F_GETLK, &fl);
		if (rc < 0)
			return rc;
		return (fl.l_type == F_UNLCK || fl.l_pid == getpid()) ? 0 : -EACCES;
	case F_ULOCK:
		fl.l_type = F_UNLCK;
		return lock_managed(o, fd, F_SETLK, &fl);
	case F_LOCK:
		fl.l_type = F_WRLCK;
		return lock_managed(o, fd, F_SETLKW, &fl);
	case F_TLOCK:
		fl.l_type = F_WRLCK;
		rc = lock_managed(o, fd, F_SETLK, &fl);
		return rc == -EAGAIN ? -EACCES : rc;
	default:
		return -EINVAL;
	}
}

FFIO_EXPORT int lockf(int fd, int cmd, off_t len)
{
	NEED(lockf, NOSYS);
	NEED(fcntl, NOSYS);
	struct ffio_ofd *o = managed(fd);
	if (likely(o == NULL)) {
		if (ffio_in_lib || !ffio_any_open() || (cmd != F_ULOCK && cmd != F_LOCK && cmd != F_TLOCK))
			return ffio_real.lockf(fd, cmd, len);
		if (cmd == F_ULOCK)
			lock_order(0);
		int rc = ffio_real.lockf(fd, cmd, len);
		if (rc == 0 && cmd != F_ULOCK)
			lock_taken(fd, 1);
		return rc;
	}
	return (int)result(IN_LIB(lockf_managed(o, fd, cmd, len)));
}

/* ---- descriptors ------------------------------------------------------- */

/* After the kernel made newfd a duplicate of oldfd: attach it to oldfd's
 * description (managed or passed through), or forget a stale entry of
 * its number. */
static int attach_new(int oldfd, int newfd)
{
	if (newfd < 0 || ffio_in_lib)
		return newfd;
	if (ffio_fd_file(oldfd) == NULL) {
		IN_LIB((ffio_fd_fresh(newfd), 0));
		return newfd;
	}
	int rc = IN_LIB(ffio_fd_dup(oldfd, newfd));
	if (rc < 0) {
		ffio_real.close(newfd);
		return (int)result(rc);
	}
	return newfd;
}

FFIO_EXPORT int dup(int fd)
{
	NEED(dup, SYSCALL(SYS_dup, fd));
	if (likely(ffio_fd_get(fd) == NULL) && !ffio_in_lib) {
		int nfd = FFIO_FD_ROOM(ffio_real.dup(fd), r_ < 0);
		if (nfd >= 0 && unlikely(ffio_fd_get(nfd) != NULL))
			IN_LIB((ffio_fd_fresh(nfd), 0));
		return nfd;
	}
	if (ffio_in_lib || ffio_fd_is_private(fd)) /* not the program's */
		return ffio_in_lib ? ffio_real.dup(fd) : (int)result(-EBADF);
	return attach_new(fd, FFIO_FD_ROOM(ffio_real.dup(fd), r_ < 0));
}

/* dup2 and dup3: newfd, when the table knows it, stops being what it was:
 * ffio's own descriptor is given up first (its file passes through), a
 * managed one is dropped after the kernel replaced it (ffio writes back
 * through its own descriptor, so nothing is lost).  A vfork child only
 * asks the kernel: the table is its parent's. */
static int dup_onto(int oldfd, int newfd, int flags, int three)
{
	int r;
	if (ffio_in_lib || ffio_in_vfork_child())
		return three ? ffio_real.dup3(oldfd, newfd, flags) : ffio_real.dup2(oldfd, newfd);
	if (ffio_fd_is_private(oldfd))
		return (int)result(-EBADF);
	if (oldfd != newfd && ffio_fd_get(newfd) != NULL) {
		/* Check oldfd first: dup2 on a bad oldfd leaves newfd open. */
		if (ffio_real.fcntl(oldfd, F_GETFD) < 0)
			return -1;
		if (three && (flags & ~O_CLOEXEC))
			return ffio_real.dup3(oldfd, newfd, flags); /* the error */
		if (ffio_fd_is_private(newfd)) {
			int rc = IN_LIB(ffio_private_evict(newfd, newfd));
			if (rc < 0)
				IN_LIB((ffio_log("descriptor %d taken by dup2: flushing its file failed: %s",
						 newfd, strerror(-rc)), 0));
		} else {
			int rc = IN_LIB(ffio_fd_close(newfd, 0));
			if (rc < 0)
				IN_LIB((ffio_log("descriptor %d replaced by dup2: its close failed: %s",
						 newfd, strerror(-rc)), 0));
		}
	}
	r = three ? ffio_real.dup3(oldfd, newfd, flags) : ffio_real.dup2(oldfd, newfd);
	if (r < 0 || oldfd == newfd)
		return r;
	return attach_new(oldfd, r);
}

FFIO_EXPORT int dup2(int oldfd, int newfd)
{
	ffio_fd_forget(newfd);
	NEED(dup2, SYSCALL(SYS_dup2, oldfd, newfd));
	if (likely(ffio_fd_get(oldfd) == NULL && ffio_fd_get(newfd) == NULL))
		return ffio_real.dup2(oldfd, newfd);
	return dup_onto(oldfd, newfd, 0, 0);
}

FFIO_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	ffio_fd_forget(newfd);
	NEED(dup3, SYSCALL(SYS_dup3, oldfd, newfd, flags));
	if (likely(ffio_fd_get(oldfd) == NULL && ffio_fd_get(newfd) == NULL))
		return ffio_real.dup3(oldfd, newfd, flags);
	return dup_onto(oldfd, newfd, flags, 1);
}

/* ---- advice, allocation, mappings -------------------------------------- */

FFIO_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	NEED(posix_fadvise, return ENOSYS);
	struct ffio_ofd *o = managed(fd);
	if (likely(o == NULL))
		return ffio_real.posix_fadvise(fd, off, len, advice);
	if (advice == POSIX_FADV_DONTNEED) {
		int rc = IN_LIB(ffio_file_invalidate(o->file));
		if (rc < 0)
			return -rc;
	}
	return ffio_real.posix_fadvise(fd, off, len, advice);
}

FFIO_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	NEED(fallocate, NOSYS);
	struct ffio_ofd *o = managed(fd);
	if (likely(o == NULL))
		return ffio_real.fallocate(fd, mode, off, len);
	int rc = IN_LIB(ffio_file_flush(o->file));
	if (rc < 0)
		return (int)result(rc);
	rc = ffio_real.fallocate(fd, mode, off, len);
	if (rc < 0)
		return rc;
	/* The size (and, for hole punching, the data) changed underneath. */
	return (int)result(IN_LIB(ffio_file_invalidate(o->file)));
}

FFIO_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	NEED(posix_fallocate, return ENOSYS);
	struct ffio_ofd *o = managed(fd);
	if (likely(o == NULL))
		return ffio_real.posix_fallocate(fd, off, len);
	int rc = IN_LIB(ffio_file_flush(o->file));
	if (rc < 0)
		return -rc;
	rc = ffio_real.posix_fallocate(fd, off, len);
	if (rc != 0)
		return rc;
	return -IN_LIB(ffio_file_invalidate(o->file));
}

/* A mapping reads and writes the kernel's pages, for as long as it lives
 * (longer than the descriptor, maybe): the file passes through to the
 * kernel, for good in this process.  A shared, writable mapping of a file
 * is followed (coherence.c): locked as well, it makes writes go through. */
FFIO_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	NEED(mmap, return (void *)FFIO_SYS(SYS_mmap, addr, len, prot, flags, fd, off));
	return ffio_map_file(addr, len, prot, flags, fd, off, 0); /* (coherence.c) */
}

/* ---- kernel-side copies ------------------------------------------------ */

FFIO_EXPORT ssize_t copy_file_range(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len,
			unsigned flags)
{
	NEED(copy_file_range, NOSYS);
	struct ffio_ofd *oin = managed(fd_in), *oout = managed(fd_out);
	if (likely(oin == NULL && oout == NULL))
		return ffio_real.copy_file_range(fd_in, off_in, fd_out, off_out, len, flags);
	int rc = kernel_io_begin(oin);
	if (rc == 0)
		rc = kernel_io_begin(oout);
	if (rc < 0)
		return result(rc);
	ssize_t n = ffio_real.copy_file_range(fd_in, off_in, fd_out, off_out, len, flags);
	int err = errno;
	kernel_io_end(oin, fd_in, 0, off_in == NULL);
	kernel_io_end(oout, fd_out, 1, off_out == NULL);
	errno = err;
	return n;
}

FFIO_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	NEED(sendfile, NOSYS);
	TELL_FD(out_fd);
	struct ffio_ofd *oin = managed(in_fd), *oout = managed(out_fd);
	if (likely(oin == NULL && oout == NULL))
		return ffio_real.sendfile(out_fd, in_fd, offset, count);
	int rc = kernel_io_begin(oin);
	if (rc == 0)
		rc = kernel_io_begin(oout);
	if (rc < 0)
		return result(rc);
	ssize_t n = ffio_real.sendfile(out_fd, in_fd, offset, count);
	int err = errno;
	kernel_io_end(oin, in_fd, 0, offset == NULL);
	kernel_io_end(oout, out_fd, 1, 1);
	errno = err;
	return n;
}

FFIO_EXPORT ssize_t splice(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len,
	       unsigned flags)
{
	NEED(splice, NOSYS);
	TELL_FD(fd_out);
	struct ffio_ofd *oin = managed(fd_in), *oout = managed(fd_out);
	if (likely(oin == NULL && oout == NULL))
		return ffio_real.splice(fd_in, off_in, fd_out, off_out, len, flags);
	int rc = kernel_io_begin(oin);
	if (rc == 0)
		rc = kernel_io_begin(oout);
	if (rc < 0)
		return result(rc);
	ssize_t n = ffio_real.splice(fd_in, off_in, fd_out, off_out, len, flags);
	int err = errno;
	kernel_io_end(oin, fd_in, 0, off_in == NULL);
	kernel_io_end(oout, fd_out, 1, off_out == NULL);
	errno = err;
	return n;
}

/* ---- the 64-bit names (LP64: the same functions) ------------------------ */

#define SAME_AS(name64, name) FFIO_EXPORT extern __typeof__(name) name64 __attribute__((alias(#name)));
SAME_AS(open64, open)
SAME_AS(openat64, openat)
SAME_AS(creat64, creat)
SAME_AS(__open64_2, __open_2)
SAME_AS(__openat64_2, __openat_2)
SAME_AS(__pread64_chk, __pread_chk)
SAME_AS(pread64, pread)
SAME_AS(pwrite64, pwrite)
SAME_AS(preadv64, preadv)
SAME_AS(pwritev64, pwritev)
SAME_AS(preadv64v2, preadv2)
SAME_AS(pwritev64v2, pwritev2)
SAME_AS(lseek64, lseek)
SAME_AS(ftruncate64, ftruncate)
SAME_AS(truncate64, truncate)
SAME_AS(fcntl64, fcntl)
SAME_AS(lockf64, lockf)
SAME_AS(posix_fadvise64, posix_fadvise)
SAME_AS(fallocate64, fallocate)
SAME_AS(posix_fallocate64, posix_fallocate)
SAME_AS(mmap64, mmap)
SAME_AS(sendfile64, sendfile)

/* struct stat64 is struct stat on LP64; only the C types differ. */
FFIO_EXPORT int fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

FFIO_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return stat(path, (struct stat *)st);
}

FFIO_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return lstat(path, (struct stat *)st);
}

FFIO_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return fstatat(dirfd, path, (struct stat *)st, flags);
}

FFIO_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	return __fxstat(ver, fd, (struct stat *)st);
}

FFIO_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	return __xstat(ver, path, (struct stat *)st);
}

FFIO_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	return __lxstat(ver, path, (struct stat *)st);
}

FFIO_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	return __fxstatat(ver, dirfd, path, (struct stat *)st, flags);
}
