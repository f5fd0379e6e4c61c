/* t/core_heard.c -- which calls are messages heard (libffio/coherence.c):
 * after one, the file's clean cached data is dropped and the next read
 * shows what another writer put there; after anything else the cache
 * keeps serving what it read.  The other writer is the kernel alone (raw
 * system calls between two reads), so each check is one call: a read of
 * a pipe, a socket, the end of a sleep (of 1 ms, or shorter a millisecond
 * after the last) or of a wait, a wait on a shared semaphore, drop; a
 * read of /dev/zero, /dev/urandom or a regular file, a pipe read inside a
 * signal handler, and a wait on a process-private semaphore, keep; what ffio learnt of a descriptor number (not a
 * channel) ends when the number is closed (close, fclose, dup2 onto it). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

extern char **environ;
static char path[64], other[64];
static int ff, p[2];
static char round_byte = 'A';

/* The kernel's bytes change to the next letter; what ffio reads then. */
static char change_then(void (*hear)(void))
{
	char now[4], got[4] = "?";
	round_byte++;
	memset(now, round_byte, sizeof now);
	if (kernel_pwrite(path, now, sizeof now, 0) != (ssize_t)sizeof now)
		return '!';
	hear();
	if (ffpread(ff, got, sizeof got, 0) != (ssize_t)sizeof got)
		return '?';
	return got[0];
}

static void read_of(const char *dev)
{
	char c;
	int fd = open(dev, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1)
		tap_diag("%s: no byte read", dev);
	close(fd);
}

static void zero(void) { read_of("/dev/zero"); }
static void urandom(void) { read_of("/dev/urandom"); }
static void regular(void) { read_of(other); }

static void pipe_read(void)
{
	char c = 'm';
	if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
		tap_diag("pipe: no byte");
}

static void socket_recv(void)
{
	int sv[2];
	char c = 'm';
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || send(sv[0], &c, 1, 0) != 1 ||
	    recv(sv[1], &c, 1, 0) != 1)
		tap_diag("socket: no byte");
	close(sv[0]);
	close(sv[1]);
}

static void ms_sleep(void)
{
	struct timespec t = {0, 1000000};
	nanosleep(&t, NULL);
}

/* A short sleep counts once the process heard nothing for a millisecond:
 * 2 ms pass first, slept with a raw system call ffio does not see. */
static void late_short_sleep(void)
{
	struct timespec t = {0, 2000000}, us = {0, 1000};
	syscall(SYS_nanosleep, &t, NULL);
	nanosleep(&us, NULL);
}

/* A number found to be a regular file, then closed (closer) and made a
 * pipe: its reads are heard again.  Each read of the regular file first
 * keeps what ffio learnt of the number. */
static int q[2];
static int regular_then_pipe(void (*closer)(int fd))
{
	char c = 'm';
	int fd = open(other, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		return -1;
	closer(fd);
	if (pipe(q) < 0)
		return -1;
	if (q[0] != fd && dup2(q[0], fd) != fd) /* the number again */
		return -1;
	return fd;
}

static void plain_close(int fd) { close(fd); }
static void stream_close(int fd) { fclose(fdopen(fd, "r")); }
static void no_close(int fd) { (void)fd; /* dup2 replaces it */ }

static void (*closer)(int);
static void reused_number(void)
{
	char c = 'm';
	int fd = regular_then_pipe(closer);
	if (fd < 0 || write(q[1], &c, 1) != 1 || read(fd, &c, 1) != 1)
		tap_diag("the reused number: no byte");
	if (fd != q[0])
		close(fd);
	close(q[0]);
	close(q[1]);
}

/* Spawned, not forked: a fork hands the file to the kernel by itself. */
static void child_waited(void)
{
	char *argv[] = {"true", NULL};
	pid_t pid;
	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) != 0 || waitpid(pid, NULL, 0) != pid)
		tap_diag("posix_spawnp/waitpid failed");
}

/* Semaphores: one other processes could hold (pshared, in memory they
 * could map), one private to the process.  Each wait takes the post just
 * made. */
static sem_t *shared_sem, private_sem;
static void sem_waited(void)
{
	if (sem_post(shared_sem) < 0 || sem_wait(shared_sem) < 0)
		tap_diag("sem_wait: %s", strerror(errno));
}
static void sem_trywaited(void)
{
	if (sem_post(shared_sem) < 0 || sem_trywait(shared_sem) < 0)
		tap_diag("sem_trywait: %s", strerror(errno));
}
static void sem_timedwaited(void)
{
	struct timespec limit;
	clock_gettime(CLOCK_REALTIME, &limit);
	limit.tv_sec += 10;
	if (sem_post(shared_sem) < 0 || sem_timedwait(shared_sem, &limit) < 0)
		tap_diag("sem_timedwait: %s", strerror(errno));
}
static void sem_clockwaited(void)
{
	struct timespec limit;
	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += 10;
	if (sem_post(shared_sem) < 0 || sem_clockwait(shared_sem, CLOCK_MONOTONIC, &limit) < 0)
		tap_diag("sem_clockwait: %s", strerror(errno));
}
static void private_sem_waited(void)
{
	if (sem_post(&private_sem) < 0 || sem_wait(&private_sem) < 0)
		tap_diag("private sem_wait: %s", strerror(errno));
}

/* The kernel's anonymous descriptors: a signal read from a signalfd and
 * an inotify event are messages; a timerfd's expiry is the passing of
 * time (heard as a sleep); an eventfd's count is not heard (ffio(7)). */
