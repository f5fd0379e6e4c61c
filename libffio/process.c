/* libffio/process.c -- interposed calls about programs and descriptors as a
 * whole rather than one file: starting programs (exec*, posix_spawn*,
 * system, popen: they see every byte written before them), _Fork, closing
 * ranges of descriptors (closefrom, close_range: ffio keeps its own),
 * stdio on descriptors and paths ffio manages (fdopen, fclose, fopen),
 * sync/syncfs/sync_file_range, and the calls that create descriptors
 * without open (pipe, socket, ...), whose numbers may have been closed
 * behind ffio's back.
 *
 * glibc's own internal calls (stdio's reads and writes, system's spawn)
 * cannot be interposed; ffio(7) says how these wrappers keep them correct. */
#include "config.h"
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

pid_t _Fork(void);

/* ---- starting programs -------------------------------------------------- */

/* Before another program image takes over the descriptors: flush every
 * file and set each kernel offset to ffio's position.  A flush that fails
 * never stops the program from starting: the error is logged and stays
 * recorded on its file, reported by its next write, fsync or close. */
static void exec_prepare(void)
{
	if (!ffio_in_lib)
		(void)IN_LIB(ffio_flush_all());
}

FFIO_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	NEED(execve, NOSYS);
	exec_prepare();
	return ffio_real.execve(path, argv, envp);
}

FFIO_EXPORT int execv(const char *path, char *const argv[])
{
	NEED(execv, NOSYS);
	exec_prepare();
	return ffio_real.execv(path, argv);
}

FFIO_EXPORT int execvp(const char *file, char *const argv[])
{
	NEED(execvp, NOSYS);
	exec_prepare();
	return ffio_real.execvp(file, argv);
}

FFIO_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEED(execvpe, NOSYS);
	exec_prepare();
	return ffio_real.execvpe(file, argv, envp);
}

FFIO_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEED(fexecve, NOSYS);
	exec_prepare();
	return ffio_real.fexecve(fd, argv, envp);
}

FFIO_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	NEED(execveat, NOSYS);
	exec_prepare();
	return ffio_real.execveat(dirfd, path, argv, envp, flags);
}

/* The execl family: collect the arguments (and for execle the environment
 * after the terminating NULL), then exec as execv/execvp/execve do. */
enum execl_kind { EXECL, EXECLP, EXECLE };

static int execl_common(enum execl_kind kind, const char *path, const char *arg, va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t argc = 1;
	if (arg != NULL)
		while (va_arg(count, char *) != NULL)
			argc++;
	va_end(count);
	char *argv[argc + 1];
	argv[0] = (char *)arg;
	for (size_t i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	argv[argc] = NULL;
	if (arg != NULL)
		(void)va_arg(ap, char *); /* the terminating NULL */
	switch (kind) {
	case EXECLP:
		return execvp(path, argv);
	case EXECLE:
		return execve(path, argv, va_arg(ap, char *const *));
	default:
		return execv(path, argv);
	}
}

FFIO_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(EXECL, path, arg, ap);
	va_end(ap);
	return rc;
}

FFIO_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(EXECLP, file, arg, ap);
	va_end(ap);
	return rc;
}

FFIO_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = execl_common(EXECLE, path, arg, ap);
	va_end(ap);
	return rc;
}

FFIO_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	NEED(posix_spawn, return ENOSYS);
	exec_prepare();
	return ffio_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

FFIO_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	NEED(posix_spawnp, return ENOSYS);
	exec_prepare();
	return ffio_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

/* system and popen start their shell with glibc's internal spawn. */
FFIO_EXPORT int system(const char *command)
{
	NEED(system, return -1);
	exec_prepare();
	int status = ffio_real.system(command);
	ffio_heard_any(); /* the command ended: what it wrote is there */
	return status;
}

FFIO_EXPORT FILE *popen(const char *command, const char *type)
{
	NEED(popen, return NULL);
	exec_prepare();
	return ffio_real.popen(command, type);
}

/* fork() runs the handlers of pthread_atfork; _Fork does not: it is
 * given the same ones here. */
FFIO_EXPORT pid_t _Fork(void)
{
	NEED(_Fork, NOSYS);
	if (ffio_in_lib)
		return ffio_real._Fork();
	ffio_fork_prepare();
	pid_t pid = ffio_real._Fork();
	int err = errno;
	if (pid == 0)
		ffio_fork_child();
	else
		ffio_fork_parent();
	errno = err;
	return pid;
}

/* _exit ends the process without exit's handlers: what the program wrote
 * must still be in the file, as it is without ffio.  A vfork child leaves
 * its parent's data to its parent. */
