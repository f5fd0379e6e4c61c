/* t/adio_aio.c -- POSIX AIO on files ffio manages (libffio/aio.c): AIO
 * reads see cached writes, AIO writes are seen by cached reads and reach
 * the file at fsync, results come back through aio_error/aio_return/
 * aio_suspend, notifications (SIGEV_SIGNAL, SIGEV_THREAD) are delivered,
 * lio_listio works, errors of write-behind come back through aio_fsync,
 * and unmanaged descriptors still use the C library's AIO. */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ffio.h"
#include "tap.h"

static char path[] = "/tmp/ffio-adio-aio.XXXXXX";

static void fill(unsigned char *buf, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

static struct aiocb cb_for(int fd, void *buf, size_t n, off_t off)
{
	struct aiocb cb;
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_buf = buf;
	cb.aio_nbytes = n;
	cb.aio_offset = off;
	cb.aio_sigevent.sigev_notify = SIGEV_NONE;
	return cb;
}

/* Wait for cb (suspend until done), then its result. */
static ssize_t wait_for(struct aiocb *cb)
{
	const struct aiocb *list[1] = { cb };
	struct timespec ts = { .tv_sec = 10 };
	while (aio_error(cb) == EINPROGRESS)
		if (aio_suspend(list, 1, &ts) < 0 && errno != EINTR)
			return -1000 - errno;
	return aio_return(cb);
}

static sem_t thread_sem;
static int thread_value;

static void on_done(union sigval v)
{
	thread_value = v.sival_int;
	sem_post(&thread_sem);
}

static int raw_equal(int rawfd, const unsigned char *want, size_t n, off_t off)
{
	unsigned char *got = malloc(n);
	if (!got)
		return 0;
	ssize_t r = pread(rawfd, got, n, off);
	int same = r == (ssize_t)n && memcmp(got, want, n) == 0;
	free(got);
	return same;
}

int main(void)
{
	unsigned char a[1000], b[3000], c[777], back[3000];
	int tmp = mkstemp(path);
	if (tmp < 0)
		tap_skip_all("cannot create a temporary file");
	close(tmp);
	tap_plan(26);
	fill(a, sizeof a, 1);
	fill(b, sizeof b, 2);
	fill(c, sizeof c, 3);

	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:4k:8:1");
	tap_ok(fd >= 0 && ffio_is_managed(fd), "ffopen gives a managed descriptor");

	/* A cached write is seen by aio_read. */
	tap_is(ffpwrite(fd, a, sizeof a, 100), sizeof a, "cached write");
	struct aiocb cb = cb_for(fd, back, sizeof a, 100);
	tap_is(aio_read(&cb), 0, "aio_read submitted");
	tap_is(aio_error(&cb), 0, "aio_error: done");
	tap_is(aio_return(&cb), sizeof a, "aio_return: the byte count");
	tap_ok(memcmp(back, a, sizeof a) == 0, "aio_read sees the cached write");

	/* aio_write is seen by a cached read; aio_suspend returns at once. */
	cb = cb_for(fd, b, sizeof b, 5000);
	tap_is(aio_write(&cb), 0, "aio_write submitted");
	tap_is(wait_for(&cb), sizeof b, "aio_suspend/aio_return of the write");
	memset(back, 0, sizeof back);
	tap_is(ffpread(fd, back, sizeof b, 5000), sizeof b, "cached read");
	tap_ok(memcmp(back, b, sizeof b) == 0, "the cached read sees the aio_write");

	/* SIGEV_SIGNAL: a queued signal with SI_ASYNCIO and the value. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	cb = cb_for(fd, c, sizeof c, 9000);
	cb.aio_sigevent.sigev_notify = SIGEV_SIGNAL;
	cb.aio_sigevent.sigev_signo = SIGRTMIN + 1;
	cb.aio_sigevent.sigev_value.sival_int = 42;
	tap_is(aio_write(&cb), 0, "aio_write with SIGEV_SIGNAL");
	siginfo_t si;
	struct timespec ts = { .tv_sec = 5 };
	int sig = sigtimedwait(&set, &si, &ts);
	tap_ok(sig == SIGRTMIN + 1 && si.si_code == SI_ASYNCIO && si.si_value.sival_int == 42,
	       "the signal arrives with SI_ASYNCIO and the value");
	tap_is(aio_return(&cb), sizeof c, "its aio_return");

	/* SIGEV_THREAD: the function runs in a thread with the value. */
	sem_init(&thread_sem, 0, 0);
	cb = cb_for(fd, back, sizeof c, 9000);
	cb.aio_sigevent.sigev_notify = SIGEV_THREAD;
	cb.aio_sigevent.sigev_notify_function = on_done;
	cb.aio_sigevent.sigev_value.sival_int = 7;
	tap_is(aio_read(&cb), 0, "aio_read with SIGEV_THREAD");
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	tap_ok(sem_timedwait(&thread_sem, &until) == 0 && thread_value == 7,
	       "the notification thread runs with the value");
	tap_ok(aio_return(&cb) == sizeof c && memcmp(back, c, sizeof c) == 0,
	       "SIGEV_THREAD read returns the data");

	/* lio_listio: a write and a read in one list. */
	struct aiocb w = cb_for(fd, c, sizeof c, 20000), r = cb_for(fd, back, sizeof a, 100);
	w.aio_lio_opcode = LIO_WRITE;
	r.aio_lio_opcode = LIO_READ;
	struct aiocb *list[3] = { &w, NULL, &r };
	memset(back, 0, sizeof back);
	tap_is(lio_listio(LIO_WAIT, list, 3, NULL), 0, "lio_listio(LIO_WAIT)");
	tap_ok(aio_return(&w) == sizeof c && aio_return(&r) == sizeof a &&
	       memcmp(back, a, sizeof a) == 0, "lio_listio results");

	/* aio_fsync: everything reaches the file. */
	cb = cb_for(fd, NULL, 0, 0);
	tap_is(aio_fsync(O_SYNC, &cb), 0, "aio_fsync submitted");
	tap_is(wait_for(&cb), 0, "aio_fsync done");
	int raw = open(path, O_RDONLY);
	tap_ok(raw >= 0 && raw_equal(raw, a, sizeof a, 100) && raw_equal(raw, b, sizeof b, 5000) &&
	       raw_equal(raw, c, sizeof c, 9000) && raw_equal(raw, c, sizeof c, 20000),
	       "the file holds every AIO and cached write after aio_fsync");
	tap_is(aio_cancel(fd, NULL), AIO_ALLDONE, "aio_cancel: nothing in flight");
	ffclose(fd);

	/* An unmanaged descriptor goes to the C library's AIO. */
	int rw = open(path, O_RDWR);
	cb = cb_for(rw, b, sizeof b, 30000);
	tap_ok(aio_write(&cb) == 0 && wait_for(&cb) == (ssize_t)sizeof b && raw_equal(rw, b, sizeof b, 30000),
	       "aio_write on an unmanaged descriptor");
	close(rw);
	if (raw >= 0)
		close(raw);

	/* A write-behind error comes back through aio_fsync. */
	fd = ffopen(path, O_RDWR, 0, "cache:4k:8:1, fault:write:ENOSPC:0");
	cb = cb_for(fd, a, sizeof a, 0);
	tap_ok(fd >= 0 && aio_write(&cb) == 0 && wait_for(&cb) == (ssize_t)sizeof a,
	       "aio_write into the cache over a failing file");
	cb = cb_for(fd, NULL, 0, 0);
	aio_fsync(O_SYNC, &cb);
	tap_ok(aio_error(&cb) == ENOSPC && aio_return(&cb) == -1, "aio_fsync reports ENOSPC");
	ffclose(fd);

	/* aio_read on a write-only file fails. */
	fd = ffopen(path, O_WRONLY, 0, "cache:4k:8:1");
	cb = cb_for(fd, back, 10, 0);
	errno = 0;
	tap_ok(aio_read(&cb) == -1 && errno == EBADF, "aio_read on a write-only file: EBADF");
	ffclose(fd);
	unlink(path);
	return tap_done();
}
