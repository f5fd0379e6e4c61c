/* libffio/coherence.c -- what other processes see of cached writes.
 *
 * The kernel shows a write to every process as soon as it returns.  A
 * write-behind cache cannot, so ffio makes the writes reach the kernel
 * before the process can tell another one that they were made:
 *
 *  - Messages.  Before data leaves the process through a pipe, a socket,
 *    a FIFO or a terminal (write, writev, send*, fflush of such a stream,
 *    sendfile and splice into one), before a signal to another process
 *    (kill, killpg, sigqueue), before a post of a semaphore other
 *    processes may hold, and before a name is made, moved or removed
 *    in a directory (open with O_CREAT, fopen to write, rename, link,
 *    symlink, mkdir, unlink, rmdir), every file's writes go to the kernel.  A
 *    worker that writes its output and then says "done" to its parent
 *    leaves the output where the parent reads it.  A flag set by each
 *    write into a stack makes this one load when nothing is unwritten.
 *    Not in a signal handler (handlers.c): a flush there could wait for
 *    a lock the interrupted code holds.
 *
 *  - Messages heard.  The other way round: the kernel shows every read
 *    what other processes wrote up to that moment, while a cache keeps
 *    serving the bytes it read before.  After the process hears from
 *    another one (data read from a pipe, a socket, a FIFO or a terminal,
 *    a child waited for, a signal or a shared semaphore waited for, a
 *    read of a signalfd, inotify or fanotify descriptor, a sleep of 1 ms
 *    or more ended, or a shorter one, or a timerfd's expiry, a
 *    millisecond after the last), every file
 *    writes back and drops its clean data, as after taking a lock
 *    (posix.c), so that its next reads see what the other process wrote
 *    before it spoke.  A second open of a file drops its clean data too
 *    (file.c).  Only while a file is open, and not in a signal handler.
 *
 *  - Shared memory guarded by record locks.  Stores into a shared mapping
 *    are not calls ffio sees.  While the process has a file mapped shared
 *    and writable on which it has taken a record lock (SQLite's -shm in
 *    WAL mode: it publishes the frames of its -wal in that mapping before
 *    it releases its write lock), every write goes through to the kernel
 *    before it returns.  Such mappings are few; plain shared memory
 *    (an MPI library's, without record locks) changes nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

int ffio_unwritten_any;
int ffio_learnt;
int ffio_write_through_shared;

/* ---- messages ----------------------------------------------------------- */

/* Every file's writes (but except's) to the kernel.  Errors are the
 * files' own, deferred to their next call (the first is returned too);
 * errno is kept. */
static int write_back_all(const struct ffio_file *except)
{
	int saved = errno;
	int err = IN_LIB(ffio_files_order(0, except));
	errno = saved;
	return err;
}

/* The same, when some write entered a stack since the last time. */
static int release_but(const struct ffio_file *except)
{
	if (!__atomic_exchange_n(&ffio_unwritten_any, 0, __ATOMIC_ACQ_REL))
		return 0;
	int err = write_back_all(except);
	if (except != NULL) /* it may hold writes still */
		__atomic_store_n(&ffio_unwritten_any, 1, __ATOMIC_RELAXED);
	return err;
}

/* Not inside ffio, nor in a signal handler (handlers.c), nor before the
 * C library's functions are known. */
static int may_order(void)
{
	return !ffio_in_lib && !ffio_in_handler && ffio_real_ready() && ffio_real.fstat;
}

static int release(void)
{
	return release_but(NULL);
}

/* A descriptor through which data reaches another process or a person:
 * not a regular file, a directory or a block device, nor one of the
 * kernel's memory devices (/dev/null, /dev/zero, /dev/full, /dev/urandom,
 * major 1) but /dev/kmsg. */
static int channel_of(const struct stat *st)
{
	if (S_ISCHR(st->st_mode))
		return major(st->st_rdev) != 1 || minor(st->st_rdev) == 11;
	return S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode);
}

static int is_channel(int fd)
{
	struct stat st;
	if (ffio_kernel_stat(fd, &st) < 0)
		return -1;
	return channel_of(&st);
}

void ffio_tell(int fd)
{
	if (!may_order())
		return;
	int saved = errno;
	if (fd == -1 || is_channel(fd) > 0)
		(void)release();
	errno = saved;
}

FFIO_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	NEED(send, NOSYS);
	ffio_tell_any();
	return ffio_real.send(fd, buf, n, flags);
}

