/* t/crash_kill.c -- bytes a write returned for outlive the writer: the
 * kernel alone keeps every one whatever kills the process, and so must a
 * stack with a write-behind cache.  This program is both sides:
 *
 *   crash_kill kill DIR HOW SEED NSEEDS [MAXN]
 *       for each seed, a writer (this program, exec'd with libffio
 *       preloaded under the stack under test) makes random calls on
 *       DIR/w.dat (t/crash_log.h) and dies after about N returned calls,
 *       N drawn from the seed (at most MAXN): HOW is a signal the harness
 *       sends once it saw N calls returned (TERM KILL ABRT SEGV HUP XCPU
 *       INT), or _exit / abort, which the writer calls itself after N
 *   crash_kill fsync DIR HOW SEED NSEEDS
 *       the writer writes (offsets below 192 KiB) and calls fsync; the
 *       signal HOW comes as soon as it said it entered the fsync
 *   crash_kill fork DIR HOW SEED NSEEDS
 *       the writer forks; its child, which never execs, opens DIR/c.dat,
 *       writes and dies (HOW: the signal the harness sends it, or _exit /
 *       abort after its own N calls) while the parent writes DIR/w.dat
 *       (opened before the fork, odd seeds: after it); the parent gets
 *       SIGKILL later.  Both files are checked
 *   crash_kill job DIR SEED NSEEDS
 *       the writer and a child it forked (each with a file) in a process
 *       group of their own get SIGTERM as a group; whoever is left after
 *       5 s gets SIGKILL
 *   crash_kill guardian DIR SEED NSEEDS
 *       the harness kills the writer's guardian (SIGKILL) in mid-run; the
 *       writer goes on, closes and exits normally: its file must be whole,
 *       and ffio's log (DIR/ffio.log) say once that the guardian ended.
 *       Exit 77 when the library has no ffio_guardian_pid
 *   crash_kill check LOG FILE [LABEL]
 *       check one log (a file, mapped: t/crash_mpi's) against FILE
 *
 * The stack comes from the environment: CRASH_SPEC (FF_IO_OPTS of the
 * writer; empty or unset: raw, nothing preloaded) and CRASH_PRELOAD (its
 * LD_PRELOAD).  The harness itself is never preloaded: it refuses to run
 * when it finds ffio in its own process.
 *
 * After a writer dies, the harness waits for its death (waitpid, pidfd),
 * then for every guardian the writer saw ffio_guardian_pid() report (found
 * with dlsym: the library need not have it) to exit (pidfd and poll;
 * CRASH_GUARDIAN_TIMEOUT seconds, default 60, else a failure), then
 * replays the calls that returned through plain system calls into
 * DIR/oracle.ref and compares it with the writer's file, size and bytes.
 * The call in flight (started, not returned) may be absent or whole, or,
 * for a write, a prefix (the kernel stops a write to a file between pages
 * when a fatal signal that dumps no core comes: SIGKILL, SIGTERM, SIGHUP,
 * SIGINT; 2000 raw runs saw such prefixes, always ending on a 4 KiB
 * boundary of the file).  A writer must have seen at least one call
 * return before it died.  The last line of output says what was checked;
 * lines before it (# ...) say what failed, with the seed.  The exit status
 * is 0 when every seed passed, 1 otherwise.  A line "cases failed bytes"
 * is appended to DIR/tally for the script's totals. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash_log.h"
#include "kill_safe.h"

/* What the exec'd writer does. */
enum { W_PLAIN, W_FORK, W_JOB };

/* The shared memory between the harness and the writer (a memfd). */
struct area {
	int32_t mode;
	int32_t open_after;  /* W_FORK: the parent opens its file after the fork */
	uint64_t fork_after; /* W_FORK: the parent forks after this many calls */
	struct cl_log log[2]; /* 0: the writer, 1: its child */
};

static const char *dir;
static int mute; /* after three failed seeds, their messages are not shown */
static int muted; /* failed seeds not shown */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (mute)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
static char path_w[4096], path_c[4096], path_oracle[4096], path_ffiolog[4096], path_tally[4096], path_out[4096];
static const char *spec, *preload;
static double guardian_timeout = 60;

/* ---- small helpers ------------------------------------------------------- */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "crash_kill: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Wait up to t seconds for the process behind pidfd to end: 0, or -1. */
static int pidfd_wait(int pfd, double t)
{
	double end = now() + t;

	for (;;) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		double left = end - now();
		int r = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
		if (r == 1)
			return 0;
		if (r == 0 || (r < 0 && errno != EINTR))
			return -1;
	}
}

/* Wait up to t seconds for pid (not necessarily a child) to end: 0, or -1
 * (still there).  A pid that is already gone counts as ended. */
