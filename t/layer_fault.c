/* t/layer_fault.c -- the fault layer: errors surface to the caller exactly
 * after AFTER operations of the chosen kind, .once fails only one, named
 * and numeric arguments, sync faults, asynchronous requests, and a fault
 * under the cache (the error is never lost; nothing is written). */
#include "layer_common.h"

static void test_write_after(void)
{
	const char *path = lt_path("w.dat");
	char buf[8];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:write:ENOSPC:3, sys");
	int ok = 1;

	tap_ok(fd >= 0, "ffopen with fault:write:ENOSPC:3");
	for (int i = 0; i < 3; i++)
		ok &= ffpwrite(fd, "abcd", 4, 4 * i) == 4;
	tap_ok(ok, "the first 3 writes pass");
	errno = 0;
	tap_ok(ffpwrite(fd, "efgh", 4, 12) == -1 && errno == ENOSPC, "the 4th write fails with ENOSPC");
	errno = 0;
	tap_ok(ffwrite(fd, "efgh", 4) == -1 && errno == ENOSPC, "and so does the 5th");
	tap_is(ffpread(fd, buf, 8, 0), 8, "reads are not affected");
	tap_ok(memcmp(buf, "abcdabcd", 8) == 0, "and read the written data");
	tap_is(ffclose(fd), 0, "ffclose");
	tap_is(lt_disk_size(path), 12, "only the 3 writes reached the file");
}

static void test_once(void)
{
	int fd = ffopen(lt_path("once.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "fault.once:write:EIO:2, sys");

	tap_ok(fd >= 0, "ffopen with fault.once:write:EIO:2");
	tap_is(ffpwrite(fd, "a", 1, 0), 1, "write 1 passes");
	tap_is(ffpwrite(fd, "b", 1, 1), 1, "write 2 passes");
	errno = 0;
	tap_ok(ffpwrite(fd, "c", 1, 2) == -1 && errno == EIO, "write 3 fails with EIO");
	tap_is(ffpwrite(fd, "d", 1, 3), 1, "write 4 passes again");
	tap_is(ffclose(fd), 0, "ffclose");
}

static void test_named_read(void)
{
	char buf[4];
	int fd = ffopen(lt_path("r.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:op=read:errno=EIO:after=1, sys");

	tap_ok(fd >= 0, "ffopen with fault:op=read:errno=EIO:after=1");
	tap_is(ffpwrite(fd, "abcd", 4, 0), 4, "writes pass");
	tap_is(ffpwrite(fd, "abcd", 4, 4), 4, "writes pass (2)");
	tap_is(ffpread(fd, buf, 4, 0), 4, "read 1 passes");
	errno = 0;
	tap_ok(ffpread(fd, buf, 4, 0) == -1 && errno == EIO, "read 2 fails with EIO");
	tap_is(ffclose(fd), 0, "ffclose");
}

static void test_sync_and_number(void)
{
	int fd = ffopen(lt_path("s.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:sync:EROFS, sys");

	tap_ok(fd >= 0, "ffopen with fault:sync:EROFS (after defaults to 0)");
	tap_is(ffpwrite(fd, "x", 1, 0), 1, "writes pass");
	errno = 0;
	tap_ok(fffsync(fd) == -1 && errno == EROFS, "fffsync fails with EROFS");
	tap_is(ffclose(fd), 0, "ffclose");

	fd = ffopen(lt_path("n.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:any:28:1, sys");
	tap_ok(fd >= 0, "ffopen with fault:any:28:1");
	tap_is(ffpwrite(fd, "x", 1, 0), 1, "the first operation passes");
	errno = 0;
	tap_ok(fffsync(fd) == -1 && errno == ENOSPC, "the second (a sync) fails with errno 28");
	tap_is(ffclose(fd), 0, "ffclose");

	errno = 0;
	fd = ffopen(lt_path("bad.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:write:ENOTANERRNO:1, sys");
	tap_ok(fd == -1 && errno == EINVAL, "an unknown errno name is refused");
	free(lt_log_new());
}

static int done_calls;
static void on_done(struct ffio_req *r)
{
	(void)r;
	done_calls++;
}

static void test_async(void)
{
	char data[16] = "0123456789abcdef";
	struct iovec iov = {data, sizeof data};
	struct ffio_req w1 = {.op = FFIO_OP_WRITE, .iov = &iov, .iovcnt = 1, .off = 0, .done = on_done};
	struct ffio_req w2 = {.op = FFIO_OP_WRITE, .iov = &iov, .iovcnt = 1, .off = 16, .done = on_done};
	const char *path = lt_path("a.dat");
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "fault:write:EDQUOT:1, sys");

	tap_ok(fd >= 0, "ffopen for asynchronous requests");
	done_calls = 0;
	tap_is(lt_submit(fd, &w1), 0, "submit write 1");
	tap_is(lt_submit(fd, &w2), 0, "submit write 2");
	tap_is(done_calls, 2, "both completed");
	tap_is(w1.res, 16, "write 1 passed");
	tap_is(w2.res, -EDQUOT, "write 2 completed with -EDQUOT");
	tap_is(ffclose(fd), 0, "ffclose");
	tap_is(lt_disk_size(path), 16, "only write 1 reached the file");
}

/* Under the cache: what the application sees when a write-behind fails.
 * The error surfaces at the write, the fsync or the close, never lost. */
static void test_under_cache(void)
{
	const char *path = lt_path("c.dat");
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache, fault:write:ENOSPC:0, sys");
	int w, s, c, ew = 0, es = 0, ec = 0;

	tap_ok(fd >= 0, "ffopen with cache over fault");
	errno = 0;
	w = (int)ffwrite(fd, "hello", 5);
	ew = errno;
	errno = 0;
	s = fffsync(fd);
	es = errno;
	errno = 0;
	c = ffclose(fd);
	ec = errno;
	tap_ok((w == -1 && ew == ENOSPC) || (s == -1 && es == ENOSPC) || (c == -1 && ec == ENOSPC),
	       "ENOSPC reaches the application (write %d, fsync %d, close %d)", w, s, c);
	tap_is(lt_disk_size(path), 0, "nothing reached the file");
}

int main(void)
{
	lt_setup("fault");
	tap_plan(40);
	test_write_after();
	test_once();
	test_named_read();
	test_sync_and_number();
	test_async();
	test_under_cache();
	return tap_done();
}
