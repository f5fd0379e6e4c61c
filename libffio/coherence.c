/* libffio/coherence.c -- what other processes see of cached writes.
 *
 * The kernel shows a write to every process as soon as it returns.  A
 * write-behind cache cannot, so ffio makes the writes reach the kernel
 * before the process can tell another one that they were made:
 *
 *  - Messages.  Before data leaves the process through a pipe, a socket,
 *    a FIFO or a terminal (write, writev, send*, fflush of such a stream,
 *    sendfile and splice into one) and before a signal to another process
 *    (kill, killpg, sigqueue), every file's writes go to the kernel.  A
 *    worker that writes its output and then says "done" to its parent
 *    leaves the output where the parent reads it.  A flag set by each
 *    write into a stack makes this one load when nothing is unwritten.
 *    Not in a signal handler (handlers.c): a flush there could wait for
 *    a lock the interrupted code holds.
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

int ffio_unwritten_any;

/* ---- messages ----------------------------------------------------------- */

/* Every file's writes to the kernel, when some write entered a stack since
 * the last time.  Errors are the files' own, deferred to their next call. */
static void release(void)
{
	if (!__atomic_exchange_n(&ffio_unwritten_any, 0, __ATOMIC_ACQ_REL))
		return;
	int saved = errno;
	(void)IN_LIB(ffio_files_order(0));
	errno = saved;
}

/* A descriptor through which data reaches another process or a person:
 * not a regular file, a directory or a block device, nor /dev/null. */
static int is_channel(int fd)
{
	struct stat st;
	if (ffio_real.fstat(fd, &st) < 0)
		return 0;
	if (S_ISCHR(st.st_mode))
		return st.st_rdev != makedev(1, 3);
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

void ffio_tell(int fd)
{
	if (ffio_in_lib || ffio_in_handler || !ffio_real_ready() || !ffio_real.fstat)
		return;
	int saved = errno;
	if (fd == -1 || is_channel(fd))
		release();
	errno = saved;
}

/* A call on a socket, or a signal: a message whatever the descriptor. */
#define TELL_ANY()                                                               \
	do {                                                                     \
		if (unlikely(__atomic_load_n(&ffio_unwritten_any, __ATOMIC_RELAXED))) \
			ffio_tell(-1);                                           \
	} while (0)

FFIO_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	NEED(send, NOSYS);
	TELL_ANY();
	return ffio_real.send(fd, buf, n, flags);
}

FFIO_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG to,
			   socklen_t tolen)
{
	NEED(sendto, NOSYS);
	TELL_ANY();
	return ffio_real.sendto(fd, buf, n, flags, to, tolen);
}

FFIO_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	NEED(sendmsg, NOSYS);
	TELL_ANY();
	return ffio_real.sendmsg(fd, msg, flags);
}

FFIO_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned n, int flags)
{
	NEED(sendmmsg, NOSYS);
	TELL_ANY();
	return ffio_real.sendmmsg(fd, vec, n, flags);
}

/* A signal to another process; signal 0 only asks whether it exists. */
FFIO_EXPORT int kill(pid_t pid, int sig)
{
	NEED(kill, return (int)result(syscall(SYS_kill, pid, sig)));
	if (sig != 0 && pid != getpid())
		TELL_ANY();
	return ffio_real.kill(pid, sig);
}

FFIO_EXPORT int killpg(pid_t group, int sig)
{
	NEED(killpg, NOSYS);
	if (sig != 0)
		TELL_ANY();
	return ffio_real.killpg(group, sig);
}

FFIO_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	NEED(sigqueue, NOSYS);
	if (sig != 0 && pid != getpid())
		TELL_ANY();
	return ffio_real.sigqueue(pid, sig, value);
}

/* A stream's buffer reaches its descriptor inside the C library, where
 * ffio does not see the write: fflush is where a program sends it.
 * _IO_fflush is the C library's own name for it. */
int _IO_fflush(FILE *stream);

FFIO_EXPORT int fflush(FILE *stream)
{
	NEED(fflush, return _IO_fflush(stream));
	if (unlikely(__atomic_load_n(&ffio_unwritten_any, __ATOMIC_RELAXED)))
		ffio_tell(stream ? fileno(stream) : -1);
	return ffio_real.fflush(stream);
}
