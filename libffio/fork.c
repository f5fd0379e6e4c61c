/* libffio/fork.c -- the one registry of what ffio does around fork(): the
 * files first (each passes through to the kernel, see file.c), then the
 * handlers other parts register (ffio_atfork), then the process-wide locks
 * held across the fork (ffio_atfork_hold), so that the child finds nothing
 * half-changed.  After the fork, in both processes: the locks released,
 * the handlers in reverse order, the files.  _Fork, which runs no
 * pthread_atfork handlers, calls these itself (process.c). */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ffio-internal.h"

#define MAX_FORK_HANDLERS 8
static struct {
	void (*prepare)(void), (*parent)(void), (*child)(void);
} handlers[MAX_FORK_HANDLERS];
static int nhandlers;
static pthread_mutex_t *held[FFIO_LOCK_RANKS];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER; /* after the files' locks */

void ffio_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	pthread_mutex_lock(&registry_lock);
	if (nhandlers == MAX_FORK_HANDLERS) {
		ffio_log("too many fork handlers");
		abort();
	}
	handlers[nhandlers].prepare = prepare;
	handlers[nhandlers].parent = parent;
	handlers[nhandlers].child = child;
	nhandlers++;
	pthread_mutex_unlock(&registry_lock);
}

void ffio_atfork_hold(pthread_mutex_t *lock, enum ffio_lock_rank rank)
{
	pthread_mutex_lock(&registry_lock);
	held[rank] = lock;
	pthread_mutex_unlock(&registry_lock);
}

void ffio_fork_prepare(void)
{
	ffio_files_fork_prepare();
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < nhandlers; i++)
		if (handlers[i].prepare)
			handlers[i].prepare();
	for (int r = 0; r < FFIO_LOCK_RANKS; r++)
		if (held[r])
			pthread_mutex_lock(held[r]);
}

static void fork_after(int child)
{
	for (int r = FFIO_LOCK_RANKS - 1; r >= 0; r--)
		if (held[r])
			pthread_mutex_unlock(held[r]);
	for (int i = nhandlers - 1; i >= 0; i--) {
		void (*h)(void) = child ? handlers[i].child : handlers[i].parent;
		if (h)
			h();
	}
	pthread_mutex_unlock(&registry_lock);
	ffio_files_fork_after();
}

/* A handler that waited through the fork (handlers.c) runs in the parent
 * once the locks are released; the child never got the signal. */
void ffio_fork_parent(void)
{
	fork_after(0);
	if (ffio_in_lib == 0)
		ffio_signal_run_waiting();
}

void ffio_fork_child(void)
{
	ffio_pid = getpid();
	ffio_signal_forget_waiting();
	fork_after(1);
}
