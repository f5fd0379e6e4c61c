/* t/kill_safe.h -- signals for the tests to send to one process or one
 * group they made, never to more.  kill(2) takes 0 and -1 as "my process
 * group" and "every process I may signal": a pid read as 0 (a guardian
 * that never said READY, a record not yet written) would signal the test,
 * make and whatever runs make -- a CI runner dies of the test's SIGTERM.
 * So a pid or a group below 2, or the test's own group, is refused:
 * -1 with errno EINVAL, nothing sent. */
#ifndef FFIO_KILL_SAFE_H
#define FFIO_KILL_SAFE_H

#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

/* Signal process pid, which is not us. */
static inline int kill_one(pid_t pid, int sig)
{
	if (pid < 2 || pid == getpid()) {
		errno = EINVAL;
		return -1;
	}
	return kill(pid, sig);
}

/* Signal process group pgid, which is not ours. */
static inline int kill_group(pid_t pgid, int sig)
{
	if (pgid < 2 || pgid == getpgrp()) {
		errno = EINVAL;
		return -1;
	}
	return kill(-pgid, sig);
}

#endif