static void signalfd_read(void)
{
	struct signalfd_siginfo si;
	sigset_t s, was;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	int fd = sigprocmask(SIG_BLOCK, &s, &was) < 0 ? -1 : signalfd(-1, &s, SFD_CLOEXEC);
	if (fd < 0 || raise(SIGUSR2) != 0 || read(fd, &si, sizeof si) != (ssize_t)sizeof si)
		tap_diag("signalfd: %s", strerror(errno));
	close(fd);
	sigprocmask(SIG_SETMASK, &was, NULL);
}
static void inotify_read(void)
{
	char ev[sizeof(struct inotify_event) + 256];
	int fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, other, IN_ATTRIB) < 0 || utimensat(AT_FDCWD, other, NULL, 0) < 0 ||
	    read(fd, ev, sizeof ev) <= 0)
		tap_diag("inotify: %s", strerror(errno));
	close(fd);
}
static void timerfd_read(void)
{
	uint64_t n;
	struct itimerspec due = {.it_value = {0, 2000000}};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &due, NULL) < 0 || read(fd, &n, sizeof n) != (ssize_t)sizeof n)
		tap_diag("timerfd: %s", strerror(errno));
	close(fd);
}
static void eventfd_count_read(void)
{
	uint64_t n = 1;
	int fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0 || write(fd, &n, sizeof n) != (ssize_t)sizeof n || read(fd, &n, sizeof n) != (ssize_t)sizeof n)
		tap_diag("eventfd: %s", strerror(errno));
	close(fd);
}

static void on_usr1(int sig)
{
	(void)sig;
	pipe_read();
}

static void in_handler(void)
{
	raise(SIGUSR1);
}

int main(void)
{
	snprintf(path, sizeof path, "/tmp/ffio-core-heard-XXXXXX");
	snprintf(other, sizeof other, "/tmp/ffio-core-heard-XXXXXX");
	int tmp = mkstemp(path), tmp2 = mkstemp(other);
	struct sigaction sa = {.sa_handler = on_usr1};
	if (tmp < 0 || write(tmp, "AAAA", 4) != 4 || close(tmp) < 0 || tmp2 < 0 ||
	    write(tmp2, "other", 5) != 5 || close(tmp2) < 0 || pipe(p) < 0 ||
	    sigaction(SIGUSR1, &sa, NULL) < 0)
		return 99;
	shared_sem = mmap(NULL, sizeof *shared_sem, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_sem == MAP_FAILED || sem_init(shared_sem, 1, 0) < 0 || sem_init(&private_sem, 0, 0) < 0)
		return 99;
	tap_plan(23);
	ff = ffopen(path, O_RDWR, 0, "cache:4k:4:1");
	char first[4] = "";
	tap_ok(ff >= 0 && ffpread(ff, first, 4, 0) == 4 && first[0] == 'A', "AAAA read and cached");
	/* Not messages: the cache keeps its bytes (each round's letter is new). */
	tap_is(change_then(zero), 'A', "a read of /dev/zero keeps the cache");
	tap_is(change_then(urandom), 'A', "a read of /dev/urandom keeps the cache");
	tap_is(change_then(regular), 'A', "a read of a regular file keeps the cache");
	tap_is(change_then(in_handler), 'A', "a pipe read inside a signal handler keeps the cache");
	tap_is(change_then(private_sem_waited), 'A', "a wait on a process-private semaphore keeps the cache");
	tap_is(change_then(eventfd_count_read), 'A', "a read of an eventfd keeps the cache");
	/* Messages: the next read is the kernel's. */
	tap_is(change_then(pipe_read), 'H', "after a pipe read: the kernel's bytes");
	tap_is(change_then(socket_recv), 'I', "after recv on a socket: the kernel's bytes");
	tap_is(change_then(ms_sleep), 'J', "after a 1 ms nanosleep: the kernel's bytes");
	tap_is(change_then(late_short_sleep), 'K', "after a 1 us nanosleep, 2 ms after the last: the kernel's bytes");
	tap_is(change_then(child_waited), 'L', "after waitpid: the kernel's bytes");
	tap_is(change_then(sem_waited), 'M', "after sem_wait on a shared semaphore: the kernel's bytes");
	tap_is(change_then(sem_trywaited), 'N', "after sem_trywait on a shared semaphore: the kernel's bytes");
	tap_is(change_then(sem_timedwaited), 'O', "after sem_timedwait on a shared semaphore: the kernel's bytes");
	tap_is(change_then(sem_clockwaited), 'P', "after sem_clockwait on a shared semaphore: the kernel's bytes");
	tap_is(change_then(signalfd_read), 'Q', "after a read of a signalfd: the kernel's bytes");
	tap_is(change_then(inotify_read), 'R', "after a read of an inotify descriptor: the kernel's bytes");
	tap_is(change_then(timerfd_read), 'S', "after a read of a timerfd, 2 ms after the last: the kernel's bytes");
	/* What ffio learnt of a number ends with it. */
	closer = plain_close;
	tap_is(change_then(reused_number), 'T', "a regular file's number closed, then a pipe's: heard");
	closer = stream_close;
	tap_is(change_then(reused_number), 'U', "the same closed by fclose: heard");
	closer = no_close;
	tap_is(change_then(reused_number), 'V', "the same replaced by dup2: heard");
	tap_is(ffclose(ff), 0, "close");
	unlink(path);
	unlink(other);
	return tap_done();
}
