/* t/core_file.c -- the core's three levels over a hand-built sys stack: a
 * file per inode with ffio's own descriptor, a description per open shared
 * by dup, positions, O_APPEND through the kernel, a second open joining the
 * file, close of the original, deferred errors, statistics of the bottom,
 * and a FIFO that is never managed. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

static struct ffio_entry entry = {
	.index = 1,
	.pattern = "core_file.*",
	.nlayers = 1,
};

int main(void)
{
	char path[] = "/tmp/ffio-core-file-XXXXXX";
	char buf[64];
	int fd, fd2, fd3, tmp;

	tap_plan(28);
	ffio_init();
	entry.layer[0].ops = &ffio_layer_sys;
	tmp = mkstemp(path);
	if (tmp < 0)
		return 99;
	close(tmp);

	fd = ffio_open(&entry, AT_FDCWD, path, O_RDWR | O_APPEND, 0644, 0);
	tap_ok(fd >= 0, "open over sys");
	struct ffio_ofd *o = ffio_fd_get(fd);
	struct ffio_file *f = ffio_fd_file(fd);
	tap_ok(o != NULL && f != NULL && o->file == f, "descriptor attached to a description of a file");
	tap_ok(f != NULL && f->fd >= 0 && f->fd != fd, "the file has ffio's own descriptor");
	tap_ok(f != NULL && ffio_fd_is_private(f->fd) && !ffio_fd_is_private(fd), "the table knows which is which");
	tap_is(o->refs, 1, "one reference");
	tap_is(ffio_ofd_writev(o, &(struct iovec){"hello ", 6}, 1), 6, "write at end");
	tap_is(ffio_ofd_seek(o, 0, SEEK_SET), 0, "seek to 0");
	tap_is(ffio_ofd_writev(o, &(struct iovec){"world", 5}, 1), 5, "O_APPEND write goes to the end");
	tap_is(o->pos, 11, "position after append");
	tap_is(ffio_ofd_seek(o, -5, SEEK_END), 6, "SEEK_END uses the logical size");
	tap_is(ffio_ofd_seek(o, -100, SEEK_CUR), -EINVAL, "negative position refused");

	fd2 = ffio_real.dup(fd);
	tap_is(ffio_fd_dup(fd, fd2), 0, "dup attached");
	tap_is(o->refs, 2, "two references to one description");
	fd3 = ffio_open(NULL, AT_FDCWD, path, O_RDONLY, 0, 0);
	tap_ok(fd3 >= 0 && ffio_fd_file(fd3) == f && ffio_fd_get(fd3) != o,
	       "a second open joins the file with a description of its own");
	tap_is(f->users, 2, "two descriptions use the file");
	tap_is(ffio_fd_close(fd, 1), 0, "close the original");
	tap_is(o->kfd, fd2, "the description's kernel twin is the duplicate");
	memset(buf, 0, sizeof buf);
	tap_is(ffio_ofd_readv(o, &(struct iovec){buf, sizeof buf}, 1), 5, "read at the shared position");
	tap_is_str(buf, "world", "bytes read");
	tap_is(ffio_ofd_pwritev(ffio_fd_get(fd3), &(struct iovec){"x", 1}, 1, 0), -EBADF,
	       "a read-only description may not write");

	ffio_file_set_error(f, -ENOSPC);
	tap_is(ffio_file_pwrite(f, "x", 1, 0), -ENOSPC, "deferred error reported by the next write");
	tap_is(ffio_file_pwrite(f, "H", 1, 0), 1, "and only once");
	struct ffio_stats st;
	tap_is(ffio_file_stats(f, &st, 1), 1, "sys keeps statistics");
	tap_is(ffio_fd_close(fd3, 1), 0, "close the reader");
	tap_is(ffio_fd_close(fd2, 1), 0, "last close");
	tap_ok(ffio_fd_get(fd2) == NULL && ffio_fd_get(fd3) == NULL, "the table forgot both");
	unlink(path);

	/* A FIFO is no regular file: opened by a program, never managed. */
	char fifo[] = "/tmp/ffio-core-fifo-XXXXXX";
	tmp = mkstemp(fifo);
	if (tmp < 0)
		return 99;
	close(tmp);
	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0)
		return 99;
	fd = ffio_open(&entry, AT_FDCWD, fifo, O_RDWR, 0, 0);
	tap_ok(fd >= 0 && ffio_fd_get(fd) == NULL, "a FIFO is opened plain");
	tap_is(ffio_flush_all(), 0, "flushing every file has nothing to say");
	close(fd);
	unlink(fifo);
	return tap_done();
}
