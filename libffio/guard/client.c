/* libffio/guard/client.c -- the guardian process from the library's side:
 * starting it (once per process, again in a forked child), handing it the
 * guarded memory and the files the cache writes, and noticing that it is
 * gone.  The guardian itself is guardian/ffio-guardian.c; the two share
 * only proto.h.
 *
 * Starting it is invisible to the program.  clone(CLONE_VM | CLONE_VFORK)
 * with no exit signal makes a child that sends no SIGCHLD and that only a
 * wait with __WCLONE or __WALL can see -- as long as it does not exec: an
 * exec makes any process an ordinary child, whose end sends SIGCHLD.  So
 * that child, on a stack of its own with every signal blocked, only makes
 * the guardian (CLONE_VM, on a second stack), notes its pid, and exits; we
 * reap it at once.  We do not wait for the guardian's exec (2 ms on the
 * development machine, a third of what guarding cost a new process): it
 * runs beside us on our memory until then, making system calls that leave
 * errno alone (FFIO_KERNEL), reading only what spawn left for it in static
 * memory that nothing reuses (one start per process; a forked child has a
 * copy of its own).  An exec that fails then shows as a guardian that
 * ended.  Where FFIO_KERNEL is not written out, the exec is waited for
 * (CLONE_VFORK) and its error known at once.
 * The guardian, orphaned, belongs to init (or the nearest subreaper), not
 * to us.  It makes two system calls: it lets its end of the socket survive
 * exec, then execs ffio-guardian with an empty environment (no LD_PRELOAD,
 * no FF_IO_*).  No fork handlers run, no page of the program is copied.
 * HELLO then hands it the two memfds and the log's descriptor.  The
 * guardian, once in a session of its own with the signals of a job's end
 * ignored, says READY (the only message it sends): ffio_guardian_pid waits
 * for that, ffio_guardian_start does not.
 *
 * OPEN and CLOSE are one sendmsg each, no round trip: a message and its
 * descriptor, once queued, reach the guardian even if we die just after.
 * A send that fails means the guardian is gone (or does not take messages
 * for SEND_WAIT_MS): said once, and nothing more is guarded.
 *
 * The binary: $FFIO_GUARDIAN if set; else ../guardian/ffio-guardian from
 * the directory of the object this code is in (the build tree, where
 * tests run uninstalled: .libs/libffio.so or a test program in t/); else
 * the installed $(pkglibexecdir)/ffio-guardian.  The build tree comes
 * first so that tests never take an older installed guardian.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "guard.h"

#ifndef FFIO_GUARDIAN_PATH
#define FFIO_GUARDIAN_PATH "/usr/local/libexec/ffio/ffio-guardian"
#endif
#define SEND_WAIT_MS 5000  /* how long a full socket may hold a message back */
#define READY_WAIT_MS 10000 /* how long the guardian may take to say READY */

static pthread_mutex_t guardian_lock = PTHREAD_MUTEX_INITIALIZER;
static int sock = -1;          /* our end of the guardian's socket; -1: none */
static pid_t guardian;         /* its pid */
static int ready;              /* it said READY */
static int started;            /* this process tried to start it */
static int running;            /* as far as we know */
static int said_none, said_gone;

/* ---- fork ------------------------------------------------------------------ */

/* The child is not guarded by its parent's guardian: it closes the socket
 * (so that the parent's death alone ends it) and starts one of its own
 * with its first guarded file. */
static void guardian_fork_child(void)
{
	if (sock >= 0) {
		ffio_fd_disown(sock);
		(void)ffio_real.close(sock);
	}
	sock = -1;
	guardian = 0;
	ready = 0;
	started = 0;
	__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
	said_none = said_gone = 0;
}

/* The lock is held across fork: a fork while the socket is being made
 * cannot leave the child with an end it does not know of. */
