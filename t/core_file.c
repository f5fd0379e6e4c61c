/* t/core_file.c -- the core's open file over a hand-built sys stack: the
 * shared position, O_APPEND at the logical end, dup'ed descriptors and
 * close of the original, deferred errors, statistics of the bottom. */
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
	struct ffio_file *f;
	char buf[64];
	int fd, fd2, tmp;

	tap_plan(22);
	ffio_init();
	entry.layer[0].ops = &ffio_layer_sys;
	tmp = mkstemp(path);
	if (tmp < 0)
		return 99;
	close(tmp);

	tap_is(ffio_file_open(&entry, AT_FDCWD, path, O_RDWR | O_APPEND, 0644, &f), 0, "open over sys");
	fd = f->fd;
	tap_ok(ffio_fd_get(fd) == f, "descriptor attached");
	tap_is(f->refs, 1, "one reference");
	tap_is(ffio_file_writev(f, &(struct iovec){"hello ", 6}, 1), 6, "write at end");
	tap_is(ffio_file_seek(f, 0, SEEK_SET), 0, "seek to 0");
	tap_is(ffio_file_writev(f, &(struct iovec){"world", 5}, 1), 5, "O_APPEND write goes to the end");
	tap_is(f->pos, 11, "position after append");
	tap_is(ffio_file_seek(f, -5, SEEK_END), 6, "SEEK_END uses the logical size");
	tap_is(ffio_file_seek(f, -100, SEEK_CUR), -EINVAL, "negative position refused");

	fd2 = ffio_real.dup(fd);
	tap_is(ffio_fd_dup(fd, fd2), 0, "dup attached");
	tap_is(f->refs, 2, "two references");
	tap_is(ffio_fd_close(fd), 0, "close the original");
	tap_is(f->fd, fd2, "the stack moved to the duplicate");
	memset(buf, 0, sizeof buf);
	tap_is(ffio_file_readv(f, &(struct iovec){buf, sizeof buf}, 1), 5, "read at the shared position");
	tap_is_str(buf, "world", "bytes read");

	ffio_file_set_error(f, -ENOSPC);
	tap_is(ffio_file_pwrite(f, "x", 1, 0), -ENOSPC, "deferred error reported by the next write");
	tap_is(ffio_file_pwrite(f, "H", 1, 0), 1, "and only once");
	struct ffio_stats st;
	tap_is(ffio_file_stats(f, &st, 1), 1, "sys keeps statistics");
	tap_is(ffio_fd_close(fd2), 0, "last close");
	unlink(path);

	/* A pipe has no offset: flushing every file (fork, exec) must not
	 * turn that into an error of the file. */
	char fifo[] = "/tmp/ffio-core-fifo-XXXXXX";
	tmp = mkstemp(fifo);
	if (tmp < 0)
		return 99;
	close(tmp);
	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0)
		return 99;
	tap_is(ffio_file_open(&entry, AT_FDCWD, fifo, O_RDWR, 0, &f), 0, "open a FIFO over sys");
	tap_is(ffio_flush_all(), 0, "flushing every file ignores the pipe's missing offset");
	tap_is(ffio_fd_close(f->fd), 0, "and leaves no deferred error");
	unlink(fifo);
	return tap_done();
}
