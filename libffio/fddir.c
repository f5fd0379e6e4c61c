/* libffio/fddir.c -- the process's list of its descriptors, without ffio's.
 *
 * A program that lists /proc/self/fd would find the descriptors ffio
 * keeps for its files, rings and log, which it never opened: Python's
 * test support counts its descriptors that way, and a daemon closes every
 * one it finds.  readdir of such a directory passes over ffio's own.
 *
 * The directory is known when opendir or fdopendir returns it: on procfs,
 * with the path /proc/PID/fd or /proc/PID/task/TID/fd for this process
 * (what /proc/self/fd, /proc/thread-self/fd and /dev/fd lead to).  A
 * listing made with the getdents64 system call itself is not seen.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

#define LISTS_MAX 16
static DIR *lists[LISTS_MAX]; /* open listings of this process's descriptors */
static int nlists;
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void lists_fork_safe(void)
{
	ffio_atfork_hold(&lists_lock, FFIO_LOCK_FD_LISTS);
}

ssize_t ffio_fd_link(int fd, char *name, size_t size)
{
	char link[32];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, name, size - 1);
	if (n >= 0)
		name[n] = '\0';
	return n;
}

/* Does the directory open as fd list this process's descriptors? */
static int lists_own_fds(int fd)
{
	struct statfs fs;
	char name[64];
	if (fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC || ffio_fd_link(fd, name, sizeof name) <= 0)
		return 0;
	char *end;
	if (strncmp(name, "/proc/", 6) != 0 || strtol(name + 6, &end, 10) != (long)getpid())
		return 0;
	if (strncmp(end, "/task/", 6) == 0)
		(void)strtol(end + 6, &end, 10);
	return strcmp(end, "/fd") == 0;
}

static DIR *follow(DIR *d)
{
	if (d == NULL || ffio_in_lib)
		return d;
	int saved = errno;
	if (lists_own_fds(dirfd(d))) {
		pthread_mutex_lock(&lists_lock);
		if (nlists < LISTS_MAX)
			lists[nlists++] = d;
		pthread_mutex_unlock(&lists_lock);
	}
	errno = saved;
	return d;
}

static int followed(DIR *d, int forget)
{
	int found = 0;
	pthread_mutex_lock(&lists_lock);
	for (int i = 0; i < nlists; i++)
		if (lists[i] == d) {
			found = 1;
			if (forget)
				lists[i] = lists[--nlists];
			break;
		}
	pthread_mutex_unlock(&lists_lock);
	return found;
}

/* An entry names one of ffio's own descriptors. */
static int ffio_own(const struct dirent *e)
{
	char *end;
	long fd = strtol(e->d_name, &end, 10);
	if (end == e->d_name || *end != '\0' || fd < 0 || fd > INT_MAX)
		return 0;
	return ffio_private_next((int)fd) == fd;
}

FFIO_EXPORT DIR *opendir(const char *path)
{
	NEED(opendir, NOSYS_NULL);
	return follow(ffio_real.opendir(path));
}

FFIO_EXPORT DIR *fdopendir(int fd)
{
	NEED(fdopendir, NOSYS_NULL);
	return follow(ffio_real.fdopendir(fd));
}

FFIO_EXPORT int closedir(DIR *d)
{
	NEED(closedir, NOSYS);
	ffio_fd_forget(dirfd(d));
	if (__atomic_load_n(&nlists, __ATOMIC_RELAXED) > 0)
		(void)followed(d, 1);
	return ffio_real.closedir(d);
}

FFIO_EXPORT struct dirent *readdir(DIR *d)
{
	NEED(readdir, NOSYS_NULL);
	struct dirent *e = ffio_real.readdir(d);
	if (likely(__atomic_load_n(&nlists, __ATOMIC_RELAXED) == 0) || e == NULL || ffio_in_lib || !followed(d, 0))
		return e;
	int saved = errno;
	while (e != NULL && ffio_own(e))
		e = ffio_real.readdir(d);
	if (e != NULL)
		errno = saved;
	return e;
}

/* LP64: struct dirent64 is struct dirent, and the C library's readdir64
 * is its readdir. */
FFIO_EXPORT struct dirent64 *readdir64(DIR *d)
{
	return (struct dirent64 *)(void *)readdir(d);
}