FFIO_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG to,
			   socklen_t tolen)
{
	NEED(sendto, NOSYS);
	ffio_tell_any();
	return ffio_real.sendto(fd, buf, n, flags, to, tolen);
}

FFIO_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	NEED(sendmsg, NOSYS);
	ffio_tell_any();
	return ffio_real.sendmsg(fd, msg, flags);
}

FFIO_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned n, int flags)
{
	NEED(sendmmsg, NOSYS);
	ffio_tell_any();
	return ffio_real.sendmmsg(fd, vec, n, flags);
}

/* A semaphore other processes may hold (sem_open's, or sem_init's with
 * pshared; Python's multiprocessing locks): posting it tells, a wait that
 * takes it hears.  glibc keeps, after the count, the flag it gives the
 * semaphore's futex calls: 0 for sem_init's pshared 0 (a private futex),
 * FUTEX_PRIVATE_FLAG's value (128) for a shared one. */
#define SEM_FLAG_AT sizeof(uint64_t)
_Static_assert(sizeof(sem_t) >= SEM_FLAG_AT + sizeof(int), "sem_t holds a count and a flag");
static int sem_shared(sem_t *s)
{
	int flag;
	memcpy(&flag, (const char *)s + SEM_FLAG_AT, sizeof flag);
	return flag != 0;
}

FFIO_EXPORT int sem_post(sem_t *s)
{
	NEED(sem_post, NOSYS);
	if (ffio_unwritten_pending() && sem_shared(s))
		ffio_tell(-1);
	return ffio_real.sem_post(s);
}

/* A signal to another process; signal 0 only asks whether it exists. */
FFIO_EXPORT int kill(pid_t pid, int sig)
{
	NEED(kill, SYSCALL(SYS_kill, pid, sig));
	if (sig != 0 && ffio_unwritten_pending() && pid != getpid())
		ffio_tell(-1);
	return ffio_real.kill(pid, sig);
}

FFIO_EXPORT int killpg(pid_t group, int sig)
{
	NEED(killpg, NOSYS);
	if (sig != 0)
		ffio_tell_any();
	return ffio_real.killpg(group, sig);
}

FFIO_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	NEED(sigqueue, NOSYS);
	if (sig != 0 && ffio_unwritten_pending() && pid != getpid())
		ffio_tell(-1);
	return ffio_real.sigqueue(pid, sig, value);
}

/* A name made, moved or removed in a directory: another process may take
 * it for a sign (a file renamed into place, a marker made, a lock file
 * removed) and read what was written before. */
#define NAMES(X)                                                                              \
	X(rename, (const char *from, const char *to), (from, to))                              \
	X(renameat, (int fromdir, const char *from, int todir, const char *to),                \
	  (fromdir, from, todir, to))                                                          \
	X(renameat2, (int fromdir, const char *from, int todir, const char *to, unsigned flags), \
	  (fromdir, from, todir, to, flags))                                                   \
	X(link, (const char *from, const char *to), (from, to))                                \
	X(linkat, (int fromdir, const char *from, int todir, const char *to, int flags),       \
	  (fromdir, from, todir, to, flags))                                                   \
	X(symlink, (const char *target, const char *name), (target, name))                     \
	X(symlinkat, (const char *target, int dir, const char *name), (target, dir, name))     \
	X(mkdir, (const char *name, mode_t mode), (name, mode))                                \
	X(mkdirat, (int dir, const char *name, mode_t mode), (dir, name, mode))                \
	X(rmdir, (const char *name), (name))
#define NAME_CALL(name, params, args)       \
	FFIO_EXPORT int name params         \
	{                                   \
		NEED(name, NOSYS);          \
		ffio_tell_any();            \
		return ffio_real.name args; \
	}
NAMES(NAME_CALL)

/* A name removed: every other file's writes to the kernel.  The file that
 * loses the name keeps its own (a file deleted while open, whose buffered
 * data nc_abort drops: netcdf_glue). */
static void tell_removing(int dir, const char *name, int flags)
{
	struct stat st;
	if (!ffio_unwritten_pending() || !may_order())
		return;
	int saved = errno;
	struct ffio_file *f = name && !(flags & AT_REMOVEDIR) &&
					      ffio_kernel_stat_at(dir, name, AT_SYMLINK_NOFOLLOW, &st) == 0
				      ? file_of_stat(&st)
				      : NULL;
	errno = saved;
	release_but(f);
	if (f)
		ffio_file_put(f);
}