FFIO_EXPORT void _exit(int status)
{
	if (ffio_real_ready() && !ffio_in_lib && !ffio_in_vfork_child())
		(void)IN_LIB(ffio_flush_all());
	if (ffio_real._exit)
		ffio_real._exit(status);
	FFIO_SYS(SYS_exit_group, status);
	__builtin_unreachable();
}

FFIO_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* ---- closing ranges of descriptors ------------------------------------- */

/* Close the program's descriptors in [lo, hi] and keep ffio's own (its
 * write-back goes through them).  In a vfork child, which shares ffio's
 * memory with its parent, everything is flushed first (the program it will
 * start must see it), then the kernel closes the whole range. */
static int close_between(unsigned lo, unsigned hi)
{
	if (ffio_in_lib)
		return ffio_real.close_range(lo, hi, 0);
	if (ffio_in_vfork_child()) {
		(void)IN_LIB(ffio_flush_all());
		return ffio_real.close_range(lo, hi, 0);
	}
	IN_LIB((ffio_fd_close_range(lo, hi), 0));
	while (lo <= hi) {
		int p = ffio_private_next(lo > (unsigned)INT32_MAX ? INT32_MAX : (int)lo);
		if (p < 0 || (unsigned)p > hi)
			break;
		if ((unsigned)p > lo && ffio_real.close_range(lo, (unsigned)p - 1, 0) < 0)
			return -1;
		lo = (unsigned)p + 1;
		if (lo == 0)
			return 0;
	}
	return lo <= hi ? ffio_real.close_range(lo, hi, 0) : 0;
}

FFIO_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		ffio_fd_forget_range(first, last);
	NEED(close_range, SYSCALL(SYS_close_range, first, last, flags));
	if (first > last || (flags & CLOSE_RANGE_CLOEXEC) || ffio_in_lib)
		return ffio_real.close_range(first, last, flags);
	if ((flags & CLOSE_RANGE_UNSHARE) && ffio_real.close_range(~0U, ~0U, CLOSE_RANGE_UNSHARE) < 0)
		return -1; /* unshare the table as asked; close nothing yet */
	return close_between(first, last);
}

FFIO_EXPORT void closefrom(int lowfd)
{
	ffio_fd_forget_range(lowfd < 0 ? 0 : (unsigned)lowfd, ~0U);
	NEED(close_range, {
		FFIO_SYS(SYS_close_range, lowfd, ~0U, 0);
		return;
	});
	(void)close_between(lowfd < 0 ? 0 : (unsigned)lowfd, ~0U);
}

/* ---- stdio ------------------------------------------------------------- */

/* stdio reads, writes and closes with the C library's internal calls, on
 * the kernel's descriptor.  While a stream is open on a regular file, the
 * file passes through to the kernel and new opens of it are not managed;
 * fclose (which programs call by name) ends that. */
struct stream {
	FILE *fp;
	dev_t dev;
	ino_t ino;
	struct stream *next;
};
static struct stream *streams;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

static void stream_track(FILE *fp)
{
	struct stat st;
	if (fp == NULL || ffio_in_lib)
		return;
	int fd = fileno(fp);
	if (fd < 0 || ffio_kernel_stat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ffio_in_vfork_child())
		return;
	struct stream *s = malloc(sizeof *s);
	if (s == NULL)
		return;
	*s = (struct stream){.fp = fp, .dev = st.st_dev, .ino = st.st_ino};
	int rc = IN_LIB(ffio_kernel_hold(st.st_dev, st.st_ino, 0));
	if (rc < 0)
		IN_LIB((ffio_log("a stream on a file ffio held: flushing it failed: %s", strerror(-rc)), 0));
	pthread_mutex_lock(&streams_lock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&streams_lock);
}

static void stream_untrack(FILE *fp)
{
	struct stream **p, *s = NULL;
	pthread_mutex_lock(&streams_lock);
	for (p = &streams; *p; p = &(*p)->next)
		if ((*p)->fp == fp) {
			s = *p;
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&streams_lock);
	if (s != NULL) {
		IN_LIB((ffio_kernel_release(s->dev, s->ino), 0));
		free(s);
	}
}

/* A stream's descriptor number, freshly the kernel's: no stale entry. */
static FILE *stdio_fresh(FILE *s)
{
	if (s != NULL && !ffio_in_lib && !ffio_in_vfork_child()) {
		int fd = fileno(s);
		if (fd >= 0 && ffio_fd_get(fd) != NULL)
			IN_LIB((ffio_fd_fresh(fd), 0));
	}
	stream_track(s);
	return s;
}

/* A managed descriptor given to stdio keeps its description (the program
 * may still use the descriptor); its file passes through. */
FFIO_EXPORT FILE *fdopen(int fd, const char *mode)
{
	NEED(fdopen, NOSYS_NULL);
	FILE *s = ffio_real.fdopen(fd, mode);
	stream_track(s);
	return s;
}