__attribute__((constructor)) static void guardian_fork_safe(void)
{
	ffio_atfork_hold(&guardian_lock, FFIO_LOCK_GUARDIAN);
	ffio_atfork(NULL, NULL, guardian_fork_child);
}

/* ---- finding the binary ---------------------------------------------------- */

/* The path of the object mapped at base, from /proc/self/maps (dladdr
 * gives a relative name for a program or a library preloaded by one). */
static int mapped_path(const void *base, char *path, size_t size)
{
	char buf[8192];
	size_t have = 0;
	int fd = ffio_real.open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int err = -ENOENT;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = ffio_real.read(fd, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			char *slash = strchr(line, '/');
			if ((void *)(uintptr_t)strtoull(line, NULL, 16) == base && slash) {
				if (strlen(slash) < size) {
					strcpy(path, slash);
					err = 0;
				}
				goto out;
			}
			line = nl + 1;
		}
		have = strlen(line);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than buf: not ours to name */
		memmove(buf, line, have);
	}
out:
	(void)ffio_real.close(fd);
	return err;
}

/* ../guardian/ffio-guardian from the directory of this object. */
static int beside_us(char *path, size_t size)
{
	Dl_info info;
	static char self[PATH_MAX]; /* (guardian_lock held: not on a small stack) */
	const char *name;

	if (!dladdr((void *)ffio_guardian_start, &info) || !info.dli_fname)
		return -ENOENT;
	name = info.dli_fname;
	if (name[0] != '/') {
		if (mapped_path(info.dli_fbase, self, sizeof self) < 0)
			return -ENOENT;
		name = self;
	}
	const char *slash = strrchr(name, '/');
	int n = snprintf(path, size, "%.*s/../guardian/ffio-guardian", (int)(slash - name), name);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return access(path, X_OK) == 0 ? 0 : -errno;
}

/* The guardian's path into path: 0, or -errno with the last one tried. */
static int find_guardian(char *path, size_t size)
{
	const char *env = secure_getenv("FFIO_GUARDIAN");

	if (env && *env) {
		if (strlen(env) >= size)
			return -ENAMETOOLONG;
		strcpy(path, env);
		return 0;
	}
	if (beside_us(path, size) == 0)
		return 0;
	snprintf(path, size, "%s", FFIO_GUARDIAN_PATH);
	return access(path, X_OK) == 0 ? 0 : -errno;
}

/* ---- starting it ----------------------------------------------------------- */

struct spawn {
	const char *path;
	char *const *argv;
	int fd;                /* the guardian's end of the socket */
	int err;               /* why it could not be started */
	pid_t pid;             /* the guardian */
};

static char *const no_env[] = {NULL};
/* The stacks of the two children, and what the guardian reads before its
 * exec: one start per process (guardian_lock; see above). */
static char spawn_stacks[2][8192] __attribute__((aligned(64)));
static struct spawn spawn_arg;
static char spawn_pid_arg[24], spawn_fd_arg[24];
static char *spawn_argv[4];

#ifdef FFIO_HAVE_KERNEL_CALL
#define GUARDIAN_WAITS 0 /* its exec is not waited for */
#define GUARDIAN_CALL(...) FFIO_KERNEL(__VA_ARGS__)
#define GUARDIAN_ERR(r) ((int)-(r))
#else
#define GUARDIAN_WAITS CLONE_VFORK
#define GUARDIAN_CALL(...) FFIO_SYS(__VA_ARGS__)
#define GUARDIAN_ERR(r) errno
#endif

/* (read at load: the program may change LD_PRELOAD before its first open) */
static int under_valgrind;

__attribute__((constructor)) static void valgrind_seen(void)
{
	const char *pre = getenv("LD_PRELOAD");
	under_valgrind = pre && strstr(pre, "/vgpreload_") != NULL;
}

int ffio_guard_under_valgrind(void)
{
	return under_valgrind;
}

