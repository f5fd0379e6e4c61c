/* t/rel_tool.c -- a plain program (not linked with libffio) that the
 * reliability scripts run preloaded, one subcommand per hazard:
 *
 *   fill PATH CHUNK MAX     write the pattern in CHUNK-byte writes until an
 *                           error or MAX bytes, then fsync and close; print
 *                           what each call returned (REL_FSIZE=BYTES:
 *                           under that RLIMIT_FSIZE, SIGXFSZ ignored)
 *   check PATH N            the file is exactly N bytes of the pattern
 *   check2 PATH N K         N bytes: the pattern shifted by K
 *   prefix PATH N           at most N bytes, each one of the pattern
 *   exit PATH N HOW         write N bytes, then leave without closing:
 *                           HOW = exit, thread (exit() from a second
 *                           thread), _exit, abort, kill (SIGKILL), term
 *                           (SIGTERM to itself, then wait for it)
 *   fork PATH N             dirty data across fork (see below)
 *   childterm PATH N        a forked child writes N bytes and sends itself
 *                           SIGTERM; the parent, alive meanwhile, waits
 *                           for it: exit 0 when it ended by SIGTERM
 *   exec PATH N HOW         write N bytes, then run "check PATH N" (without
 *                           the preload): HOW = exec, spawn, vfork
 *   daemon PATH N LOCK      daemon(3) with dirty data; the daemon writes N
 *                           more bytes and exits while holding an flock on
 *                           LOCK (the script waits for that lock)
 *
 * The pattern: byte at offset o is pat(o, k) for shift k (0 by default).
 * Exit status 0 means the subcommand's own checks passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static unsigned char pat(long long o, int k)
{
	return (unsigned char)((o * 7 + o / 251 + k * 13) & 0xff);
}

static void die(const char *what)
{
	fprintf(stderr, "rel_tool: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Write n pattern bytes (shift k) at the current position. */
static void put(int fd, long long from, long long n, int k)
{
	unsigned char buf[4096];
	long long done = 0;

	while (done < n) {
		size_t m = n - done < (long long)sizeof buf ? (size_t)(n - done) : sizeof buf;
		for (size_t i = 0; i < m; i++)
			buf[i] = pat(from + done + (long long)i, k);
		ssize_t w = write(fd, buf, m);
		if (w < 0)
			die("write");
		done += w;
	}
}

/* The file is n bytes of pattern k; with prefix, any length up to n. */
static int check(const char *path, long long n, int k, int prefix)
{
	unsigned char buf[4096];
	long long off = 0, bad = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die(path);
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (off + i >= n || buf[i] != pat(off + i, k))
				bad++;
		off += r;
	}
	if (r < 0)
		die("read");
	close(fd);
	printf("size %lld mismatches %lld\n", off, bad);
	return (off == n || (prefix && off < n)) && bad == 0 ? 0 : 1;
}

static int cmd_fill(const char *path, long chunk, long long max)
{
	unsigned char *buf = malloc((size_t)chunk);
	long long off = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), werr = 0, serr = 0, cerr = 0;
	long nw = 0;

	if (fd < 0 || !buf)
		die(path);
	signal(SIGXFSZ, SIG_IGN);
	if (getenv("REL_FSIZE")) { /* RLIMIT_FSIZE in bytes: EFBIG past it */
		struct rlimit rl = {atol(getenv("REL_FSIZE")), atol(getenv("REL_FSIZE"))};
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			die("setrlimit");
	}
	while (off < max) {
		for (long i = 0; i < chunk; i++)
			buf[i] = pat(off + i, 0);
		ssize_t w = write(fd, buf, (size_t)chunk);
		nw++;
		if (w < 0) {
			werr = errno;
			break;
		}
		off += w;
	}
	if (fsync(fd) < 0)
		serr = errno;
	if (close(fd) < 0)
		cerr = errno;
	printf("accepted %lld writes %ld write %s fsync %s close %s\n", off, nw,
	       werr ? strerrorname_np(werr) : "ok", serr ? strerrorname_np(serr) : "ok",
	       cerr ? strerrorname_np(cerr) : "ok");
	free(buf);
	return 0;
}

static void *exit_thread(void *arg)
{
	(void)arg;
	exit(0);
}

static int cmd_exit(const char *path, long long n, const char *how)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pthread_t t;

	if (fd < 0)
		die(path);
	put(fd, 0, n, 0);
	fflush(stdout);
	if (strcmp(how, "exit") == 0)
		exit(0);
	if (strcmp(how, "thread") == 0) {
		if (pthread_create(&t, NULL, exit_thread, NULL) != 0)
			die("pthread_create");
		pthread_join(t, NULL);
		return 3; /* not reached */
	}
	if (strcmp(how, "_exit") == 0)
		_exit(0);
	if (strcmp(how, "abort") == 0) {
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(how, "term") == 0 || strcmp(how, "int") == 0) {
		raise(strcmp(how, "term") == 0 ? SIGTERM : SIGINT);
		for (;;)
			pause(); /* the flusher thread ends us (or the signal did) */
	}
	fprintf(stderr, "rel_tool: unknown way out %s\n", how);
	return 2;
}