FFIO_EXPORT int unlink(const char *name)
{
	NEED(unlink, NOSYS);
	tell_removing(AT_FDCWD, name, 0);
	return ffio_real.unlink(name);
}

FFIO_EXPORT int unlinkat(int dir, const char *name, int flags)
{
	NEED(unlinkat, NOSYS);
	tell_removing(dir, name, flags);
	return ffio_real.unlinkat(dir, name, flags);
}

/* A stream's buffer reaches its descriptor inside the C library, where
 * ffio does not see the write: fflush is where a program sends it.
 * _IO_fflush is the C library's own name for it. */
int _IO_fflush(FILE *stream);

FFIO_EXPORT int fflush(FILE *stream)
{
	NEED(fflush, return _IO_fflush(stream));
	if (ffio_unwritten_pending())
		ffio_tell(stream ? fileno(stream) : -1);
	return ffio_real.fflush(stream);
}

/* ---- messages heard ------------------------------------------------------ */

static uint64_t heard_ns; /* when the process last heard something */

/* Every file writes back and forgets its clean data and sizes: what it
 * reads next comes from the kernel.  Errors are the files' own, deferred
 * to their next call; errno is kept. */
static int hear_all(void)
{
	if (!ffio_any_open() || !may_order())
		return 0;
	int saved = errno;
	__atomic_store_n(&heard_ns, ffio_now_ns(), __ATOMIC_RELAXED);
	/* Nothing learnt since the last time: nothing to undo; sizes alone:
	 * forget them, no write-back (ffio-internal.h).  What other threads
	 * learn while the flags are clear sets them again. */
	int learnt = __atomic_exchange_n(&ffio_learnt, 0, __ATOMIC_ACQ_REL);
	if (!learnt) {
		errno = saved;
		return 0;
	}
	ffio_thread.hearing = 1;
	int err = IN_LIB(ffio_files_order(learnt & FFIO_LEARNT_DATA ? 1 : FFIO_ORDER_FORGET, NULL));
	ffio_thread.hearing = 0;
	if (err < 0) /* a file may keep what it could not write */
		__atomic_fetch_or(&ffio_learnt, learnt, __ATOMIC_RELAXED);
	errno = saved;
	return err;
}

void ffio_heard_any(void)
{
	(void)hear_all();
}

/* The end of a sleep of asked_ns: heard when it asked for 1 ms or more,
 * or when the process heard nothing in the last millisecond.  A program
 * that polls a file between sleeps sees it change (within a millisecond
 * of its sleeps); one that sleeps a few microseconds between polls of
 * something else (an MPI request) drops its caches once a millisecond,
 * not at every lap. */
#define SLEEP_HEARD_NS 1000000u
static void slept(uint64_t asked_ns)
{
	if (!ffio_any_open())
		return;
	if (asked_ns >= SLEEP_HEARD_NS ||
	    ffio_now_ns() - __atomic_load_n(&heard_ns, __ATOMIC_RELAXED) >= SLEEP_HEARD_NS)
		ffio_heard_any();
}

static uint64_t ns_of(const struct timespec *t)
{
	return t && t->tv_sec >= 0 && t->tv_nsec >= 0 ? (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec
						      : 0;
}

/* Descriptors whose reads were found to bring no message (a regular file,
 * a memory device): asked once, until the number is closed or made again.
 * Each entry counts the forgets (ffio_fd_forget) in its upper bits; its
 * low bit, "not a channel", is set only if no forget came between the
 * fstat and the setting. */
#define VERDICTS 4096
static uint32_t verdict[VERDICTS];

void ffio_fd_forget(int fd)
{
	if ((unsigned)fd >= VERDICTS)
		return;
	uint32_t v = __atomic_load_n(&verdict[fd], __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&verdict[fd], &v, (v | 1) + 1, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED))
		;
}

void ffio_fd_forget_range(unsigned lo, unsigned hi)
{
	for (unsigned fd = lo; fd <= hi && fd < VERDICTS; fd++)
		ffio_fd_forget((int)fd);
}

/* What a read of fd brings: a message (READ_HEARD: a channel; a signalfd
 * descriptor, a signal waited for; an inotify or fanotify descriptor, the
 * news that a file changed), the passing of time (READ_TIMER: a timerfd
 * descriptor, heard as a sleep too short to count by itself), or
 * nothing from another process (READ_NOTHING: files, memory devices, an
 * eventfd, an epoll or io_uring descriptor).  Descriptors without a file
 * type are the kernel's anonymous inodes, told apart by their name in
 * /proc. */
