/* libffio/log.c -- diagnostics and summaries: FF_IO_LOGFILE (stderr,
 * stdout, a path; '+' appends; %r = MPI rank, %p = pid), one write(2) per
 * message so that lines of several processes do not interleave. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"

static int log_fd = -1;          /* -1: not opened yet */
static pid_t log_pid;            /* the process that opened log_fd */
static int log_reopen;           /* given up under pressure: append when opened again */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void log_fork_safe(void)
{
	ffio_atfork_hold(&log_lock, FFIO_LOCK_LOG);
}


/* Expand %r and %p of a FF_IO_LOGFILE value into buf; -ENAMETOOLONG when
 * it does not fit (a cut path would name another file). */
static int expand_path(const char *in, char *buf, size_t len)
{
	size_t o = 0;

	for (; *in; in++) {
		if (in[0] == '%' && (in[1] == 'r' || in[1] == 'p')) {
			long v = in[1] == 'r' ? ffio_env_rank() : (long)getpid();
			int n = snprintf(buf + o, len - o, "%ld", v < 0 ? 0 : v);
			if (n < 0 || (size_t)n >= len - o)
				return -ENAMETOOLONG;
			o += (size_t)n;
			in++;
		} else {
			if (o + 1 >= len)
				return -ENAMETOOLONG;
			buf[o++] = *in;
		}
	}
	buf[o] = '\0';
	return 0;
}

/* Open the log named by FF_IO_LOGFILE.  A file is created fresh (O_EXCL
 * after removing a regular file we may replace) and never followed through
 * a symlink; '+' appends (O_APPEND, O_NOFOLLOW as well).  For another
 * process (lent): where the kernel puts it (the caller closes it soon: not
 * one of ffio's own), always appending (the other process writes when
 * this one may have written too). */
static int open_log_as(int lent)
{
	/* log_lock is held: the buffers are static, off the stack of a signal
	 * handler that may be the first to log */
	static char path[4096], msg[4200];
	const char *v = ffio_env(FFIO_ENV_LOGFILE);
	int append = 0, fd;

	if (!v || strcmp(v, "stderr") == 0)
		return 2;
	if (strcmp(v, "stdout") == 0)
		return 1;
	if (*v == '+') {
		append = 1;
		v++;
	}
	ffio_real_init();
	if (expand_path(v, path, sizeof path) < 0) {
		static const char msg[] = "ffio: FF_IO_LOGFILE names a path too long; logging to stderr\n";
		(void)!ffio_real.write(2, msg, sizeof msg - 1);
		return 2;
	}
	int how = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append || log_reopen ? O_APPEND : O_TRUNC);
	if (lent)
		return ffio_real.open(path, how | O_APPEND, 0644);
	fd = ffio_fd_own(ffio_real.open(path, how, 0644));
	if (fd < 0) {
		int n = snprintf(msg, sizeof msg, "ffio: cannot open FF_IO_LOGFILE %s: %s; logging to stderr\n",
				 path, strerror(errno));
		if (n > 0)
			(void)!ffio_real.write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
		return 2;
	}
	return fd;
}

static int open_log(void)
{
	return open_log_as(0);
}

/* log_fd open for this process (log_lock held). */
static void log_ready(void)
{
	if (log_fd >= 0 && log_pid == getpid())
		return;
	/* A forked child with a %p log gets its own file. */
	if (log_fd > 2 && log_pid != getpid()) {
		const char *v = ffio_env(FFIO_ENV_LOGFILE);
		if (!v || !strstr(v, "%p"))
			goto keep;
		ffio_fd_disown(log_fd);
		ffio_real.close(log_fd);
	}
	log_fd = open_log();
keep:
	log_pid = getpid();
}

void ffio_log_raw(const char *text, size_t len)
{
	ffio_real_init();
	ffio_in_lib++;
	pthread_mutex_lock(&log_lock);
	log_ready();
	while (len > 0) {
		ssize_t n = ffio_real.write(log_fd, text, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		text += n;
		len -= (size_t)n;
	}
	pthread_mutex_unlock(&log_lock);
	ffio_in_lib--;
}

int ffio_log_dup(void)
{
	int fd;

	ffio_real_init();
	ffio_in_lib++;
	pthread_mutex_lock(&log_lock);
	/* A log file not open yet is not opened for this process: its
	 * descriptor would be one of ffio's own, taken from the program's
	 * (fdtable.c) for a log the process may never write. */
	if (log_fd >= 0 && log_pid == getpid())
		fd = ffio_real.fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
	else if ((fd = open_log_as(1)) <= 2)
		fd = fd < 0 ? fd : ffio_real.fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else /* made fresh: what this process writes later joins it */
		log_reopen = 1;
	if (fd < 0)
		fd = -errno;
	pthread_mutex_unlock(&log_lock);
	ffio_in_lib--;
	return fd;
}

int ffio_log_release(void)
{
	int freed = 0;
	pthread_mutex_lock(&log_lock);
	if (log_fd > 2 && log_pid == getpid()) {
		ffio_fd_disown(log_fd);
		(void)ffio_real.close(log_fd);
		log_fd = -1;
		log_reopen = 1;
		freed = 1;
	}
	pthread_mutex_unlock(&log_lock);
	return freed;
}

static void vlog(const char *fmt, va_list ap)
{
	char buf[2048];
	int saved = errno;
	int n = snprintf(buf, sizeof buf, "ffio: ");
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	size_t len;

	if (m < 0)
		m = 0;
	len = (size_t)n + (size_t)m;
	if (len > sizeof buf - 2)
		len = sizeof buf - 2;
	if (len == 0 || buf[len - 1] != '\n')
		buf[len++] = '\n';
	ffio_log_raw(buf, len);
	errno = saved;
}

void ffio_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void ffio_log_once(int *key, const char *fmt, ...)
{
	va_list ap;
	if (__atomic_exchange_n(key, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void ffio_layer_note(struct ffio_layer *l, const char *fmt, ...)
{
	struct ffio_file *f = l->file;
	va_list ap;

	if (!f)
		return;
	struct ffio_note *n = &f->notes[f->nnotes < FFIO_NOTES ? f->nnotes : FFIO_NOTES - 1];
	f->nnotes++;
	n->layer = l->index;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof n->text, fmt, ap);
	va_end(ap);
}

void ffio_layer_label(const struct ffio_layer *l, char *buf, size_t len)
{
	const struct ffio_file *f = l->file;
	const char *pattern = f && f->entry ? f->entry->pattern : "(direct)";
	int n = snprintf(buf, len, "%s[%d] of %s", l->ops->name, l->index, pattern);

	if (n < 0 || (size_t)n >= len)
		return;
	if (l->below && l->index > 0) {
		/* Name the neighbours: "(below cache, above sys)". */
		const struct ffio_layer *up = f->top;
		while (up && up->below != l)
			up = up->below;
		snprintf(buf + n, len - (size_t)n, " (below %s, above %s)",
			 up ? up->ops->name : "?", l->below->ops->name);
	} else if (l->below) {
		snprintf(buf + n, len - (size_t)n, " (above %s)", l->below->ops->name);
	} else if (l->index > 0) {
		const struct ffio_layer *up = f->top;
		while (up && up->below != l)
			up = up->below;
		snprintf(buf + n, len - (size_t)n, " (below %s)", up ? up->ops->name : "?");
	}
}