/* Is the guardian's exec waited for?  Also under valgrind, which refuses
 * CLONE_VM without CLONE_VFORK.  (Inlined: the clone that asks runs
 * without AddressSanitizer, on a small stack.) */
static inline __attribute__((always_inline)) int guardian_waits(void)
{
	return GUARDIAN_WAITS | (under_valgrind ? CLONE_VFORK : 0);
}

/* The guardian, sharing our memory until it execs: system calls only,
 * nothing of the C library's state, errno untouched (GUARDIAN_CALL). */
__attribute__((no_sanitize_address)) static int spawn_guardian(void *arg)
{
	struct spawn *s = arg;
	long r = GUARDIAN_CALL(SYS_execve, s->path, s->argv, no_env);

	s->err = GUARDIAN_ERR(r);
	GUARDIAN_CALL(SYS_exit, 127);
	return 127;
}

/* Its parent, our child, which never execs: back once the guardian is
 * made (and, with GUARDIAN_WAITS, has exec'd or failed to). */
__attribute__((no_sanitize_address)) static int spawn_middle(void *arg)
{
	struct spawn *s = arg;
	pid_t pid = -1;

	/* Nothing of the program's past the guardian's exec: its table is a
	 * copy of this one, which is ours to close (not left close-on-exec,
	 * and not closed by the guardian: we go on before it runs, and a
	 * descriptor open for writing held there even briefly keeps its file
	 * from being executed, ETXTBSY; a script written, closed and run at
	 * once, 1 run in 40). */
	unsigned keep = (unsigned)s->fd;
	if (keep > 3)
		(void)FFIO_SYS(SYS_close_range, 3, keep - 1, 0);
	(void)FFIO_SYS(SYS_close_range, keep >= 3 ? keep + 1 : 3, ~0U, 0);
	if (FFIO_SYS(SYS_fcntl, s->fd, F_SETFD, 0) == 0)
		pid = clone(spawn_guardian, spawn_stacks[1] + sizeof spawn_stacks[1], CLONE_VM | guardian_waits(), s);
	if (pid < 0)
		s->err = errno;
	else if (guardian_waits() == 0 || !s->err)
		s->pid = pid;
	FFIO_SYS(SYS_exit, 0);
	return 0;
}

/* Our child, which has ended: reaped (a wait with __WCLONE, the only kind
 * that sees it).  ECHILD: the program reaped it with __WALL. */
static void reap(pid_t pid)
{
	pid_t r;

	do
		r = ffio_real.waitpid(pid, NULL, __WCLONE);
	while (r < 0 && errno == EINTR);
}