enum { READ_ERROR = -1, READ_NOTHING, READ_HEARD, READ_TIMER };
static int read_kind(int fd)
{
	static const struct {
		const char *name;
		int kind;
	} anon[] = {
		{"anon_inode:[signalfd]", READ_HEARD},
		{"anon_inode:inotify", READ_HEARD},
		{"anon_inode:[fanotify]", READ_HEARD},
		{"anon_inode:[timerfd]", READ_TIMER},
	};
	struct stat st;
	char name[64];
	if (ffio_kernel_stat(fd, &st) < 0)
		return READ_ERROR;
	if ((st.st_mode & S_IFMT) != 0)
		return channel_of(&st) ? READ_HEARD : READ_NOTHING;
	if (ffio_fd_link(fd, name, sizeof name) < 0)
		return READ_ERROR;
	for (size_t i = 0; i < sizeof anon / sizeof anon[0]; i++)
		if (strcmp(name, anon[i].name) == 0)
			return anon[i].kind;
	return READ_NOTHING;
}

void ffio_heard(int fd)
{
	if (!ffio_any_open() || !may_order())
		return;
	uint32_t v = (unsigned)fd < VERDICTS ? __atomic_load_n(&verdict[fd], __ATOMIC_ACQUIRE) : 0;
	if (v & 1)
		return;
	int saved = errno, kind = read_kind(fd);
	errno = saved;
	if (kind == READ_HEARD)
		ffio_heard_any();
	else if (kind == READ_TIMER)
		slept(0);
	else if (kind == READ_NOTHING && (unsigned)fd < VERDICTS)
		(void)__atomic_compare_exchange_n(&verdict[fd], &v, v | 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* X(ret, name, params, args, fallback, heard): the call, then
 * ffio_heard_any when heard (an expression of its result r_) says
 * something came. */
#define HEARD(X)                                                                                        \
	X(ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags),                 \
	  SYSCALL(SYS_recvfrom, fd, buf, n, flags, NULL, NULL), r_ >= 0)                                \
	X(ssize_t, recvfrom, (int fd, void *buf, size_t n, int flags, __SOCKADDR_ARG from, socklen_t *len), \
	  (fd, buf, n, flags, from, len), SYSCALL(SYS_recvfrom, fd, buf, n, flags, from.__sockaddr__, len), r_ >= 0) \
	X(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags),                  \
	  SYSCALL(SYS_recvmsg, fd, msg, flags), r_ >= 0)                                                \
	X(int, recvmmsg, (int fd, struct mmsghdr *vec, unsigned n, int flags, struct timespec *limit),  \
	  (fd, vec, n, flags, limit), SYSCALL(SYS_recvmmsg, fd, vec, n, flags, limit), r_ >= 0)         \
	X(pid_t, wait, (int *status), (status), SYSCALL(SYS_wait4, -1, status, 0, NULL), r_ > 0)        \
	X(pid_t, waitpid, (pid_t pid, int *status, int options), (pid, status, options),                \
	  SYSCALL(SYS_wait4, pid, status, options, NULL), r_ > 0)                                       \
	X(pid_t, wait4, (pid_t pid, int *status, int options, struct rusage *use),                      \
	  (pid, status, options, use), SYSCALL(SYS_wait4, pid, status, options, use), r_ > 0)           \
	X(int, waitid, (idtype_t type, id_t id, siginfo_t *info, int options), (type, id, info, options), \
	  SYSCALL(SYS_waitid, type, id, info, options, NULL), r_ == 0)                                  \
	X(int, sigwaitinfo, (const sigset_t *set, siginfo_t *info), (set, info), NOSYS, r_ > 0)         \
	X(int, sigtimedwait, (const sigset_t *set, siginfo_t *info, const struct timespec *limit),      \
	  (set, info, limit), NOSYS, r_ > 0)                                                            \
	X(int, sigsuspend, (const sigset_t *mask), (mask), NOSYS, 1)                                    \
	X(int, pause, (void), (), NOSYS, 1)                                                             \
	X(int, sem_wait, (sem_t *s), (s), NOSYS, r_ == 0 && sem_shared(s))                              \
	X(int, sem_trywait, (sem_t *s), (s), NOSYS, r_ == 0 && sem_shared(s))                           \
	X(int, sem_timedwait, (sem_t *s, const struct timespec *limit), (s, limit), NOSYS,              \
	  r_ == 0 && sem_shared(s))                                                                     \
	X(int, sem_clockwait, (sem_t *s, clockid_t clock, const struct timespec *limit), (s, clock, limit), \
	  NOSYS, r_ == 0 && sem_shared(s))

