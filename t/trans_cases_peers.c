/* t/trans_cases_peers.c -- the cases of t/trans_cases in which another
 * process reads or writes the file: a message from a child to its parent
 * (the writer's side), shared memory guarded by a record lock, signal
 * handlers as set, a crash report a handler writes, a timer's handler
 * logging while the program is inside a long call, a lock wait left by an
 * alarm's jump, a file grown and cut
 * behind the process, and what the process hears from another one (the
 * reader's side). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trans_cases.h"
#include "kill_safe.h"

extern char **environ;

static sigjmp_buf jump_back;
static void jump_out(int sig)
{
	siglongjmp(jump_back, sig);
}

/* Told by a child, a parent reads what the child wrote: the child writes
 * x.dat (left open, its writes cached) and then tells the parent through
 * a pipe, a socket, a signal or a stream it flushes (and through a pipe
 * after it left a signal handler by siglongjmp), by a name it makes,
 * moves or removes, or by posting a semaphore the parent waits on.  The
 * kernel shows a write to every process once it returns. */
void case_messages(void)
{
	static const char *const how[] = {"write", "writev", "send", "sendmsg", "kill", "sigqueue", "fflush",
					  "write after a siglongjmp out of a handler", "rename", "open O_CREAT",
					  "mkdir", "unlink", "sem_post (pshared)", "sem_post (sem_open)"};
	char mark[4][sizeof path + 16]; /* rename's from and to, a file made, a directory */
	for (int k = 0; k < 4; k++)
		snprintf(mark[k], sizeof mark[k], "%s.mark%d", path, k);
	enum { HOW = sizeof how / sizeof how[0] };
	int up[2], down[2], sv[2];
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* Semaphores as Python's multiprocessing locks use them. */
	char sem_name[64];
	snprintf(sem_name, sizeof sem_name, "/ffio-trans-%d", (int)getpid());
	sem_t *sem[2] = {mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
			 sem_open(sem_name, O_CREAT | O_EXCL, 0600, 0)};
	if (pipe(up) < 0 || pipe(down) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
	    sigprocmask(SIG_BLOCK, &usr1, NULL) < 0 || sem[0] == MAP_FAILED || sem_init(sem[0], 1, 0) < 0 ||
	    sem[1] == SEM_FAILED || sem_unlink(sem_name) < 0) {
		printf("set-up: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char c = 'm', rec[8];
		struct iovec iov = {&c, 1};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
		FILE *stream = fdopen(dup(up[1]), "w");
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		close(open(mark[0], O_WRONLY | O_CREAT, 0644));
		for (int i = 0; i < HOW; i++) {
			snprintf(rec, sizeof rec, "rec %c|", 'a' + i);
			if (pwrite(fd, rec, 6, 6 * i) != 6)
				_exit(1);
			switch (i) {
			case 0: (void)!write(up[1], &c, 1); break;
			case 1: (void)!writev(up[1], &iov, 1); break;
			case 2: (void)!send(sv[0], &c, 1, 0); break;
			case 3: (void)!sendmsg(sv[0], &msg, 0); break;
			case 4: kill_one(getppid(), SIGUSR1); break;
			case 5: sigqueue(getppid(), SIGUSR1, (union sigval){.sival_int = i}); break;
			case 6: fputc(c, stream), fflush(stream); break;
			case 7:
				signal(SIGUSR2, jump_out);
				if (sigsetjmp(jump_back, 1) == 0)
					raise(SIGUSR2);
				(void)!write(up[1], &c, 1);
				break;
			case 8: (void)!rename(mark[0], mark[1]); break;
			case 9: close(open(mark[2], O_WRONLY | O_CREAT, 0644)); break;
			case 10: (void)!mkdir(mark[3], 0755); break;
			case 11: (void)!unlink(mark[2]); break;
			case 12: sem_post(sem[0]); break;
			case 13: sem_post(sem[1]); break;
			}
			if (read(down[0], &c, 1) != 1) /* the parent has read x.dat */
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < HOW; i++) {
		char c;
		if (i == 4 || i == 5)
			sigwaitinfo(&usr1, NULL);
		else if (i >= 12)
			sem_wait(sem[i - 12]);
		else if (i >= 8) /* the sign is a name: looked for until it shows */
			while ((access(mark[i == 8 ? 1 : i == 10 ? 3 : 2], F_OK) == 0) == (i == 11))
				sched_yield();
		else if (read(i == 2 || i == 3 ? sv[1] : up[0], &c, 1) != 1)
			printf("no message\n");
		char buf[128];
		int fd = open(path, O_RDONLY);
		ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
		close(fd);
		printf("after %s: %zd bytes [%.*s]\n", how[i], got, (int)(got > 0 ? got : 0), buf);
		fflush(stdout);
		(void)!write(down[1], "a", 1);
	}
	waitpid(pid, NULL, 0);
	unlink(mark[1]);
	rmdir(mark[3]);
	exit(0);
}

/* Shared memory guarded by a record lock, as SQLite in WAL mode uses its
 * -shm: holding a lock on an index file it maps shared, a process writes
 * x.dat, then stores a count in the mapping; another process that reads
 * the count (no call ffio sees) reads x.dat while the lock is still held.
 * One index is locked before it is mapped (and matched by the specs),
 * two others mapped first (and matched by none), then locked with fcntl
 * and with lockf. */
void case_shared_index(void)
{
	char name[3][sizeof path + 16];
	volatile int *count[3];
	int ix[3];
	struct flock wr = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	snprintf(name[0], sizeof name[0], "%s.i.dat", path);
	snprintf(name[1], sizeof name[1], "%s.idx", path);
	snprintf(name[2], sizeof name[2], "%s.idy", path);
	for (int k = 0; k < 3; k++) {
		ix[k] = open(name[k], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (ix[k] < 0 || ftruncate(ix[k], 4096) < 0)
			exit(1);
		if (k == 0)
			printf("lock, then map: %d\n", fcntl(ix[k], F_SETLK, &wr));
		count[k] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ix[k], 0);
		if (count[k] == MAP_FAILED)
			exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int round = 1; round <= 6; round++) {
			volatile int *c = count[(round - 1) / 2];
			while (__atomic_load_n(&c[0], __ATOMIC_ACQUIRE) < round)
				sched_yield();
			char buf[64];
			int rd = open(path, O_RDONLY);
			ssize_t got = rd < 0 ? -1 : pread(rd, buf, sizeof buf, 0);
			close(rd);
			printf("reader, count %d: %zd bytes [%.*s]\n", round, got, (int)(got > 0 ? got : 0), buf);
			fflush(stdout);
			__atomic_store_n(&c[1], round, __ATOMIC_RELEASE);
		}
		_exit(0);
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644); /* after fork, which passes files through */
	for (int round = 1; round <= 6; round++) {
		volatile int *c = count[(round - 1) / 2];
		if (round == 3) {
			munmap((void *)count[0], 4096);
			printf("map, then lock: %d\n", fcntl(ix[1], F_SETLK, &wr));
			fflush(stdout);
		} else if (round == 5) {
			munmap((void *)count[1], 4096);
			printf("map, then lockf: %d\n", lockf(ix[2], F_TLOCK, 1));
			fflush(stdout);
		}
		char rec[8];
		snprintf(rec, sizeof rec, "frame%d|", round);
		if (pwrite(fd, rec, 7, 7 * (round - 1)) != 7)
			exit(1);
		__atomic_store_n(&c[0], round, __ATOMIC_RELEASE);
		while (__atomic_load_n(&c[1], __ATOMIC_ACQUIRE) < round)
			sched_yield();
	}
	waitpid(pid, NULL, 0);
	for (int k = 0; k < 3; k++)
		unlink(name[k]);
	exit(0);
}

/* Signal handlers as the program set them: what sigaction and signal
 * report, and what each handler is given, whoever stands between. */
static volatile sig_atomic_t got_plain, got_info, info_value;
static void on_plain(int sig)
{
	got_plain = sig;
}
static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got_info = sig;
	info_value = si->si_value.sival_int;
}