int ffio_guard_run_child(int (*fn)(void *), char *stack, size_t size, int flags, void *arg)
{
	sigset_t all, old;
	int saved = errno, err;

	sigfillset(&all);
	if ((err = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0)
		return -err;
	pid_t pid = clone(fn, stack + size, CLONE_VM | CLONE_VFORK | flags, arg);
	err = pid < 0 ? errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		reap(pid);
	errno = saved;
	return -err;
}

/* Start path with the socket's end fd: the guardian's pid in *pid. */
static int spawn(const char *path, int fd, pid_t *pid)
{
	struct spawn *s = &spawn_arg;
	int err;

	snprintf(spawn_pid_arg, sizeof spawn_pid_arg, "%d", (int)getpid());
	snprintf(spawn_fd_arg, sizeof spawn_fd_arg, "%d", fd);
	spawn_argv[0] = (char *)"ffio-guardian";
	spawn_argv[1] = spawn_pid_arg;
	spawn_argv[2] = spawn_fd_arg;
	spawn_argv[3] = NULL;
	*s = (struct spawn){.path = path, .argv = spawn_argv, .fd = fd, .err = 0, .pid = 0};
	if ((err = ffio_guard_run_child(spawn_middle, spawn_stacks[0], sizeof spawn_stacks[0], 0, s)) < 0)
		return err;
	if (s->pid == 0 && s->err) /* (the clone failed, or, waited for, the exec) */
		return -s->err;
	*pid = s->pid; /* 0: not told (valgrind makes these clones forks): READY tells */
	return 0;
}

/* The guardian's READY, once it serves, waited for READY_WAIT_MS at most
 * (guardian_lock held); its pid, if it was not known. */
static int await_ready(void)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	struct guard_msg m;
	ssize_t n;
	int r;

	if (ready)
		return 0;
	do
		r = poll(&p, 1, READY_WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return r < 0 ? -errno : -ETIMEDOUT;
	do
		n = ffio_real.recv(sock, &m, sizeof m, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof m || m.kind != GUARD_MSG_READY || m.pid <= 0 || (guardian && m.pid != guardian))
		return -EPIPE; /* it ended before it served */
	guardian = (pid_t)m.pid;
	ready = 1;
	return 0;
}

/* One message with up to three descriptors; a full socket is waited for,
 * SEND_WAIT_MS at most.  0 or -errno. */
static int send_msg(uint32_t kind, uint32_t file, const int *fds, int nfds)
{
	struct guard_msg m = {.kind = kind, .file = file, .pid = kind == GUARD_MSG_HELLO ? getpid() : 0};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} control;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
	int waited = 0;

	if (sock < 0)
		return -ENOTCONN;
	if (nfds > 0) {
		memset(&control, 0, sizeof control);
		h.msg_control = control.buf;
		h.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	for (;;) {
		ssize_t n = ffio_real.sendmsg(sock, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof m)
			return 0;
		if (n >= 0)
			return -EPROTO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if (waited >= SEND_WAIT_MS)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			return -errno;
		waited += 100;
	}
}

static void drop_socket(void)
{
	if (sock >= 0) {
		ffio_fd_disown(sock);
		(void)ffio_real.close(sock);
	}
	sock = -1;
}

static int send_hello(int meta_fd, int data_fd)
{
	int fds[3] = {meta_fd, data_fd, ffio_log_dup()};
	int err = send_msg(GUARD_MSG_HELLO, 0, fds, fds[2] >= 0 ? 3 : 2);

	if (fds[2] >= 0)
		(void)ffio_real.close(fds[2]);
	return err;
}

/* The socket's number, or -1 (ffio_fd_pressure). */
static int socket_number(void)
{
	return __atomic_load_n(&sock, __ATOMIC_RELAXED);
}

int ffio_guardian_start(int meta_fd, int data_fd)
{
	static char path[PATH_MAX]; /* (guardian_lock held: not on a small stack) */
	const char *what = "cannot start";
	int sv[2], err;

	pthread_mutex_lock(&guardian_lock);
	if (started) {
		err = __atomic_load_n(&running, __ATOMIC_RELAXED) ? 0 : -ENOTCONN;
		pthread_mutex_unlock(&guardian_lock);
		return err;
	}
	started = 1;
	if ((err = find_guardian(path, sizeof path)) < 0) {
		what = "not found";
	} else if (ffio_real.socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		err = -errno;
	} else {
		sock = ffio_fd_own(sv[0]);
		err = spawn(path, sv[1], &guardian);
		(void)ffio_real.close(sv[1]);
		if (err == 0 && guardian == 0 && (err = await_ready()) < 0)
			what = "did not start";
		if (err == 0 && (err = send_hello(meta_fd, data_fd)) < 0)
			what = "cannot be given the guarded memory";
		if (err < 0)
			drop_socket();
	}
	__atomic_store_n(&running, err == 0, __ATOMIC_RELAXED);
	if (err == 0)
		ffio_fd_on_pressure_last(socket_number, ffio_guardian_release);
	if (err < 0)
		ffio_log_once(&said_none, "no guardian: %s %s: %s: cached data is lost if the process dies",
			      path, what, strerror(-err));
	pthread_mutex_unlock(&guardian_lock);
	return err;
}

/* ---- talking to it --------------------------------------------------------- */

/* A send failed: the guardian is gone, or takes no messages; nothing more
 * is guarded.  Its end is closed when it is gone for sure (guardian_lock
 * held). */
static void lost(int err)
{
	pid_t pid = guardian;

	__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
	if (err == -EPIPE || err == -ECONNRESET || err == -ENOTCONN)
		drop_socket();
	else if (err == -EBADF) /* the number is no longer ours */
		ffio_fd_disown(sock), sock = -1;
	if (err == -EPIPE || err == -ECONNRESET)
		ffio_log_once(&said_gone, "the guardian process (pid %d) has ended: "
			      "data cached from now on is lost if this process dies", (int)pid);
	else
		ffio_log_once(&said_gone, "the guardian process (pid %d) takes no messages (%s): "
			      "data cached from now on is lost if this process dies", (int)pid, strerror(-err));
}

/* The file of descriptor fd, for the guardian: a descriptor that names it
 * and opens nothing (O_PATH), which the guardian opens for writing only
 * when the process has ended.  A description open for writing held
 * meanwhile would keep the file from being executed (ETXTBSY): a script
 * written, closed and run at once (Python's test_subprocess).  -EACCES: the
 * file could not be opened for writing again (its mode forbids it). */
static int path_of(int fd)
{
	char link[64];
	int p;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	long r = FFIO_SYS(SYS_faccessat2, AT_FDCWD, link, W_OK, AT_EACCESS);
	if (r < 0 && errno == ENOSYS)
		r = FFIO_SYS(SYS_faccessat, AT_FDCWD, link, W_OK);
	if (r < 0)
		return -errno;
	if ((p = ffio_real.open(link, O_PATH | O_CLOEXEC)) < 0)
		return -errno;
	return p;
}

int ffio_guardian_open(uint32_t file, int fd)
{
	int err = -ENOTCONN, p;

	pthread_mutex_lock(&guardian_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED)) {
		if ((p = path_of(fd)) < 0) {
			err = p;
		} else {
			if ((err = send_msg(GUARD_MSG_OPEN, file, &p, 1)) < 0)
				lost(err);
			(void)ffio_real.close(p);
		}
	}
	pthread_mutex_unlock(&guardian_lock);
	return err;
}