#define HEARD_CALL(ret, name, params, args, fallback, heard) \
	FFIO_EXPORT ret name params                          \
	{                                                    \
		NEED(name, fallback);                        \
		ret r_ = ffio_real.name args;                \
		if (heard)                                   \
			ffio_heard_any();                    \
		return r_;                                   \
	}
HEARD(HEARD_CALL)

/* pclose closes the stream's descriptor inside the C library. */
FFIO_EXPORT int pclose(FILE *stream)
{
	NEED(pclose, NOSYS);
	if (stream != NULL)
		ffio_fd_forget(fileno(stream));
	int status = ffio_real.pclose(stream);
	ffio_heard_any();
	return status;
}

/* It returns an error number. */
FFIO_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	NEED(sigwait, return ENOSYS);
	int err = ffio_real.sigwait(set, sig);
	if (err == 0)
		ffio_heard_any();
	return err;
}

FFIO_EXPORT int nanosleep(const struct timespec *t, struct timespec *rest)
{
	NEED(nanosleep, SYSCALL(SYS_nanosleep, t, rest));
	int rc = ffio_real.nanosleep(t, rest);
	slept(ns_of(t));
	return rc;
}

/* To an absolute deadline: heard when the process heard nothing in the
 * last millisecond (a sleep that long always is, in one thread). */
FFIO_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *t, struct timespec *rest)
{
	NEED(clock_nanosleep, return ENOSYS);
	int err = ffio_real.clock_nanosleep(clock, flags, t, rest);
	slept(flags & TIMER_ABSTIME ? 0 : ns_of(t));
	return err;
}

FFIO_EXPORT unsigned sleep(unsigned seconds)
{
	struct timespec t = {(time_t)seconds, 0};
	NEED(sleep, return FFIO_SYS(SYS_nanosleep, &t, &t) == 0 ? 0 : (unsigned)t.tv_sec);
	unsigned rest = ffio_real.sleep(seconds);
	slept(ns_of(&t));
	return rest;
}

FFIO_EXPORT int usleep(useconds_t us)
{
	struct timespec t = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
	NEED(usleep, SYSCALL(SYS_nanosleep, &t, NULL));
	int rc = ffio_real.usleep(us);
	slept(ns_of(&t));
	return rc;
}

/* ---- messages the program's libraries know of (ffio_ext.h) ---------------- */

/* A library whose messages make no system call (MPI over shared memory:
 * adio_glue) says when one leaves and when one came. */
int ffio_order_tell(void)
{
	if (!ffio_unwritten_pending() || !may_order())
		return 0;
	return release();
}

int ffio_order_heard(void)
{
	return hear_all();
}

/* ---- shared mappings of record-locked files ------------------------------ */

#define MAPS_MAX 64
static struct shared_map {
	uintptr_t start, end;
	dev_t dev;
	ino_t ino;
	int locked; /* the process took a record lock on the file */
} maps[MAPS_MAX];
static int nmaps;
/* Files locked lately, for a mapping made after the lock. */
#define LOCKED_MAX 16
static struct {
	dev_t dev;
	ino_t ino;
} locked_files[LOCKED_MAX];
static unsigned nlocked;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void maps_fork_safe(void)
{
	ffio_atfork_hold(&maps_lock, FFIO_LOCK_SHARED_MAPS);
}

static int locked_lately(dev_t dev, ino_t ino)
{
	for (unsigned i = 0; i < nlocked && i < LOCKED_MAX; i++)
		if (locked_files[i].dev == dev && locked_files[i].ino == ino)
			return 1;
	return 0;
}

/* The count of locked mappings grew from none: writes dirtied before now
 * go to the kernel, and every later write takes the path that writes
 * through (a write hit goes only into data dirtied since the last flush). */