static void show_action(const char *what, int sig)
{
	struct sigaction now;
	if (sigaction(sig, NULL, &now) < 0) {
		printf("%s: %s\n", what, strerror(errno));
		return;
	}
	int info = (now.sa_flags & SA_SIGINFO) != 0;
	const char *h = info ? (now.sa_sigaction == on_info ? "on_info" : "another")
		      : now.sa_handler == SIG_DFL ? "default"
		      : now.sa_handler == SIG_IGN ? "ignore"
		      : now.sa_handler == on_plain ? "on_plain" : "another";
	printf("%s: %s, flags%s%s%s%s, mask has SIGUSR2 %d\n", what, h, info ? " SIGINFO" : "",
	       now.sa_flags & SA_RESTART ? " RESTART" : "", now.sa_flags & SA_RESETHAND ? " RESETHAND" : "",
	       now.sa_flags & SA_NODEFER ? " NODEFER" : "", sigismember(&now.sa_mask, SIGUSR2));
}

void case_handlers(void)
{
	struct sigaction sa = {.sa_handler = on_plain, .sa_flags = SA_RESTART | SA_RESETHAND}, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	printf("sigaction plain: %d\n", sigaction(SIGUSR1, &sa, &old));
	printf("old was default: %d\n", !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL);
	show_action("SIGUSR1", SIGUSR1);
	raise(SIGUSR1);
	printf("plain handler got %d\n", (int)got_plain);
	show_action("SIGUSR1 after one (RESETHAND)", SIGUSR1);
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGUSR1, &sa, NULL);
	struct sigaction plain = {.sa_handler = on_plain};
	printf("sigaction replaces the info handler: %d\n", sigaction(SIGUSR1, &plain, &old));
	printf("old was on_info with SIGINFO: %d\n", (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_info);
	sigaction(SIGUSR1, &sa, NULL);
	sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 42});
	printf("info handler got %d, value %d\n", (int)got_info, (int)info_value);
	show_action("SIGUSR1 with SA_SIGINFO", SIGUSR1);
	__sighandler_t was = signal(SIGUSR2, on_plain);
	printf("signal: was default %d\n", was == SIG_DFL);
	show_action("SIGUSR2 by signal", SIGUSR2);
	was = signal(SIGUSR2, SIG_IGN);
	printf("signal again: was on_plain %d\n", was == on_plain);
	was = signal(SIGUSR1, SIG_DFL);
	printf("signal over an info handler: was on_info %d\n", was == (__sighandler_t)(void (*)(void))on_info);
	errno = 0;
	int rc = sigaction(SIGKILL, &plain, NULL);
	printf("sigaction(SIGKILL): %d %s\n", rc, strerror(errno));
	show_action("SIGKILL", SIGKILL);
	exit(0);
}

