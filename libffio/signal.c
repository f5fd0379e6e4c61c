/* libffio/signal.c -- the opt-in flush on SIGTERM and SIGINT
 * (FF_IO_FLUSH_ON_SIGNAL=1).
 *
 * Flushing cannot be done in a signal handler: it takes locks and calls
 * into the layers.  So the handler only writes the signal's number into a
 * pipe (async-signal-safe); a flusher thread waits on that pipe, flushes
 * every open file (ffio_flush_all, taking the locks the ordinary way: a
 * thread interrupted while holding one gets it back as soon as the handler
 * returns), then restores the signal's original disposition (the default:
 * handlers are only installed where the program had none) and raises it
 * again, so the process ends by that signal as it would have without ffio.
 *
 * A program that installs its own handler replaces ours; it then decides
 * what happens (an exit() flushes as usual).  After fork the child gets a
 * pipe and a flusher thread of its own: on the parent's pipe, a signal to
 * the child could wake the parent's flusher, which would flush the parent
 * and end it by the child's signal, leaving the child waiting for ever.
 * Not inside fork, where a new thread can wait for ever on a lock of the
 * memory allocator (AddressSanitizer's): the child's signals act as usual
 * (files open at fork pass through, so it has nothing cached) until it
 * caches a file of its own (ffio_signal_file_opened).  The data is safe
 * without it (the guardian, libffio/guard, writes back what a process
 * that dies by any signal left cached); with it, the process writes its
 * data itself before it ends.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"

static const int flush_signals[] = {SIGTERM, SIGINT};
#define NSIGNALS (sizeof flush_signals / sizeof flush_signals[0])

static int sig_pipe[2] = {-1, -1};
static int child_waiting;              /* forked child: flush on signals from its first cached file */
static int installed[NSIGNALS];        /* our handler is in place for it */
static struct sigaction original[NSIGNALS];

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t r;

	do
		r = ffio_real.write(sig_pipe[1], &b, 1);
	while (r < 0 && errno == EINTR);
	errno = saved;
}

static void restore(size_t i)
{
	if (installed[i]) {
		sigaction(flush_signals[i], &original[i], NULL);
		installed[i] = 0;
	}
}

static void restore_all(void)
{
	for (size_t i = 0; i < NSIGNALS; i++)
		restore(i);
}

static void *flusher(void *arg)
{
	unsigned char b;
	ssize_t r;
	sigset_t set;

	(void)arg;
	for (;;) {
		do
			r = ffio_real.read(sig_pipe[0], &b, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			return NULL;
		int err = ffio_flush_all();
		if (err < 0)
			ffio_log("signal %d: flushing open files failed: %s", b, strerror(-err));
		for (size_t i = 0; i < NSIGNALS; i++)
			if (flush_signals[i] == b)
				restore(i);
		sigemptyset(&set);
		sigaddset(&set, b);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(b);
	}
}

/* The flusher thread blocks every signal, so handlers run elsewhere. */
static int start_flusher(void)
{
	pthread_t t;
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if ((err = pthread_attr_init(&attr)) != 0)
		return -err;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, flusher, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -err;
}

/* A pipe of our own for the handler and the flusher (its ends ffio's). */
static int open_pipe(void)
{
	if (ffio_real.pipe2(sig_pipe, O_CLOEXEC) < 0)
		return -errno;
	sig_pipe[0] = ffio_fd_own(sig_pipe[0]);
	sig_pipe[1] = ffio_fd_own(sig_pipe[1]);
	return 0;
}

static void close_pipe(void)
{
	for (int i = 0; i < 2; i++) {
		if (sig_pipe[i] < 0)
			continue;
		ffio_fd_disown(sig_pipe[i]);
		ffio_real.close(sig_pipe[i]);
		sig_pipe[i] = -1;
	}
}

/* The pipe and the flusher thread. */
static int start(void)
{
	int err;

	if ((err = open_pipe()) < 0)
		return err;
	if ((err = start_flusher()) < 0)
		close_pipe();
	return err;
}

/* Our handler where the program left the signal at its default action. */
static void install_handlers(void)
{
	for (size_t i = 0; i < NSIGNALS; i++) {
		struct sigaction sa;
		if (sigaction(flush_signals[i], NULL, &original[i]) < 0)
			continue;
		if ((original[i].sa_flags & SA_SIGINFO) || original[i].sa_handler != SIG_DFL)
			continue; /* ignored, or the program's own handler */
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(flush_signals[i], &sa, NULL) == 0)
			installed[i] = 1;
	}
}

/* In the child after fork: the parent's flusher thread is not here, and
 * the pipe is the parent's.  Both come back with the first file the child
 * caches; meanwhile its signals act as usual. */
static void signal_fork_child(void)
{
	int any = 0;

	for (size_t i = 0; i < NSIGNALS; i++)
		any |= installed[i];
	close_pipe();
	restore_all();
	__atomic_store_n(&child_waiting, any, __ATOMIC_RELEASE);
}

void ffio_signal_file_opened(void)
{
	int err;

	if (!__atomic_load_n(&child_waiting, __ATOMIC_ACQUIRE) ||
	    !__atomic_exchange_n(&child_waiting, 0, __ATOMIC_ACQ_REL))
		return;
	if ((err = start()) < 0) {
		ffio_log("FF_IO_FLUSH_ON_SIGNAL: no flusher after fork (%s); signals act as usual",
			 strerror(-err));
		return;
	}
	install_handlers();
}

void ffio_signal_init(void)
{
	int err;

	if (!ffio_env_flag(FFIO_ENV_FLUSH_ON_SIGNAL))
		return;
	if ((err = start()) < 0) {
		ffio_log("FF_IO_FLUSH_ON_SIGNAL: cannot start the flusher: %s", strerror(-err));
		return;
	}
	install_handlers();
	ffio_atfork(NULL, NULL, signal_fork_child);
}
