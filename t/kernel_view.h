/* t/kernel_view.h -- the file as the kernel has it, for tests that check
 * what reached the file system from inside a process using ffio: raw
 * system calls, which no interposition sees (an open() of a file ffio has
 * open would join its cache, as it must). */
#ifndef FFIO_KERNEL_VIEW_H
#define FFIO_KERNEL_VIEW_H

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* pread of path's bytes [off, off + n) from the kernel: the count or -1. */
static inline ssize_t kernel_pread(const char *path, void *buf, size_t n, off_t off)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = syscall(SYS_pread64, fd, buf, n, off);
	syscall(SYS_close, fd);
	return r;
}

/* pwrite of n bytes at off into path, by the kernel alone, as another
 * process without ffio would: the count or -1. */
static inline ssize_t kernel_pwrite(const char *path, const void *buf, size_t n, off_t off)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = syscall(SYS_pwrite64, fd, buf, n, off);
	syscall(SYS_close, fd);
	return r;
}

#endif
