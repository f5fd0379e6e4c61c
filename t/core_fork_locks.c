/* t/core_fork_locks.c -- fork while other threads are inside ffio's
 * process-wide locks (the log, the buffer pool, the stacks given to
 * ffopen): the child must be able to take each of them.  A lock another
 * thread held at the fork would stay locked in the child for ever; the
 * child's alarm then kills it and the fork is counted as hung. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio_ext.h"
#include "tap.h"

#define FORKS 100

static atomic_int stop;
static char path[300];

/* Each thread works one lock as hard as it can. */
static void *logger(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		ffio_log("a line from a thread");
	return NULL;
}

static void *allocator(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *p = ffio_buf_alloc(65536, 4096);
		if (p)
			ffio_buf_free(p, 65536);
	}
	return NULL;
}

static void *opener(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = ffopen(path, O_RDONLY, 0, "cache:4k:2:0");
		if (fd >= 0)
			ffclose(fd);
	}
	return NULL;
}

/* In the child: each lock once, within the alarm. */
static void child(void)
{
	alarm(5);
	ffio_log("the child logs");
	void *p = ffio_buf_alloc(65536, 4096);
	if (!p)
		_exit(2);
	ffio_buf_free(p, 65536);
	int fd = ffopen(path, O_RDONLY, 0, "cache:4k:2:0");
	if (fd < 0 || ffclose(fd) < 0)
		_exit(3);
	_exit(0);
}

int main(void)
{
	char dir[] = "/tmp/ffio-fork-locks-XXXXXX";
	char log[320];
	pthread_t t[3];
	int hung = 0, failed = 0, fd;

	if (!mkdtemp(dir))
		tap_skip_all("cannot make a scratch directory");
	snprintf(path, sizeof path, "%s/f.dat", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	setenv("FF_IO_LOGFILE", log, 1);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 || write(fd, "data", 4) != 4 ||
	    close(fd) < 0)
		tap_skip_all("cannot make the scratch file");
	tap_plan(2);
	if (pthread_create(&t[0], NULL, logger, NULL) || pthread_create(&t[1], NULL, allocator, NULL) ||
	    pthread_create(&t[2], NULL, opener, NULL)) {
		tap_ok(0, "threads started");
		return 1;
	}
	for (int i = 0; i < FORKS; i++) {
		pid_t pid = fork();
		int status;
		if (pid == 0)
			child();
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			failed++;
			continue;
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
			hung++;
			break; /* one is enough, and each costs the alarm's time */
		}
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	tap_is(hung, 0, "children that found a lock held for ever, of %d forks", FORKS);
	tap_is(failed, 0, "children that failed otherwise");
	unlink(path);
	unlink(log);
	rmdir(dir);
	return tap_done();
}
