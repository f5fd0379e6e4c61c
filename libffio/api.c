/* libffio/api.c -- the direct API of ffio.h (ffopen and friends): the POSIX
 * boundary for programs that name their layers themselves. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"

/* Stacks given to ffopen as text: parsed once per distinct call and kept
 * for the life of the process (the file refers to its entry). */
struct api_spec {
	struct api_spec *next;
	struct ffio_spec *spec;
	char text[];
};
static struct api_spec *api_specs;
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

static int set_errno(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

static struct ffio_entry *stack_for(const char *text, int *err)
{
	struct api_spec *a;
	char msg[1024];
	size_t len = strlen(text);

	pthread_mutex_lock(&api_lock);
	for (a = api_specs; a; a = a->next)
		if (strcmp(a->text, text) == 0)
			goto found;
	a = malloc(sizeof *a + len + 1);
	if (!a) {
		*err = -ENOMEM;
		goto out;
	}
	memcpy(a->text, text, len + 1);
	*err = ffio_spec_parse_stack(text, "ffopen", &a->spec, msg, sizeof msg);
	if (*err < 0) {
		ffio_log("%s", msg);
		free(a);
		a = NULL;
		goto out;
	}
	a->next = api_specs;
	api_specs = a;
found:
	*err = 0;
out:
	pthread_mutex_unlock(&api_lock);
	return a && a->spec->nentries > 0 ? &a->spec->entry[0] : NULL;
}

int ffopen(const char *path, int flags, mode_t mode, const char *spec)
{
	struct ffio_entry *e = NULL;
	struct ffio_file *f;
	int err = 0;

	ffio_init();
	if (!path) {
		errno = EFAULT;
		return -1;
	}
	if (spec) {
		e = stack_for(spec, &err);
	} else {
		if (ffio_global_spec)
			e = ffio_spec_match(ffio_global_spec, path);
		if (!e)
			e = stack_for("sys", &err);
	}
	if (!e)
		return set_errno(err ? err : -EINVAL);
	err = ffio_file_open(e, AT_FDCWD, path, flags, mode, &f);
	if (err < 0)
		return set_errno(err);
	return f->fd;
}

#define FILE_OR_EBADF(fd)                        \
	struct ffio_file *f = ffio_fd_get(fd);   \
	if (!f) {                                \
		errno = EBADF;                   \
		return -1;                       \
	}

ssize_t ffread(int fd, void *buf, size_t n)
{
	FILE_OR_EBADF(fd);
	struct iovec iov = {buf, n};
	ssize_t r = ffio_file_readv(f, &iov, 1);
	return r < 0 ? set_errno(r) : r;
}

ssize_t ffwrite(int fd, const void *buf, size_t n)
{
	FILE_OR_EBADF(fd);
	struct iovec iov = {(void *)buf, n};
	ssize_t r = ffio_file_writev(f, &iov, 1);
	return r < 0 ? set_errno(r) : r;
}

ssize_t ffpread(int fd, void *buf, size_t n, off_t off)
{
	FILE_OR_EBADF(fd);
	ssize_t r = ffio_file_pread(f, buf, n, off);
	return r < 0 ? set_errno(r) : r;
}

ssize_t ffpwrite(int fd, const void *buf, size_t n, off_t off)
{
	FILE_OR_EBADF(fd);
	ssize_t r = ffio_file_pwrite(f, buf, n, off);
	return r < 0 ? set_errno(r) : r;
}

off_t ffseek(int fd, off_t off, int whence)
{
	FILE_OR_EBADF(fd);
	off_t r = ffio_file_seek(f, off, whence);
	return r < 0 ? set_errno(r) : r;
}

int ffflush(int fd)
{
	FILE_OR_EBADF(fd);
	return set_errno(ffio_file_flush(f));
}

int fffsync(int fd)
{
	FILE_OR_EBADF(fd);
	return set_errno(ffio_file_fsync(f, 0));
}

int ffclose(int fd)
{
	return set_errno(ffio_fd_close(fd));
}

int ffgetstats(int fd, struct ffio_stats *st, int max)
{
	FILE_OR_EBADF(fd);
	if (max < 0 || (max > 0 && !st)) {
		errno = EINVAL;
		return -1;
	}
	return ffio_file_stats(f, st, max);
}

int ffio_is_managed(int fd)
{
	return ffio_fd_get(fd) != NULL;
}
