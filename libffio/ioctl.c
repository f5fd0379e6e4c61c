/* libffio/ioctl.c -- ioctl on a file ffio holds.  The requests by which
 * the kernel looks at the file's data, size or layout, or writes its data,
 * find ffio's cached writes already with the kernel and the descriptions'
 * positions given, as kernel-side copies do (interpose.h's
 * kernel_io_begin): FIONREAD (the bytes from the position to the end),
 * FIBMAP and FS_IOC_FIEMAP (the blocks), FICLONE, FICLONERANGE and
 * FIDEDUPERANGE (the file system shares one file's blocks with another,
 * which then drops what ffio cached of it).  Any other request goes to the
 * kernel as it is. */
#include "config.h"
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "interpose.h"

/* The kernel's call, as the C library makes it: a system call, with no
 * look-up of the C library's function (sanitizer runtimes make ioctls
 * while they start, before anything else is ready). */
static int sys_ioctl(int fd, unsigned long request, void *arg)
{
	return (int)FFIO_SYS(SYS_ioctl, fd, request, arg);
}

static int on_data(unsigned long request)
{
	switch (request) {
	case FIONREAD:
	case FIBMAP:
	case FS_IOC_FIEMAP:
	case FICLONE:
	case FICLONERANGE:
	case FIDEDUPERANGE:
		return 1;
	default:
		return 0;
	}
}

/* The files a clone or dedupe request names besides fd, made current
 * with the kernel; the clone's source is reported in *src.  A bad
 * argument is not read: the kernel refuses it (EFAULT, EBADF). */
static int other_files(int fd, unsigned long request, void *arg, struct ffio_ofd **src)
{
	*src = NULL;
	if (request == FICLONE)
		*src = managed((int)(intptr_t)arg);
	if (request == FICLONERANGE && !ffio_user_range_odd(arg, sizeof(struct file_clone_range)))
		*src = managed((int)((struct file_clone_range *)arg)->src_fd);
	if (request == FIDEDUPERANGE && !ffio_user_range_odd(arg, sizeof(struct file_dedupe_range))) {
		struct file_dedupe_range *d = arg;
		unsigned count = d->dest_count;
		if (ffio_user_range_odd(arg, sizeof *d + count * sizeof d->info[0]))
			return 0;
		for (unsigned i = 0; i < count; i++) {
			int dfd = (int)d->info[i].dest_fd;
			int rc = dfd == fd ? 0 : kernel_io_begin(managed(dfd));
			if (rc < 0)
				return rc;
		}
	}
	return kernel_io_begin(*src);
}

FFIO_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (likely(!on_data(request) || !ffio_any_open()))
		return sys_ioctl(fd, request, arg);
	struct ffio_ofd *o = managed(fd), *src;
	int rc = other_files(fd, request, arg, &src);
	if (rc == 0)
		rc = kernel_io_begin(o);
	if (rc < 0)
		return (int)result(rc);
	int r = sys_ioctl(fd, request, arg);
	int err = errno;
	kernel_io_end(o, fd, request == FICLONE || request == FICLONERANGE, 0);
	errno = err;
	return r;
}