/* A crash report: a handler of a fatal signal (as Python's faulthandler,
 * or backtrace_symbols_fd) writes to a file the process opened before,
 * then the process dies of the signal (SIGTERM here: no core dump to
 * leave behind).  What the file then holds, seen by the parent: the line
 * written before and the handler's. */
static int report_fd;
static void on_fatal(int sig)
{
	static const char msg[] = "handler: fatal signal\n";
	if (write(report_fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
		_exit(3);
	raise(sig); /* SA_RESETHAND, SA_NODEFER: the default action, now */
}

void case_crash_report(void)
{
	static const char line[] = "before the crash\n";
	struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND | SA_NODEFER};
	char got[256];
	int st;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		report_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (report_fd < 0 || write(report_fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1) ||
		    sigaction(SIGTERM, &sa, NULL) < 0)
			_exit(2);
		raise(SIGTERM);
		_exit(4);
	}
	int waited = pid > 0 && waitpid(pid, &st, 0) == pid;
	printf("child waited: %d, ended by signal %d\n", waited, waited && WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, got, sizeof got - 1);
	printf("the file: %zd bytes\n%.*s", n, n > 0 ? (int)n : 0, got);
	close(fd);
	exit(0);
}

/* A timer's handler that logs (a profiler's, a heartbeat's) while the
 * program is inside a long call on another managed file: the handler's
 * record lands after the program's own, whole, as with the kernel, and
 * the long call's bytes are all there.  Each round writes its record,
 * arms a one-shot timer, writes 8 MiB to big.dat (some milliseconds: the
 * timer fires during the call), then waits for the handler if it has not
 * run yet. */
static int log_fd;
static volatile sig_atomic_t ticks;
static void on_tick(int sig)
{
	char rec[] = "H00|";
	(void)sig;
	rec[1] = (char)('0' + ticks / 10);
	rec[2] = (char)('0' + ticks % 10);
	if (write(log_fd, rec, 4) != 4)
		_exit(3);
	ticks++;
}