/* A child that ends by SIGTERM while its parent lives on (each with the
 * flush on signals of its own, FF_IO_FLUSH_ON_SIGNAL=1). */
static int cmd_childterm(const char *path, long long n)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(path);
		put(fd, 0, n, 0);
		raise(SIGTERM);
		for (;;)
			pause(); /* the flusher thread ends us (or the signal did) */
	}
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid");
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM) {
		fprintf(stderr, "rel_tool: the child ended with status 0x%x, not by SIGTERM\n", st);
		return 1;
	}
	return 0;
}

/* Parent: write A (shift 0) at 0, fork.  Child: wait until the parent has
 * overwritten the region with B (shift 1) and flushed it, then exit
 * normally.  Parent: wait for the child, check the file is B exactly (a
 * child that flushed the parent's A would have overwritten B).  With
 * "inflight", the parent leaves writes in flight (no flush) before fork. */
static int cmd_fork(const char *path, long long n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), p[2], status;
	char c;
	pid_t pid;

	if (fd < 0 || pipe(p) < 0)
		die(path);
	put(fd, 0, n, 0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(4);
		exit(0); /* runs ffio's exit flush in the child: nothing to write */
	}
	close(p[0]);
	if (lseek(fd, 0, SEEK_SET) != 0)
		die("lseek");
	put(fd, 0, n, 1);
	if (fsync(fd) < 0)
		die("fsync");
	if (write(p[1], "g", 1) != 1)
		die("pipe");
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 5;
	if (close(fd) < 0)
		die("close");
	return 0;
}

static int cmd_exec(const char *self, const char *path, long long n, const char *how)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), status;
	char num[32];
	pid_t pid;

	if (fd < 0)
		die(path);
	put(fd, 0, n, 0);
	snprintf(num, sizeof num, "%lld", n);
	unsetenv("LD_PRELOAD"); /* the judge reads with plain system calls */
	unsetenv("FF_IO_OPTS");
	char *argv[] = {(char *)self, "check", (char *)path, num, NULL};
	fflush(stdout);
	if (strcmp(how, "exec") == 0) {
		execve(self, argv, environ);
		die("execve");
	}
	if (strcmp(how, "spawn") == 0) {
		int e = posix_spawn(&pid, self, NULL, NULL, argv, environ);
		if (e != 0) {
			errno = e;
			die("posix_spawn");
		}
	} else {
		pid = vfork();
		if (pid == 0) {
			execve(self, argv, environ);
			_exit(127);
		}
		if (pid < 0)
			die("vfork");
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status))
		return 5;
	/* the file is still open here; close it last: nothing more to write */
	if (close(fd) < 0)
		die("close");
	return WEXITSTATUS(status);
}

static int cmd_daemon(const char *path, long long n, const char *lock)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int lk = open(lock, O_RDWR | O_CREAT, 0644);

	if (fd < 0 || lk < 0)
		die(path);
	if (flock(lk, LOCK_EX) < 0)
		die("flock");
	put(fd, 0, n, 0);
	fflush(stdout);
	if (daemon(1, 1) < 0)
		die("daemon");
	put(fd, n, n, 0);
	exit(0); /* the lock goes with the last descriptor, after ffio's flush */
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "fill") == 0)
		return cmd_fill(argv[2], atol(argv[3]), atoll(argv[4]));
	if (argc >= 4 && strcmp(argv[1], "check") == 0)
		return check(argv[2], atoll(argv[3]), 0, 0);
	if (argc >= 4 && strcmp(argv[1], "prefix") == 0)
		return check(argv[2], atoll(argv[3]), 0, 1);
	if (argc >= 5 && strcmp(argv[1], "check2") == 0)
		return check(argv[2], atoll(argv[3]), atoi(argv[4]), 0);
	if (argc >= 5 && strcmp(argv[1], "exit") == 0) {
		/* A shell without job control starts background commands with
		 * SIGINT and SIGQUIT ignored, which a process inherits: then
		 * raise(SIGINT) does nothing.  Run again with the default, so
		 * that ffio starts (its flusher decides at start-up) as the way
		 * out asked means. */
		int sig = strcmp(argv[4], "int") == 0 ? SIGINT : strcmp(argv[4], "term") == 0 ? SIGTERM : 0;
		struct sigaction sa;
		if (sig && sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) {
			signal(sig, SIG_DFL);
			execv("/proc/self/exe", argv);
			die("execv");
		}
		return cmd_exit(argv[2], atoll(argv[3]), argv[4]);
	}
	if (argc >= 4 && strcmp(argv[1], "fork") == 0)
		return cmd_fork(argv[2], atoll(argv[3]));
	if (argc >= 4 && strcmp(argv[1], "childterm") == 0)
		return cmd_childterm(argv[2], atoll(argv[3]));
	if (argc >= 5 && strcmp(argv[1], "exec") == 0)
		return cmd_exec("/proc/self/exe", argv[2], atoll(argv[3]), argv[4]);
	if (argc >= 5 && strcmp(argv[1], "daemon") == 0)
		return cmd_daemon(argv[2], atoll(argv[3]), argv[4]);
	fprintf(stderr, "usage: rel_tool fill|check|check2|exit|fork|childterm|exec|daemon ...\n");
	return 2;
}