static int wait_gone(pid_t pid, double t)
{
	int pfd = pidfd_open_(pid);

	if (pfd < 0)
		return errno == ESRCH ? 0 : -1;
	int r = pidfd_wait(pfd, t);
	close(pfd);
	return r;
}

static const struct {
	const char *name;
	int sig;
} sigs[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"ABRT", SIGABRT}, {"SEGV", SIGSEGV},
	    {"HUP", SIGHUP},   {"XCPU", SIGXCPU}, {"INT", SIGINT}};

/* HOW: a signal's name, or _exit / abort (-1, -2). */
static int parse_how(const char *how)
{
	if (!strcmp(how, "_exit"))
		return -1;
	if (!strcmp(how, "abort"))
		return -2;
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (!strcmp(how, sigs[i].name))
			return sigs[i].sig;
	fprintf(stderr, "crash_kill: unknown HOW %s\n", how);
	exit(2);
}

/* "killed by SIGTERM", "exit 3", into buf. */
static const char *status_text(int st, char *buf, size_t n)
{
	if (WIFSIGNALED(st))
		snprintf(buf, n, "killed by SIG%s", sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else if (WIFEXITED(st))
		snprintf(buf, n, "exit %d", WEXITSTATUS(st));
	else
		snprintf(buf, n, "status %#x", st);
	return buf;
}

/* A kill point: 1 to 4096 calls, small ones as often as large, at most
 * max.  The harness draws from rs too (the writer's are in its process). */
static uint64_t draw_n(uint64_t max)
{
	uint64_t n = 1 + (uint64_t)rnd(1LL << rnd(13));

	return max && n > max ? 1 + (uint64_t)rnd((long long)max) : n;
}

/* ---- the writer (exec'd, preloaded) -------------------------------------- */

static struct cl_writer W;

static int writer_main(int fd, const char *path, const char *cpath)
{
	struct area *A = mmap(NULL, sizeof *A, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (A == MAP_FAILED)
		die("mmap");
	close(fd);
	if (A->mode == W_PLAIN) {
		cl_open(&W, &A->log[0], path);
		cl_run(&W);
		exit(0);
	}
	if (A->mode == W_FORK && !A->open_after) {
		cl_open(&W, &A->log[0], path);
		for (uint64_t i = 0; i < A->fork_after; i++)
			cl_call(&W, CL_NONE);
	}
	pid_t c = fork();
	if (c < 0)
		cl_fail(&W, "fork");
	if (c == 0) {
		cl_open(&W, &A->log[1], cpath);
		cl_run(&W);
		exit(0);
	}
	if (A->mode == W_JOB || A->open_after)
		cl_open(&W, &A->log[0], path);
	cl_run(&W);
	exit(0);
}

/* ---- the oracle ---------------------------------------------------------- */

struct tally {
	int cases, failed;
	uint64_t bytes, calls, absent, whole, partial, guardians;
};

static unsigned char *slurp(const char *path, int64_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	unsigned char *b = malloc((size_t)st.st_size + 1);
	int64_t got = 0;
	while (b && got < st.st_size) {
		ssize_t r = pread(fd, b + got, (size_t)(st.st_size - got), got);
		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	*size = got;
	return b;
}

/* The last returned call that wrote offset x (for a message), or -1. */
static long long last_writer(const struct cl_log *L, const int64_t *at, uint64_t r, int64_t x)
{
	for (uint64_t i = r; i-- > 0;) {
		const struct cl_rec *c = &L->rec[i];
		if (c->kind == CL_TRUNC && c->res == 0 && x >= c->off)
			return (long long)i;
		if (c->kind != CL_TRUNC && c->kind != CL_FSYNC && c->res > 0 && x >= at[i] && x < at[i] + c->res)
			return (long long)i;
	}
	return -1;
}

static void hex16(const unsigned char *b, int64_t size, int64_t x, char *out)
{
	out[0] = 0;
	for (int64_t i = x; i < x + 16 && i < size; i++)
		sprintf(out + strlen(out), "%02x", b[i]);
	if (x >= size)
		strcpy(out, "(end of file)");
}

/* Check the file at path against log L; label names the case.  Returns 1
 * when it passed; messages (# ...) on stdout when not. */
static int check_log(const struct cl_log *L, const char *path, const char *label, struct tally *t)
{
	uint64_t r = atomic_load(&L->returned), s = atomic_load(&L->started);
	static unsigned char data[CL_BIG];
	int ok = 0;

	t->cases++;
	if (L->err[0]) {
		say("# %s: the writer gave up: %s\n", label, L->err);
		goto out;
	}
	if (r < 1) {
		say("# %s: no call returned before the writer died: nothing tested\n", label);
		goto out;
	}
	if (s != r && s != r + 1) {
		say("# %s: log torn: %" PRIu64 " started, %" PRIu64 " returned\n", label, s, r);
		goto out;
	}
	/* replay what returned */
	int o = open(path_oracle, O_RDWR | O_CREAT | O_TRUNC, 0644), oa = open(path_oracle, O_WRONLY | O_APPEND);
	int64_t *at = malloc(sizeof *at * (r + 1));
	if (o < 0 || oa < 0 || !at)
		die(path_oracle);
	for (uint64_t i = 0; i < r; i++) {
		const struct cl_rec *c = &L->rec[i];
		ssize_t n = 0;
		at[i] = c->off;
		if (c->res < 0) {
			say("# %s: call %" PRIu64 " (%s, %" PRId64 " + %u) returned %s\n", label, i,
			    cl_kind_name[c->kind], c->off, c->len, strerror((int)-c->res));
			close(o);
			close(oa);
			goto out_free;
		}
		if (c->len)
			cl_fill(data, (size_t)c->res, c->dseed);
		switch (c->kind) {
		case CL_WRITE:
		case CL_WRITEV:
			if (lseek(o, c->off, SEEK_SET) != c->off)
				die("lseek oracle");
			n = write(o, data, (size_t)c->res);
			break;
		case CL_PWRITE: n = pwrite(o, data, (size_t)c->res, c->off); break;
		case CL_APPEND:
			n = write(oa, data, (size_t)c->res);
			at[i] = lseek(oa, 0, SEEK_CUR) - n;
			break;
		case CL_TRUNC: n = ftruncate(o, c->off); break;
		case CL_FSYNC: break;
		}
		if (n != c->res)
			die("oracle write");
		t->calls++;
	}
	close(o);
	close(oa);

	int64_t fs = 0, os = 0;
	unsigned char *F = slurp(path, &fs), *O = slurp(path_oracle, &os);
	if (!F || !O)
		die(!F ? path : path_oracle);
	t->bytes += (uint64_t)fs;
#define OB(x) ((x) < os ? O[x] : 0) /* the oracle, zeros past its end */
	const char *flight = NULL;
	if (s == r + 1) { /* a call in flight */
		const struct cl_rec *c = &L->rec[r];
		int64_t off = c->kind == CL_APPEND ? os : c->off, len = c->len;
		if (c->kind == CL_FSYNC) {
			if (fs == os && !memcmp(F, O, (size_t)fs))
				flight = "";
		} else if (c->kind == CL_TRUNC) {
			int same = fs == os && !memcmp(F, O, (size_t)fs);
			int cut = fs == c->off;
			for (int64_t x = 0; cut && x < fs; x++)
				cut = F[x] == (x < c->off ? OB(x) : 0);
			if (same)
				flight = "absent", t->absent++;
			else if (cut)
				flight = "whole", t->whole++;
		} else if (fs >= os) {
			/* k bytes of the call's data at off: F = O below off and
			 * past off + len, the data on [off, off + k), O on
			 * [off + k, off + len); the size max(os, off + k) */
			cl_fill(data, (size_t)len, c->dseed);
			int64_t kmax = 0, jmin = len, wend = off + len < fs ? off + len : fs;
			while (kmax < len && off + kmax < fs && F[off + kmax] == data[kmax])
				kmax++;
			while (jmin > 0 && off + jmin - 1 >= wend)
				jmin--;
			while (jmin > 0 && off + jmin - 1 < wend && F[off + jmin - 1] == OB(off + jmin - 1))
				jmin--;
			int64_t lo = jmin, hi = kmax;
			if (fs > os) /* the size says k */
				lo = hi = fs - off <= kmax && fs - off >= jmin ? fs - off : -1;
			else if (off + hi > os)
				hi = os > off ? os - off : 0;
			int outside = 1;
			for (int64_t x = 0; outside && x < fs; x++)
				if (x < off || x >= off + len)
					outside = F[x] == OB(x);
			if (outside && lo >= 0 && lo <= hi) {
				int64_t k = hi == len ? len : lo;
				flight = k == len ? "whole" : k == 0 ? "absent" : "partial";
				if (k > 0 && k < len)
					say("# %s: call %" PRIu64 " in flight (%s at %" PRId64 ", %" PRId64
					    " bytes) found written in part: its first %" PRId64 " bytes\n",
					    label, r, cl_kind_name[c->kind], off, len, k);
				*(k == len ? &t->whole : k == 0 ? &t->absent : &t->partial) += 1;
			}
		}
		if (!flight) {
			say("# %s: the file is neither without nor with call %" PRIu64 " in flight (%s, %" PRId64
			    " + %" PRId64 ")\n",
			    label, r, cl_kind_name[c->kind], off, len);
			if (c->kind != CL_TRUNC && c->kind != CL_FSYNC) {
				/* which of its bytes are there (where they differ from before) */
				int64_t there = 0, lo = -1, hi = -1;
				cl_fill(data, (size_t)len, c->dseed);
				for (int64_t x = off; x < off + len && x < fs; x++)
					if (F[x] == data[x - off] && F[x] != OB(x)) {
						there++;
						lo = lo < 0 ? x : lo;
						hi = x + 1;
					}
				say("#   %" PRId64 " of its bytes found%s", there, there ? "" : "\n");
				if (there)
					say(", from offset %" PRId64 " to %" PRId64 "\n", lo, hi);
			}
		}
	} else if (fs == os && !memcmp(F, O, (size_t)fs)) {
		flight = "";
	}
	if (flight) {
		ok = 1;
	} else {
		int64_t x = 0, diff = 0, first = -1, n = fs > os ? fs : os;
		for (x = 0; x < n; x++)
			if (x >= fs || x >= os || F[x] != O[x]) {
				diff++;
				if (first < 0)
					first = x;
			}
		char e[40], g[40];
		hex16(O, os, first, e);
		hex16(F, fs, first, g);
		say("# %s: %" PRIu64 " calls returned; file %" PRId64 " bytes, oracle %" PRId64
		    " bytes; %" PRId64 " bytes differ, first at offset %" PRId64 "\n",
		    label, r, fs, os, diff, first);
		long long w = last_writer(L, at, r, first);
		say("#   expected %s\n#   got      %s\n", e, g);
		if (w >= 0 && L->rec[w].kind == CL_TRUNC)
			say("#   offset %" PRId64 " last changed by call %lld (ftruncate to %" PRId64 ") of %" PRIu64 "\n",
			    first, w, L->rec[w].off, r);
		else if (w >= 0)
			say("#   offset %" PRId64 " last written by call %lld (%s at %" PRId64 ", %" PRId64
			    " bytes) of %" PRIu64 "\n",
			    first, w, cl_kind_name[L->rec[w].kind], at[w], L->rec[w].res, r);
	}
	free(F);
	free(O);
out_free:
	free(at);
out:
	if (!ok)
		t->failed++;
	return ok;
}

/* Wait for every guardian log L saw; a message for each that stays. */
static int wait_guardians(const struct cl_log *L, const char *label, struct tally *t)
{
	int n = atomic_load(&L->nguard), ok = 1;

	for (int i = 0; i < n; i++) {
		pid_t g = atomic_load(&L->guard[i]);
		if (wait_gone(g, guardian_timeout) < 0) {
			say("# %s: guardian %d still running %.0f s after the writer died: SIGKILL\n", label, (int)g,
			    guardian_timeout);
			kill_one(g, SIGKILL);
			ok = 0;
		}
		t->guardians++;
	}
	return ok;
}

/* ---- the harness --------------------------------------------------------- */

static struct area *A;
static int memfd = -1;

static void area_reset(int mode)
{
	memset(A, 0, offsetof(struct area, log));
	for (int i = 0; i < 2; i++)
		memset(&A->log[i], 0, offsetof(struct cl_log, rec));
	A->mode = mode;
}

/* Start the writer: fork, then exec this program preloaded. */
static pid_t spawn_writer(int newgroup)
{
	unlink(path_ffiolog);
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct rlimit nocore = {0, 0};
		char fds[16];
		setrlimit(RLIMIT_CORE, &nocore);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a harness that died takes it along */
		/* the signals the writer must die of: not ignored (SIGINT is,
		 * in the background jobs of sh; SIGHUP, under nohup) nor
		 * blocked, whatever the caller left */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			signal(sigs[i].sig, SIG_DFL);
		if (newgroup)
			setpgid(0, 0);
		/* the writer prints nothing; its stdio (and a guardian's it
		 * may pass on) is not the harness's pipe, which would wait
		 * for the last of them */
		int null = open("/dev/null", O_RDWR), out = open(path_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (null < 0 || out < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(126);
		close(null);
		close(out);
		if (spec && *spec) {
			setenv("FF_IO_OPTS", spec, 1);
			setenv("LD_PRELOAD", preload, 1);
		}
		char logto[4200];
		snprintf(logto, sizeof logto, "+%s", path_ffiolog); /* appended to: a guardian may log too */
		setenv("FF_IO_LOGFILE", logto, 1);
		snprintf(fds, sizeof fds, "%d", memfd);
		execl("/proc/self/exe", "crash_kill", "writer", fds, path_w, path_c, (char *)NULL);
		_exit(127);
	}
	if (newgroup)
		setpgid(pid, pid);
	return pid;
}

/* Start a writer that forks a child writer (the fork and job modes): the
 * writer's pid; the child's (*child, 0 if it never came) and a pidfd of
 * it (*cfd, -1 then).  *st: the writer's status, if it ended meanwhile. */
static pid_t spawn_pair(int newgroup, pid_t *child, int *cfd, int *st)
{
	struct cl_log *C = &A->log[1];
	pid_t pid = spawn_writer(newgroup);
	double end = now() + 60;

	while (atomic_load(&C->pid) == 0 && now() < end && waitpid(pid, st, WNOHANG) == 0)
		sched_yield();
	*child = atomic_load(&C->pid);
	*cfd = *child ? pidfd_open_(*child) : -1;
	return pid;
}

/* Reap the harness's child pid into *st, waiting 60 s at most; then it
 * gets SIGKILL, and the answer is -1. */
static int reap(pid_t pid, int *st)
{
	int pfd = pidfd_open_(pid), r = 0;

	if (pfd >= 0 && pidfd_wait(pfd, 60) < 0) {
		kill_one(pid, SIGKILL);
		r = -1;
	}
	if (pfd >= 0)
		close(pfd);
	if (waitpid(pid, st, 0) != pid)
		die("waitpid");
	return r;
}

/* Wait until log L has n calls returned (0), its process ended (1), or
 * 60 s passed (-1).  The writer is the harness's child pid (its status
 * into *st once it ended), or, for pid 0, a process watched by pidfd pfd. */
static int wait_count(const struct cl_log *L, uint64_t n, pid_t pid, int pfd, int *st)
{
	double end = now() + 60;

	for (unsigned spin = 0;; spin++) {
		if (atomic_load(&L->returned) >= n)
			return 0;
		if ((spin & 63) == 0) {
			if (pid > 0 && waitpid(pid, st, WNOHANG) == pid)
				return 1;
			if (pid == 0 && pfd >= 0) {
				struct pollfd p = {.fd = pfd, .events = POLLIN};
				if (poll(&p, 1, 0) == 1)
					return 1;
			}
			if (now() > end)
				return -1;
		}
		sched_yield();
	}
}

/* The first lines of ffio's log and of what the writer printed. */
static void print_logs(void)
{
	const char *paths[] = {path_ffiolog, path_out}, *tags[] = {"ffio", "writer"};
	char line[512];

	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(paths[k], "r");
		for (int i = 0; f && i < 5 && fgets(line, sizeof line, f); i++)
			say("#   %s: %s", tags[k], line);
		if (f)
			fclose(f);
	}
}

/* Both writers' guardians waited for, both files checked against their
 * logs (the logs printed if one fails): ok, and it all passed. */
static int check_pair(struct cl_log *P, struct cl_log *C, const char *lp, const char *lc, struct tally *t, int ok)
{
	ok = wait_guardians(P, lp, t) && ok;
	ok = wait_guardians(C, lc, t) && ok;
	ok = check_log(P, path_w, lp, t) && ok;
	ok = check_log(C, path_c, lc, t) && ok;
	if (!ok)
		print_logs();
	return ok;
}

static void reproduce(const char *mode, const char *how, uint64_t seed)
{
	say("#   reproduce: CRASH_SPEC='%s' CRASH_PRELOAD='%s' t/crash_kill %s DIR %s %" PRIu64 " 1\n",
	    spec ? spec : "", spec && *spec ? preload : "", mode, how, seed);
}

/* One seed of kill / fsync: 1 when it passed. */
static int one_kill(const char *mode, const char *how, uint64_t seed, uint64_t maxn, struct tally *t)
{
	int sig = parse_how(how), st = 0, fsync_mode = !strcmp(mode, "fsync");
	struct cl_log *L = &A->log[0];
	char label[200], stx[64];

	area_reset(W_PLAIN);
	rs = seed * 0x2545f4914f6cdd1dULL + 1;
	L->seed = seed;
	uint64_t n = draw_n(maxn);
	if (fsync_mode) {
		L->span = 192 << 10;
		L->fsync_after = (int32_t)(10 + rnd(200));
	}
	if (sig < 0) {
		L->self_exit = n;
		L->self_how = sig == -2;
	}
	snprintf(label, sizeof label, "seed %" PRIu64 ", %s %s %" PRIu64 " calls", seed, how,
		 fsync_mode ? "in the fsync after" : "after", fsync_mode ? (uint64_t)L->fsync_after : n);
	pid_t pid = spawn_writer(0);
	int w = 0;
	if (sig > 0) {
		if (fsync_mode) {
			double end = now() + 60;
			while (atomic_load(&L->phase) != CL_IN_FSYNC && atomic_load(&L->returned) <= (uint64_t)L->fsync_after) {
				if (waitpid(pid, &st, WNOHANG) == pid) {
					w = 1;
					break;
				}
				if (now() > end) {
					w = -1;
					break;
				}
				sched_yield();
			}
			if (w == 0 && atomic_load(&L->phase) != CL_IN_FSYNC)
				say("# %s: the fsync was over before the signal\n", label);
		} else {
			w = wait_count(L, n, pid, -1, &st);
		}
		if (w == 0)
			kill_one(pid, sig);
	}
	if (w < 0)
		kill_one(pid, SIGKILL);
	if (w <= 0 && reap(pid, &st) < 0) {
		say("# %s: the writer still there 60 s after it should have ended\n", label);
		w = -1;
	}
	int want_sig = sig > 0 ? sig : sig == -2 ? SIGABRT : 0;
	int as_asked = want_sig ? WIFSIGNALED(st) && WTERMSIG(st) == want_sig : WIFEXITED(st) && WEXITSTATUS(st) == 3;
	if (w != 0 || !as_asked) {
		t->cases++;
		t->failed++;
		say("# %s: the writer ended otherwise: %s, %" PRIu64 " calls returned%s%s\n", label,
		    status_text(st, stx, sizeof stx), atomic_load(&L->returned), L->err[0] ? ": " : "", L->err);
		print_logs();
		return 0;
	}
	int ok = wait_guardians(L, label, t);
	ok = check_log(L, path_w, label, t) && ok;
	if (!ok) {
		print_logs();
		reproduce(mode, how, seed);
	}
	return ok;
}

/* One seed of fork: the child dies (HOW), then the parent (SIGKILL). */
static int one_fork(const char *how, uint64_t seed, struct tally *t)
{
	int sig = parse_how(how), st = 0, ok = 1;
	struct cl_log *P = &A->log[0], *C = &A->log[1];
	char label[200], lp[240], lc[240], stx[64];

	area_reset(W_FORK);
	rs = seed * 0x2545f4914f6cdd1dULL + 7;
	A->open_after = (int32_t)(seed & 1);
	A->fork_after = 1 + (uint64_t)rnd(200);
	P->seed = seed;
	C->seed = seed ^ 0xc41dc41dULL;
	uint64_t nc = draw_n(2000), np = 1 + (uint64_t)rnd(300);
	if (sig < 0) {
		C->self_exit = nc;
		C->self_how = sig == -2;
	}
	snprintf(label, sizeof label, "seed %" PRIu64 ", parent's file opened %s the fork, child %s after %" PRIu64
		 " calls", seed, A->open_after ? "after" : "before", how, nc);
	snprintf(lp, sizeof lp, "%s: parent", label);
	snprintf(lc, sizeof lc, "%s: child", label);
	pid_t child;
	int cfd;
	pid_t pid = spawn_pair(0, &child, &cfd, &st);
	if (cfd < 0) {
		say("# %s: no child seen (%s)\n", label, strerror(errno));
		kill_one(pid, SIGKILL);
		waitpid(pid, &st, 0);
		t->cases++, t->failed++;
		return 0;
	}
	int w = 0;
	if (sig > 0) {
		w = wait_count(C, nc, 0, cfd, &st);
		if (w == 0)
			kill_one(child, sig);
	}
	if (pidfd_wait(cfd, 60) < 0) {
		say("# %s: the child did not die\n", label);
		kill_one(child, SIGKILL);
		ok = 0;
	}
	close(cfd);
	/* the parent writes on, then dies */
	uint64_t r0 = atomic_load(&P->returned);
	if (wait_count(P, r0 + np, pid, -1, &st) != 0) {
		say("# %s: the parent ended by itself: %s%s%s\n", label, status_text(st, stx, sizeof stx),
		    P->err[0] ? ": " : "", P->err);
		t->cases++, t->failed++;
		return 0;
	}
	kill_one(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (C->err[0] || (sig > 0 && w != 0)) {
		say("# %s: the child ended otherwise: %s\n", label, C->err[0] ? C->err : "before the signal");
		ok = 0;
	}
	ok = check_pair(P, C, lp, lc, t, ok);
	if (!ok)
		reproduce("fork", how, seed);
	return ok;
}

/* One seed of job: SIGTERM to the group, SIGKILL after 5 s. */
static int one_job(uint64_t seed, struct tally *t)
{
	int st = 0, ok = 1;
	struct cl_log *P = &A->log[0], *C = &A->log[1];
	char label[200], lp[240], lc[240], stx[64];

	area_reset(W_JOB);
	rs = seed * 0x2545f4914f6cdd1dULL + 11;
	P->seed = seed;
	C->seed = seed ^ 0xc41dc41dULL;
	uint64_t n0 = draw_n(3000), n1 = draw_n(3000);
	snprintf(label, sizeof label, "seed %" PRIu64 ", SIGTERM to the group after %" PRIu64 " + %" PRIu64 " calls",
		 seed, n0, n1);
	snprintf(lp, sizeof lp, "%s: parent", label);
	snprintf(lc, sizeof lc, "%s: child", label);
	pid_t child;
	int cfd;
	pid_t pid = spawn_pair(1, &child, &cfd, &st);
	if (cfd < 0 || wait_count(P, n0, pid, -1, &st) != 0 || wait_count(C, n1, 0, cfd, &st) != 0) {
		say("# %s: the writers ended by themselves%s%s %s\n", label, P->err[0] ? ": " : "", P->err, C->err);
		kill_group(pid, SIGKILL);
		waitpid(pid, &st, 0);
		t->cases++, t->failed++;
		return 0;
	}
	kill_group(pid, SIGTERM);
	/* a deadline, not an ordering: poll with short sleeps */
	int pdone = 0, cdone = 0;
	double end = now() + 5;
	while ((!pdone || !cdone) && now() < end) {
		if (!pdone && waitpid(pid, &st, WNOHANG) == pid)
			pdone = 1;
		if (!cdone && pidfd_wait(cfd, 0.001) == 0)
			cdone = 1;
		if (!pdone)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	if (!pdone || !cdone) {
		say("# %s: %s alive 5 s after SIGTERM: SIGKILL to the group\n", label,
		    !pdone && !cdone ? "both" : !pdone ? "the parent" : "the child");
		kill_group(pid, SIGKILL);
		if (!pdone)
			waitpid(pid, &st, 0);
		pidfd_wait(cfd, 60);
	}
	close(cfd);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM) {
		say("# %s: the parent ended otherwise: %s\n", label, status_text(st, stx, sizeof stx));
		ok = 0;
	}
	ok = check_pair(P, C, lp, lc, t, ok);
	if (!ok)
		reproduce("job", "-", seed);
	return ok;
}

/* Lines of ffio's log that mention the guardian; of those, how many say it
 * ended (any of a few words). */
static void guardian_lines(int *all, int *ended)
{
	static const char *const words[] = {"end", "die", "dead", "lost", "gone", "exit", "kill", "terminat", "signal"};
	FILE *f = fopen(path_ffiolog, "r");
	char line[1024];

	*all = *ended = 0;
	while (f && fgets(line, sizeof line, f)) {
		for (char *p = line; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		if (!strstr(line, "guardian"))
			continue;
		++*all;
		say("#   ffio: %s", line);
		for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strstr(line, words[i])) {
				++*ended;
				break;
			}
	}
	if (f)
		fclose(f);
}

/* One seed of guardian: 1 passed, 0 failed, -1 no guardian here. */
static int one_guardian(uint64_t seed, struct tally *t)
{
	struct cl_log *L = &A->log[0];
	int st = 0, ok = 1;
	char label[200], stx[64];

	area_reset(W_PLAIN);
	rs = seed * 0x2545f4914f6cdd1dULL + 13;
	L->seed = seed;
	uint64_t n1 = draw_n(1000), n2 = 1 + (uint64_t)rnd(1000);
	snprintf(label, sizeof label, "seed %" PRIu64 ", guardian killed after %" PRIu64 " calls, %" PRIu64 " more",
		 seed, n1, n2);
	pid_t pid = spawn_writer(0);
	int w = wait_count(L, 1, pid, -1, &st);
	if (w == 0 && !atomic_load(&L->has_sym)) {
		kill_one(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	double end = now() + 10;
	while (w == 0 && atomic_load(&L->nguard) == 0 && now() < end)
		w = wait_count(L, atomic_load(&L->returned) + 1, pid, -1, &st);
	if (w == 0 && atomic_load(&L->nguard) == 0) {
		say("# %s: ffio_guardian_pid() still 0 after %" PRIu64 " calls\n", label, atomic_load(&L->returned));
		w = -1;
	}
	if (w == 0)
		w = wait_count(L, n1, pid, -1, &st);
	if (w != 0) {
		if (w < 0)
			kill_one(pid, SIGKILL);
		waitpid(pid, &st, 0);
		say("# %s: the writer ended early: %s%s%s\n", label, status_text(st, stx, sizeof stx),
		    L->err[0] ? ": " : "", L->err);
		t->cases++, t->failed++;
		return 0;
	}
	pid_t g = atomic_load(&L->guard[0]);
	kill_one(g, SIGKILL);
	if (wait_gone(g, guardian_timeout) < 0) {
		say("# %s: guardian %d did not die of SIGKILL\n", label, (int)g);
		ok = 0;
	}
	atomic_store(&A->log[0].stop_at, atomic_load(&L->returned) + n2);
	if (reap(pid, &st) < 0)
		say("# %s: the writer still there 60 s after it was told to stop\n", label);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		say("# %s: the writer did not exit normally: %s%s%s\n", label, status_text(st, stx, sizeof stx),
		    L->err[0] ? ": " : "", L->err);
		ok = 0;
	}
	ok = wait_guardians(L, label, t) && ok;
	ok = check_log(L, path_w, label, t) && ok;
	int all, ended;
	guardian_lines(&all, &ended);
	if (all != 1 && ended != 1) {
		say("# %s: ffio's log says %d times that the guardian ended (%d lines name it), not once\n", label,
		    ended, all);
		if (ok)
			t->failed++;
		ok = 0;
	}
	if (!ok)
		reproduce("guardian", "-", seed);
	return ok;
}

static void summary(const struct tally *t, const char *extra)
{
	printf("%d cases, %d failed; %" PRIu64 " calls returned, %.1f MiB compared", t->cases, t->failed, t->calls,
	       (double)t->bytes / (1 << 20));
	if (t->absent + t->whole + t->partial)
		printf("; in flight: %" PRIu64 " absent, %" PRIu64 " whole, %" PRIu64 " partial", t->absent, t->whole,
		       t->partial);
	printf("; guardians waited for: %" PRIu64 "%s\n", t->guardians, extra);
	FILE *f = fopen(path_tally, "a");
	if (f) {
		fprintf(f, "%d %d %" PRIu64 "\n", t->cases, t->failed, t->bytes);
		fclose(f);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: crash_kill kill|fsync|fork DIR HOW SEED NSEEDS [MAXN]\n"
			"       crash_kill job|guardian DIR SEED NSEEDS\n"
			"       crash_kill check LOG FILE [LABEL]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "writer"))
		return writer_main(atoi(argv[2]), argv[3], argv[4]);
	if (dlsym(RTLD_DEFAULT, "ffopen")) {
		fprintf(stderr, "crash_kill: the harness runs with ffio in its own process (LD_PRELOAD?): it must not\n");
		return 2;
	}
	if (argc < 3)
		usage();
	const char *e = getenv("CRASH_GUARDIAN_TIMEOUT");
	if (e && atof(e) > 0)
		guardian_timeout = atof(e);
	spec = getenv("CRASH_SPEC");
	preload = getenv("CRASH_PRELOAD");
	if (spec && *spec && (!preload || !*preload)) {
		fprintf(stderr, "crash_kill: CRASH_SPEC without CRASH_PRELOAD\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct tally t = {0};

	if (!strcmp(argv[1], "check") && (argc == 4 || argc == 5)) {
		const char *label = argc == 5 ? argv[4] : argv[3];
		int fd = open(argv[2], O_RDONLY);
		struct cl_log *L = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *L, PROT_READ, MAP_SHARED, fd, 0);
		if (L == MAP_FAILED)
			die(argv[2]);
		snprintf(path_oracle, sizeof path_oracle, "%s.ref", argv[2]);
		const char *slash = strrchr(argv[2], '/');
		snprintf(path_tally, sizeof path_tally, "%.*s/tally", slash ? (int)(slash - argv[2]) : 1,
			 slash ? argv[2] : ".");
		int ok = wait_guardians(L, label, &t);
		ok = check_log(L, argv[3], label, &t) && ok;
		unlink(path_oracle);
		summary(&t, "");
		return ok ? 0 : 1;
	}
	dir = argv[2];
	snprintf(path_w, sizeof path_w, "%s/w.dat", dir);
	snprintf(path_c, sizeof path_c, "%s/c.dat", dir);
	snprintf(path_oracle, sizeof path_oracle, "%s/oracle.ref", dir);
	snprintf(path_ffiolog, sizeof path_ffiolog, "%s/ffio.log", dir);
	snprintf(path_tally, sizeof path_tally, "%s/tally", dir);
	snprintf(path_out, sizeof path_out, "%s/writer.out", dir);
	memfd = memfd_create("crash_kill-log", 0);
	if (memfd < 0 || ftruncate(memfd, sizeof *A) < 0)
		die("memfd");
	A = mmap(NULL, sizeof *A, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (A == MAP_FAILED)
		die("mmap");

	int three = !strcmp(argv[1], "job") || !strcmp(argv[1], "guardian");
	if (argc < (three ? 5 : 6))
		usage();
	const char *how = three ? "-" : argv[3];
	uint64_t seed0 = strtoull(argv[three ? 3 : 4], NULL, 0), nseeds = strtoull(argv[three ? 4 : 5], NULL, 0);
	uint64_t maxn = !three && argc > 6 ? strtoull(argv[6], NULL, 0) : 0;
	int skipped = 0;
	for (uint64_t s = seed0; s < seed0 + nseeds; s++) {
		int r;
		if (!strcmp(argv[1], "kill") || !strcmp(argv[1], "fsync"))
			r = one_kill(argv[1], how, s, maxn, &t);
		else if (!strcmp(argv[1], "fork"))
			r = one_fork(how, s, &t);
		else if (!strcmp(argv[1], "job"))
			r = one_job(s, &t);
		else if (!strcmp(argv[1], "guardian"))
			r = one_guardian(s, &t);
		else
			usage();
		if (r < 0) {
			skipped = 1;
			break;
		}
		if (r == 0 && mute)
			muted++;
		if (t.failed >= 3)
			mute = 1;
	}
	if (skipped) {
		printf("no guardian (ffio_guardian_pid not in the library)\n");
		return 77;
	}
	if (muted)
		printf("# (%d more seeds failed: messages not shown)\n", muted);
	summary(&t, "");
	return t.failed ? 1 : 0;
}