/* fclose closes the stream's descriptor with glibc's internal close: the
 * table forgets it. */
FFIO_EXPORT int fclose(FILE *stream)
{
	NEED(fclose, return EOF);
	if (ffio_in_lib || stream == NULL)
		return ffio_real.fclose(stream);
	int fd = fileno(stream);
	ffio_fd_forget(fd);
	/* Most streams are neither tracked nor on a descriptor in the table:
	 * they cost no more than the C library's fclose. */
	int ours = __atomic_load_n(&streams, __ATOMIC_RELAXED) != NULL ||
		   (fd >= 0 && ffio_fd_get(fd) != NULL);
	int rc = ffio_real.fclose(stream);
	if (!ours || ffio_in_vfork_child())
		return rc;
	int err = errno;
	stream_untrack(stream);
	if (fd >= 0 && ffio_fd_get(fd) != NULL)
		(void)IN_LIB(ffio_fd_close(fd, 0));
	errno = err;
	return rc;
}

FFIO_EXPORT FILE *fopen(const char *path, const char *mode)
{
	NEED(fopen, NOSYS_NULL);
	if (mode != NULL && (mode[0] == 'w' || mode[0] == 'a')) /* a name made, maybe */
		ffio_tell_any();
	return stdio_fresh(FFIO_FD_ROOM(ffio_real.fopen(path, mode), r_ == NULL));
}

FFIO_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	NEED(freopen, NOSYS_NULL);
	int old = ffio_in_lib || stream == NULL ? -1 : fileno(stream);
	ffio_fd_forget(old);
	FILE *s = ffio_real.freopen(path, mode, stream);
	if (!ffio_in_lib && stream != NULL)
		stream_untrack(stream);
	if (s != NULL && old >= 0 && fileno(s) != old && ffio_fd_get(old) != NULL)
		(void)IN_LIB(ffio_fd_close(old, 0));
	return stdio_fresh(s);
}

/* ---- sync -------------------------------------------------------------- */

FFIO_EXPORT void sync(void)
{
	NEED(sync, {
		FFIO_SYS(SYS_sync);
		return;
	});
	if (!ffio_in_lib)
		(void)IN_LIB(ffio_flush_all());
	ffio_real.sync();
}

FFIO_EXPORT int syncfs(int fd)
{
	NEED(syncfs, NOSYS);
	if (!ffio_in_lib)
		(void)IN_LIB(ffio_flush_all());
	return ffio_real.syncfs(fd);
}

FFIO_EXPORT int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
	NEED(sync_file_range, NOSYS);
	struct ffio_ofd *o = managed(fd);
	if (o != NULL) {
		int rc = IN_LIB(ffio_file_flush(o->file));
		if (rc < 0)
			return (int)result(rc);
	}
	return ffio_real.sync_file_range(fd, off, n, flags);
}

/* ---- descriptors made without open ------------------------------------- */

/* A number the kernel hands out again after a close ffio did not see (a
 * raw system call) must not be taken for the old file. */
static int fresh(int fd)
{
	ffio_fd_forget(fd);
	if (fd >= 0 && unlikely(ffio_fd_get(fd) != NULL) && !ffio_in_lib && !ffio_in_vfork_child())
		IN_LIB((ffio_fd_fresh(fd), 0));
	return fd;
}

static int fresh_pair(int rc, const int fds[2])
{
	if (rc == 0) {
		fresh(fds[0]);
		fresh(fds[1]);
	}
	return rc;
}

#define FRESH(ret, name, params, args)                  \
	FFIO_EXPORT ret name params                     \
	{                                               \
		NEED(name, NOSYS);                      \
		return fresh(FFIO_FD_ROOM(ffio_real.name args, r_ < 0)); \
	}
FFIO_FRESH_FUNCS(FRESH)

FFIO_EXPORT int pipe(int fds[2])
{
	NEED(pipe, SYSCALL(SYS_pipe2, fds, 0));
	return fresh_pair(FFIO_FD_ROOM(ffio_real.pipe(fds), r_ < 0), fds);
}

FFIO_EXPORT int pipe2(int fds[2], int flags)
{
	NEED(pipe2, SYSCALL(SYS_pipe2, fds, flags));
	return fresh_pair(FFIO_FD_ROOM(ffio_real.pipe2(fds, flags), r_ < 0), fds);
}

FFIO_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	NEED(socketpair, NOSYS);
	return fresh_pair(FFIO_FD_ROOM(ffio_real.socketpair(domain, type, protocol, fds), r_ < 0), fds);
}

FFIO_EXPORT extern __typeof__(fopen) fopen64 __attribute__((alias("fopen")));
FFIO_EXPORT extern __typeof__(freopen) freopen64 __attribute__((alias("freopen")));