void case_timer_log(void)
{
	enum { ROUNDS = 12, BIG = 8 << 20 };
	char big_path[4200], rec[] = "M00|";
	snprintf(big_path, sizeof big_path, "%.*s/big.dat", (int)(strrchr(path, '/') - path), path);
	char *big = malloc(BIG), *back = malloc(BIG);
	log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int big_fd = open(big_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct sigaction sa = {.sa_handler = on_tick};
	sigset_t alarm_set, old;
	sigemptyset(&alarm_set);
	sigaddset(&alarm_set, SIGALRM);
	if (!big || !back || log_fd < 0 || big_fd < 0 || sigaction(SIGALRM, &sa, NULL) < 0)
		exit(1);
	for (int r = 0; r < ROUNDS; r++) {
		struct itimerval once = {.it_value = {0, 200}};
		rec[1] = (char)('0' + r / 10);
		rec[2] = (char)('0' + r % 10);
		memset(big, 'a' + r, BIG);
		if (write(log_fd, rec, 4) != 4 || setitimer(ITIMER_REAL, &once, NULL) < 0 ||
		    pwrite(big_fd, big, BIG, 0) != BIG)
			exit(2);
		sigprocmask(SIG_BLOCK, &alarm_set, &old);
		while (ticks == r)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	ssize_t n = pread(big_fd, back, BIG, 0);
	printf("ticks %d; big.dat: %zd bytes back, all '%c': %d\n", (int)ticks, n, 'a' + ROUNDS - 1,
	       n == BIG && back[0] == 'a' + ROUNDS - 1 && memcmp(back, back + 1, BIG - 1) == 0);
	exit(close(log_fd) < 0 || close(big_fd) < 0 ? 4 : 0);
}

/* A wait for a record lock given up by an alarm whose handler leaves by
 * siglongjmp (a lock with a timeout), with SA_RESTART: the program then
 * writes on, and reads what it wrote before and after (cached both).
 * Another process holds the lock until told. */
void case_lock_timeout(void)
{
	int held[2], go[2];
	char c, got[64];
	if (pipe(held) < 0 || pipe(go) < 0)
		exit(1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		int rc = fd < 0 ? -1 : fcntl(fd, F_SETLK, &whole);
		alarm(20); /* a library that never leaves the wait fails, not hangs */
		if (write(held[1], "h", 1) != 1 || rc < 0)
			_exit(2);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 3);
	}
	if (read(held[0], &c, 1) != 1)
		exit(1);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		exit(1);
	put(fd, "before|");
	struct sigaction sa = {.sa_handler = jump_out, .sa_flags = SA_RESTART};
	struct flock mine = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	struct itimerval once = {.it_value = {0, 20000}};
	int rc = -2;
	sigaction(SIGALRM, &sa, NULL);
	if (sigsetjmp(jump_back, 1) == 0) {
		setitimer(ITIMER_REAL, &once, NULL);
		rc = fcntl(fd, F_SETLKW, &mine);
	}
	printf("lock wait: %d (-2: left by the alarm's jump)\n", rc);
	put(fd, "after|");
	ssize_t n = pread(fd, got, sizeof got, 0);
	printf("read back: %.*s\n", n > 0 ? (int)n : 0, got);
	ssize_t told = write(go[1], "g", 1);
	printf("told: %zd; holder: %d\n", told, waitpid(pid, NULL, 0) == pid);
	exit(close(fd) < 0 ? 4 : 0);
}

/* A file another process grows and cuts while this one holds it open and
 * cached, as tail -f follows a log: fstat's size, reads at the old end,
 * and reads after the cut are the kernel's.  The other process acts when
 * told through a pipe, and says when it is done. */
void case_grown_behind(void)
{
	int go[2], done[2];
	if (pipe(go) < 0 || pipe(done) < 0)
		exit(1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		while (read(go[0], &c, 1) == 1) {
			int fd = open(path, O_WRONLY | O_APPEND);
			if (c == 'a')
				put(fd, "appended by another|");
			else
				printf("cut: %d\n", ftruncate(fd, 4));
			close(fd);
			fflush(stdout);
			(void)!write(done[1], &c, 1);
		}
		_exit(0);
	}
	char buf[128], c;
	struct stat st;
	close(go[0]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "mine|");
	ssize_t got = read(fd, buf, sizeof buf);
	printf("read at my end: %zd\n", got);
	for (int round = 0; round < 3; round++) {
		char what = round == 2 ? 'c' : 'a';
		(void)!write(go[1], &what, 1);
		if (read(done[0], &c, 1) != 1)
			exit(1);
		got = fstat(fd, &st);
		printf("fstat: %zd, size %lld\n", got, (long long)st.st_size);
		got = read(fd, buf, sizeof buf);
		printf("read on: %zd [%.*s]\n", got, (int)(got > 0 ? got : 0), buf);
		got = pread(fd, buf, sizeof buf, 0);
		printf("pread from 0: %zd [%.*s]\n", got, (int)(got > 0 ? got : 0), buf);
		printf("end: %lld\n", (long long)lseek(fd, 0, SEEK_END));
		fflush(stdout);
	}
	close(go[1]);
	waitpid(pid, NULL, 0);
	put(fd, "|mine again");
	close(fd);
	exit(0);
}

/* The reader's side: this process holds x.dat open and cached, another
 * one changes a byte of it, then lets this one know (data through a pipe
 * or a socket, a signal waited for, its exit waited for, or nothing ffio
 * sees followed by a sleep of a millisecond or more, or by a second open
 * of the file).  Each read after that shows the kernel's bytes.  A helper
 * forked first changes the file when told; the waits for an exit run this
 * program again (trans_cases poke PATH N: byte N becomes 'A' + N). */
static void on_usr2(int sig)
{
	(void)sig;
}

int poke(const char *file, int at)
{
	char c = (char)('A' + at);
	int fd = open(file, O_WRONLY);
	return fd < 0 || pwrite(fd, &c, 1, at) != 1 || close(fd) < 0 ? -1 : 0;
}

static ssize_t raw_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

void case_heard(void)
{
	static const char *const how[] = {
		"read",	 "readv", "recv",     "recvfrom",	 "recvmsg",	 "recvmmsg",	 "sigwaitinfo",
		"sigwait", "sigtimedwait", "sigsuspend", "nanosleep", "clock_nanosleep", "usleep", "sleep",
		"waitpid", "wait4",	     "waitid",	 "wait",	  "system",	 "pclose",	 "a second open"};
	enum { HOW = sizeof how / sizeof how[0], SPAWNED = 14, OPENED = 20 };
	int go[2], up[2], sv[2];
	sigset_t usr, none;
	struct sigaction sa = {.sa_handler = on_usr2};
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	sigemptyset(&none);
	if (pipe(go) < 0 || pipe(up) < 0 || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0 ||
	    sigprocmask(SIG_BLOCK, &usr, NULL) < 0 || sigaction(SIGUSR2, &sa, NULL) < 0) {
		printf("set-up: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	pid_t helper = fork();
	if (helper == 0) {
		unsigned char i;
		char c = 'm';
		close(go[1]);
		while (raw_read(go[0], &i, 1) == 1) {
			if (poke(path, i) < 0)
				_exit(1);
			if (i == 6 || i == 7 || i == 8)
				kill_one(getppid(), SIGUSR1);
			else if (i == 9)
				kill_one(getppid(), SIGUSR2);
			else if (i >= 2 && i <= 5)
				(void)!send(sv[0], &c, 1, 0);
			else
				(void)!write(up[1], &c, 1);
		}
		_exit(0);
	}
	close(go[0]);
	char self[4096], cmd[2 * 4096 + 64], buf[64], c, n_arg[8];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	self[len > 0 ? len : 0] = '\0';
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	put(fd, "abcdefghijklmnopqrstuvwxyz");
	for (int i = 0; i < HOW; i++) {
		ssize_t got = pread(fd, buf, sizeof buf, 0); /* held by the cache */
		unsigned char k = (unsigned char)i;
		struct iovec iov = {&c, 1};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
		struct mmsghdr mm = {.msg_hdr = msg};
		struct timespec ms = {0, 1000000}, limit = {10, 0};
		snprintf(n_arg, sizeof n_arg, "%d", i);
		char *argv[] = {self, "poke", path, n_arg, NULL};
		pid_t pid = 0;
		if (i >= SPAWNED && i < SPAWNED + 4 && posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
			printf("posix_spawn failed\n");
		else if (i < SPAWNED || i == OPENED)
			(void)!write(go[1], &k, 1);
		switch (i) {
		case 0: got = read(up[0], &c, 1); break;
		case 1: got = readv(up[0], &iov, 1); break;
		case 2: got = recv(sv[1], &c, 1, 0); break;
		case 3: got = recvfrom(sv[1], &c, 1, 0, NULL, NULL); break;
		case 4: got = recvmsg(sv[1], &msg, 0); break;
		case 5: got = recvmmsg(sv[1], &mm, 1, 0, NULL); break;
		case 6: got = sigwaitinfo(&usr, NULL); break;
		case 7: { int sig; got = sigwait(&usr, &sig) == 0 ? sig : -1; } break;
		case 8: got = sigtimedwait(&usr, NULL, &limit); break;
		case 9: got = sigsuspend(&none); break;
		case 10: got = raw_read(up[0], &c, 1) + nanosleep(&ms, NULL); break;
		case 11: got = raw_read(up[0], &c, 1) + clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL); break;
		case 12: got = raw_read(up[0], &c, 1) + usleep(1000); break;
		case 13: got = raw_read(up[0], &c, 1) + (ssize_t)sleep(1); break;
		case 14: got = waitpid(pid, NULL, 0) == pid; break;
		case 15: got = wait4(pid, NULL, 0, NULL) == pid; break;
		case 16: { siginfo_t si; got = waitid(P_PID, (id_t)pid, &si, WEXITED); } break;
		case 17: got = wait(NULL) == pid; break;
		case 18:
			snprintf(cmd, sizeof cmd, "'%s' poke '%s' %d", self, path, i);
			got = system(cmd);
			break;
		case 19: {
			snprintf(cmd, sizeof cmd, "'%s' poke '%s' %d", self, path, i);
			FILE *p = popen(cmd, "r");
			got = p ? pclose(p) : -1;
		} break;
		case 20: {
			got = raw_read(up[0], &c, 1);
			int again = open(path, O_RDONLY);
			ssize_t n = pread(again, buf, sizeof buf, 0);
			printf("second descriptor: %zd [%.*s]\n", n, (int)(n > 0 ? n : 0), buf);
			close(again);
		} break;
		}
		ssize_t n = pread(fd, buf, sizeof buf, 0);
		printf("after %s (%zd): %zd [%.*s]\n", how[i], got, n, (int)(n > 0 ? n : 0), buf);
		fflush(stdout);
	}
	close(go[1]);
	waitpid(helper, NULL, 0);
	close(fd);
	exit(0);
}

/* A write past the end of the file, then another process writes the bytes
 * before it and says so through a pipe.  Since the last message it heard
 * (after its open) this process read nothing, only learnt the file's size
 * at its write, and told nothing: the other process learns of the write
 * through shared memory, as MPI's ranks do (no system call).  Its read of
 * the whole range then shows the other process's bytes, not the zeros
 * that the end of the file implied when it wrote. */
void case_heard_past_end(void)
{
	int up[2];
	char c = 'x';
	volatile int *written = mmap(NULL, sizeof *written, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (written == MAP_FAILED || pipe(up) < 0) {
		printf("set-up: %s\n", strerror(errno));
		exit(1);
	}
	fflush(stdout);
	pid_t helper = fork();
	if (helper == 0) {
		(void)!write(up[1], &c, 1); /* heard after the open */
		while (!__atomic_load_n(written, __ATOMIC_ACQUIRE))
			sched_yield();
		int fd = open(path, O_WRONLY);
		if (fd < 0 || pwrite(fd, "written by another", 18, 0) != 18 || close(fd) < 0)
			_exit(1);
		(void)!write(up[1], &c, 1);
		_exit(0);
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	printf("heard first: %zd\n", read(up[0], &c, 1));
	ssize_t put_n = pwrite(fd, "mine", 4, 100);
	__atomic_store_n(written, 1, __ATOMIC_RELEASE);
	ssize_t heard = read(up[0], &c, 1);
	printf("pwrite at 100: %zd\nheard: %zd\n", put_n, heard);
	char buf[128];
	ssize_t got = pread(fd, buf, sizeof buf, 0);
	printf("pread from 0: %zd [", got);
	for (ssize_t i = 0; i < got; i++)
		putchar(buf[i] ? buf[i] : '.');
	printf("]\n");
	waitpid(helper, NULL, 0);
	close(fd);
	exit(0);
}
