/* t/uring_direct.c -- uring.direct (O_DIRECT) with aligned buffers from the
 * buffer pool: large synchronous transfers,
 * a short leading run at end of file, scattered asynchronous 4 KiB reads,
 * and an unaligned buffer refused with EINVAL (never silently). */
#include "uring_common.h"

#define MB (1024 * 1024)

static unsigned char pat(size_t i)
{
	return (unsigned char)((i * 2654435761u) >> 13);
}

int main(void)
{
	tap_plan(9);
	ut_mkdir("uring_direct");
	int fd = ffopen(ut_path("d"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring.direct:8");
	if (fd < 0 && errno == EINVAL)
		tap_skip_all("O_DIRECT not supported here");
	if (!tap_ok(fd >= 0, "ffopen uring.direct:8"))
		return tap_done();

	unsigned char *w = ffio_buf_alloc(4 * MB, 4096), *r = ffio_buf_alloc(4 * MB, 4096);
	for (size_t i = 0; i < 4 * MB; i++)
		w[i] = pat(i);
	tap_is(ffpwrite(fd, w, 4 * MB, 0), 4 * MB, "4 MiB O_DIRECT write");
	memset(r, 0, 4 * MB);
	tap_is(ffpread(fd, r, 4 * MB, 0), 4 * MB, "4 MiB O_DIRECT read");
	tap_ok(memcmp(r, w, 4 * MB) == 0, "bytes read back equal bytes written");

	memset(r, 0, MB);
	tap_is(ffpread(fd, r, MB, 4 * MB - MB / 2), MB / 2, "1 MiB read at 3.5 MiB: the 512 KiB there");
	tap_ok(memcmp(r, w + 4 * MB - MB / 2, MB / 2) == 0, "their bytes");

	/* 64 scattered aligned 4 KiB reads in flight at depth 8 */
	static struct ut_req q[64];
	struct ffio_layer *b = ut_bottom(fd);
	ut_completed = 0;
	for (int i = 0; i < 64; i++) {
		off_t off = (off_t)((i * 37) % 1024) * 4096;
		ut_prep(&q[i], FFIO_OP_READ, r + (size_t)i * 4096, 4096, off);
		ffio_below_submit(ut_at(b), &q[i].r);
	}
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 64);
	int bad = 0;
	for (int i = 0; i < 64; i++) {
		off_t off = (off_t)((i * 37) % 1024) * 4096;
		bad += q[i].r.res != 4096 || memcmp(r + (size_t)i * 4096, w + off, 4096) != 0;
	}
	tap_is(bad, 0, "64 scattered async O_DIRECT reads return the right bytes");

	errno = 0;
	ssize_t n = ffpread(fd, r + 1, 4096, 0);
	tap_ok(n == -1 && errno == EINVAL, "unaligned buffer: -1, EINVAL (%zd)", n);
	tap_is(ffclose(fd), 0, "ffclose");
	ffio_buf_free(w, 4 * MB);
	ffio_buf_free(r, 4 * MB);
	return tap_done();
}
