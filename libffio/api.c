/* libffio/api.c -- the direct API of ffio.h (ffopen and friends): the POSIX
 * boundary for programs that name their layers themselves. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "interpose.h"

/* Stacks given to ffopen as text: parsed once per distinct call and kept
 * for the life of the process (the file refers to its entry). */
struct api_spec {
	struct api_spec *next;
	struct ffio_spec *spec;
	char text[];
};
static struct api_spec *api_specs;
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void api_fork_safe(void)
{
	ffio_atfork_hold(&api_lock, FFIO_LOCK_API);
}

static int set_errno(long r)
{
	return (int)result(r < 0 ? r : 0);
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
	int err = 0;

	ffio_init();
	if (!path) {
		errno = EFAULT;
		return -1;
	}
	if (spec) {
		e = stack_for(spec, &err);
	} else {
		e = ffio_entry_for(path);
		if (!e)
			e = stack_for("sys", &err);
	}
	if (!e)
		return set_errno(err ? err : -EINVAL);
	ffio_in_lib++;
	int fd = ffio_open(e, AT_FDCWD, path, flags, mode, 1);
	ffio_leave();
	/* Not a regular file, or not cacheable: the descriptor is plain and
	 * the calls below make plain system calls on it. */
	return fd < 0 ? set_errno(fd) : fd;
}

/* The managed description behind fd, or NULL: the call is then the plain
 * POSIX one (a descriptor ffopen did not manage, or any other). */
static struct ffio_ofd *api_ofd(int fd)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	return o && !o->is_private ? o : NULL;
}

/* Each call tries the hit first (ffio-internal.h), then the full path in
 * a function of its own, so that a hit saves no more registers than it
 * needs. */
__attribute__((noinline)) static ssize_t read_full(int fd, void *buf, size_t n)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? result(ffio_ofd_readv(o, &(struct iovec){buf, n}, 1)) : read(fd, buf, n);
}

ssize_t ffread(int fd, void *buf, size_t n)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	ssize_t r = o ? ffio_ofd_read_hit_pos(o, buf, n) : 0;
	return r > 0 ? r : read_full(fd, buf, n);
}

__attribute__((noinline)) static ssize_t write_full(int fd, const void *buf, size_t n)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? result(ffio_ofd_writev(o, &(struct iovec){(void *)buf, n}, 1)) : write(fd, buf, n);
}

ssize_t ffwrite(int fd, const void *buf, size_t n)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	ssize_t r = o ? ffio_ofd_write_hit_pos(o, buf, n) : 0;
	return r > 0 ? r : write_full(fd, buf, n);
}

ssize_t ffpread(int fd, void *buf, size_t n, off_t off)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? result(ffio_ofd_pread(o, buf, n, off)) : pread(fd, buf, n, off);
}

ssize_t ffpwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? result(ffio_ofd_pwrite(o, buf, n, off)) : pwrite(fd, buf, n, off);
}

__attribute__((noinline)) static off_t seek_full(int fd, off_t off, int whence)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? result(ffio_ofd_seek(o, off, whence)) : lseek(fd, off, whence);
}

off_t ffseek(int fd, off_t off, int whence)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	return o && ffio_ofd_seek_hit(o, off, whence) ? o->pos : seek_full(fd, off, whence);
}

int ffflush(int fd)
{
	struct ffio_ofd *o = api_ofd(fd);
	if (!o) /* nothing buffered: the descriptor must still be open */
		return fcntl(fd, F_GETFD) < 0 ? -1 : 0;
	return (int)result(ffio_file_flush(o->file));
}

int fffsync(int fd)
{
	struct ffio_ofd *o = api_ofd(fd);
	return o ? (int)result(ffio_file_fsync(o->file, 0)) : fsync(fd);
}

int ffclose(int fd)
{
	return close(fd);
}

int ffgetstats(int fd, struct ffio_stats *st, int max)
{
	struct ffio_ofd *o = api_ofd(fd);
	if (!o) {
		errno = EBADF;
		return -1;
	}
	if (max < 0 || (max > 0 && !st)) {
		errno = EINVAL;
		return -1;
	}
	return ffio_file_stats(o->file, st, max);
}

int ffio_is_managed(int fd)
{
	return ffio_fd_file(fd) != NULL;
}