static void start_writing_through(ino_t ino)
{
	if (__atomic_fetch_add(&ffio_write_through_shared, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (ffio_open_diags)
		ffio_log("writes go through to the kernel while inode %lu, locked, is mapped shared",
			 (unsigned long)ino);
	if (!ffio_in_lib)
		write_back_all(NULL);
}

void ffio_shared_map_add(int fd, void *addr, size_t len, int locked)
{
	struct stat st;
	int saved = errno, rc = ffio_kernel_stat(fd, &st);
	errno = saved;
	if (rc < 0 || !S_ISREG(st.st_mode))
		return;
	pthread_mutex_lock(&maps_lock);
	locked = locked || locked_lately(st.st_dev, st.st_ino);
	if (nmaps < MAPS_MAX) {
		maps[nmaps++] = (struct shared_map){(uintptr_t)addr, (uintptr_t)addr + len, st.st_dev, st.st_ino,
						    locked};
	} else if (!locked) {
		pthread_mutex_unlock(&maps_lock);
		return; /* too many to follow: an unlocked one changes nothing */
	} /* else counted for good: its unmapping cannot be followed */
	pthread_mutex_unlock(&maps_lock);
	if (locked)
		start_writing_through(st.st_ino);
}

void *ffio_map_file(void *addr, size_t len, int prot, int flags, int fd, off_t off, int kernel)
{
	int file = !(flags & MAP_ANONYMOUS) && !ffio_in_lib;
	struct ffio_file *f = file ? ffio_fd_file(fd) : NULL;
	if (unlikely(f != NULL)) {
		int rc = IN_LIB(ffio_file_pass_through(f, 1));
		if (rc < 0) {
			errno = -rc;
			return MAP_FAILED;
		}
	}
	void *p = kernel ? (void *)FFIO_SYS(SYS_mmap, addr, len, prot, flags, fd, off)
			 : ffio_real.mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && file && (flags & MAP_SHARED) && (prot & PROT_WRITE))
		ffio_shared_map_add(fd, p, len, f && __atomic_load_n(&f->posix_locked, __ATOMIC_RELAXED));
	return p;
}

void ffio_shared_map_locked(int fd)
{
	struct stat st;
	int started = 0, saved = errno, rc = ffio_kernel_stat(fd, &st);
	errno = saved;
	if (rc < 0 || !S_ISREG(st.st_mode))
		return;
	pthread_mutex_lock(&maps_lock);
	if (!locked_lately(st.st_dev, st.st_ino)) {
		locked_files[nlocked % LOCKED_MAX].dev = st.st_dev;
		locked_files[nlocked % LOCKED_MAX].ino = st.st_ino;
		nlocked++;
	}
	for (int i = 0; i < nmaps; i++)
		if (!maps[i].locked && maps[i].dev == st.st_dev && maps[i].ino == st.st_ino) {
			maps[i].locked = 1;
			started++;
		}
	pthread_mutex_unlock(&maps_lock);
	while (started-- > 0)
		start_writing_through(st.st_ino);
}

/* Mappings wholly inside [addr, addr + len) are gone. */
static void unmapped(void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	int gone = 0;
	pthread_mutex_lock(&maps_lock);
	for (int i = 0; i < nmaps;) {
		if (maps[i].start >= lo && maps[i].end <= hi) {
			gone += maps[i].locked;
			maps[i] = maps[--nmaps];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&maps_lock);
	if (gone)
		__atomic_fetch_sub(&ffio_write_through_shared, gone, __ATOMIC_ACQ_REL);
}

FFIO_EXPORT int munmap(void *addr, size_t len)
{
	NEED(munmap, SYSCALL(SYS_munmap, addr, len));
	int rc = ffio_real.munmap(addr, len);
	if (rc == 0 && __atomic_load_n(&nmaps, __ATOMIC_RELAXED) > 0)
		unmapped(addr, len);
	return rc;
}

/* A mapping moved whole follows; one shrunk or grown in place keeps its
 * start.  (A mapping moved by MREMAP_DONTUNMAP keeps the old one too: it
 * stays counted, which only writes through for longer.) */
FFIO_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	NEED(mremap, return (void *)FFIO_SYS(SYS_mremap, old, old_len, new_len, flags, want));
	void *p = ffio_real.mremap(old, old_len, new_len, flags, want);
	if (p == MAP_FAILED || __atomic_load_n(&nmaps, __ATOMIC_RELAXED) == 0 || (flags & MREMAP_DONTUNMAP))
		return p;
	pthread_mutex_lock(&maps_lock);
	for (int i = 0; i < nmaps; i++)
		if (maps[i].start == (uintptr_t)old) {
			maps[i].start = (uintptr_t)p;
			maps[i].end = (uintptr_t)p + new_len;
		}
	pthread_mutex_unlock(&maps_lock);
	return p;
}