void ffio_guardian_close(uint32_t file)
{
	int err;

	pthread_mutex_lock(&guardian_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED) && (err = send_msg(GUARD_MSG_CLOSE, file, NULL, 0)) < 0)
		lost(err);
	pthread_mutex_unlock(&guardian_lock);
}

/* The program needs a descriptor and has none left (ffio_fd_pressure):
 * the socket is given up.  The guardian, told so, writes back when this
 * process ends (its pidfd), not when the socket closes; the files guarded
 * now stay guarded, those opened from now on are not (see
 * ffio-reliability(7)).  1 when a descriptor was freed. */
int ffio_guardian_release(void)
{
	int freed = 0;

	pthread_mutex_lock(&guardian_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED) && sock >= 0 &&
	    send_msg(GUARD_MSG_GOODBYE, 0, NULL, 0) == 0) {
		drop_socket();
		__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
		freed = 1;
	}
	pthread_mutex_unlock(&guardian_lock);
	return freed; /* (said nowhere: a message could take the descriptor freed) */
}

int ffio_guardian_running(void)
{
	return __atomic_load_n(&running, __ATOMIC_RELAXED);
}

pid_t ffio_guardian_pid_internal(void)
{
	pid_t pid = 0;
	int err;

	pthread_mutex_lock(&guardian_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED)) {
		if ((err = await_ready()) < 0)
			lost(err);
		else
			pid = guardian;
	}
	pthread_mutex_unlock(&guardian_lock);
	return pid;
}

pid_t ffio_guardian_pid(void)
{
	return ffio_guardian_pid_internal();
}
