/* t/uring_async.c -- the asynchronous contract of the uring bottom layer,
 * driven directly through the internal API: many requests at depth 4,
 * back-pressure at depth 1 and 2, vector requests, ordering of overlapping
 * requests, reads at end of file, short reads resubmitted (a FIFO),
 * fsync requests, and the synchronous methods after async traffic. */
#include "uring_common.h"

#define NREQ 64
#define BS 4096

static unsigned char pattern(int i, size_t j)
{
	return (unsigned char)(i * 31 + j * 7 + 1);
}

static int check_pattern(const unsigned char *buf, int i)
{
	for (size_t j = 0; j < BS; j++)
		if (buf[j] != pattern(i, j))
			return 0;
	return 1;
}

static void many_requests(void)
{
	static unsigned char wbuf[NREQ][BS], rbuf[NREQ][BS];
	static struct ut_req w[NREQ], r[NREQ];
	int fd = ffopen(ut_path("many"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	if (!tap_ok(fd >= 0, "ffopen uring:4 (%s)", fd < 0 ? strerror(errno) : "ok"))
		exit(1);
	struct ffio_layer *b = ut_bottom(fd);
	tap_ok(b && b->ops == (ut_uring_is_real() ? &ffio_layer_uring : &ffio_layer_sys),
	       "the stack's bottom is %s", ut_uring_is_real() ? "uring" : "sys (fallback)");

	ut_completed = 0;
	int bad = 0;
	for (int i = 0; i < NREQ; i++) {
		for (size_t j = 0; j < BS; j++)
			wbuf[i][j] = pattern(i, j);
		ut_prep(&w[i], FFIO_OP_WRITE, wbuf[i], BS, (off_t)(NREQ - 1 - i) * BS);
		if (ffio_below_submit(ut_at(b), &w[i].r) < 0)
			bad++;
	}
	tap_is(bad, 0, "64 writes submitted at depth 4 (back-pressure reaps)");
	tap_is(ffio_below_commit(ut_at(b)), 0, "commit");
	tap_is(ut_reap_until(b, NREQ), 0, "reap until all completed");
	int wrong = 0, twice = 0;
	for (int i = 0; i < NREQ; i++) {
		wrong += w[i].r.res != BS;
		twice += w[i].ndone != 1;
	}
	tap_is(wrong, 0, "every write completed with res = 4096");
	tap_is(twice, 0, "every done() ran exactly once");

	/* the bytes, read back with plain pread */
	int ok = 1;
	for (int i = 0; i < NREQ && ok; i++) {
		unsigned char tmp[BS];
		ok = pread(fd, tmp, BS, (off_t)(NREQ - 1 - i) * BS) == BS && check_pattern(tmp, i);
	}
	tap_ok(ok, "file holds exactly the written bytes");

	/* vector reads: each request split 1000 + 3096 */
	ut_completed = 0;
	memset(rbuf, 0, sizeof rbuf);
	for (int i = 0; i < NREQ; i++) {
		ut_prep(&r[i], FFIO_OP_READ, rbuf[i], 1000, (off_t)(NREQ - 1 - i) * BS);
		r[i].iov[1].iov_base = rbuf[i] + 1000;
		r[i].iov[1].iov_len = BS - 1000;
		r[i].r.iovcnt = 2;
		if (ffio_below_submit(ut_at(b), &r[i].r) < 0)
			bad++;
	}
	tap_is(ffio_below_commit(ut_at(b)), 0, "commit of 64 vector reads");
	tap_is(ut_reap_until(b, NREQ), 0, "reap vector reads");
	wrong = 0;
	for (int i = 0; i < NREQ; i++)
		wrong += r[i].r.res != BS || !check_pattern(rbuf[i], i) || r[i].ndone != 1;
	tap_is(wrong, 0, "vector reads: res, bytes, one done() each");

	/* a read across the end of file is short; one wholly past it is 0 */
	unsigned char tail[BS];
	ut_completed = 0;
	ut_prep(&r[0], FFIO_OP_READ, tail, BS, (off_t)NREQ * BS - 100);
	ut_prep(&r[1], FFIO_OP_READ, tail, BS, (off_t)NREQ * BS + BS);
	ffio_below_submit(ut_at(b), &r[0].r);
	ffio_below_submit(ut_at(b), &r[1].r);
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 2);
	tap_is(r[0].r.res, 100, "read across end of file returns the 100 bytes there");
	tap_is(r[1].r.res, 0, "read past end of file returns 0");

	/* overlapping writes then a read, all in one batch: order is kept */
	static unsigned char a[65536], c[65536], got[65536];
	memset(a, 'a', sizeof a);
	memset(c, 'c', sizeof c);
	ut_completed = 0;
	ut_prep(&w[0], FFIO_OP_WRITE, a, sizeof a, 4096);
	ut_prep(&w[1], FFIO_OP_WRITE, c, sizeof c, 4096);
	ut_prep(&r[0], FFIO_OP_READ, got, sizeof got, 4096);
	ut_prep(&w[2], FFIO_OP_FSYNC, NULL, 0, 0);
	w[2].r.iovcnt = 0;
	ffio_below_submit(ut_at(b), &w[0].r);
	ffio_below_submit(ut_at(b), &w[1].r);
	ffio_below_submit(ut_at(b), &r[0].r);
	ffio_below_submit(ut_at(b), &w[2].r);
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 4);
	tap_ok(w[0].r.res == 65536 && w[1].r.res == 65536 && r[0].r.res == 65536,
	       "overlapping write, write, read completed in full");
	tap_ok(memcmp(got, c, sizeof c) == 0, "the read sees the second write");
	tap_ok(w[0].seq < w[1].seq && w[1].seq < r[0].seq, "they completed in order");
	tap_is(w[2].r.res, 0, "fsync request completes with 0");

	/* the synchronous paths after async traffic */
	tap_is(ffpread(fd, got, 10, 4096), 10, "ffpread after async traffic");
	tap_ok(memcmp(got, c, 10) == 0, "ffpread sees the async write");
	tap_is(ffclose(fd), 0, "ffclose");
}

/* depth 1 and 2: submitting one more than the depth completes the oldest */
static void back_pressure(int depth)
{
	static unsigned char buf[20][512];
	static struct ut_req w[20];
	char spec[32];
	snprintf(spec, sizeof spec, "uring:%d", depth);
	int fd = ffopen(ut_path("bp"), O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	struct ffio_layer *b = ut_bottom(fd);
	ut_completed = 0;
	int order_ok = 1;
	for (int i = 0; i < 20; i++) {
		memset(buf[i], 'A' + i, sizeof buf[i]);
		ut_prep(&w[i], FFIO_OP_WRITE, buf[i], sizeof buf[i], (off_t)i * 512);
		if (ffio_below_submit(ut_at(b), &w[i].r) < 0)
			order_ok = 0;
		/* at most depth requests unfinished after each submit */
		if (i - depth >= 0 && w[i - depth].ndone != 1)
			order_ok = 0;
	}
	tap_ok(order_ok, "depth %d: never more than %d requests unfinished", depth, depth);
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 20);
	int bad = 0;
	for (int i = 0; i < 20; i++)
		bad += w[i].r.res != 512 || w[i].ndone != 1;
	tap_is(bad, 0, "depth %d: 20 writes complete once, in full", depth);
	struct stat st;
	tap_ok(fstat(fd, &st) == 0 && st.st_size == 20 * 512, "depth %d: size 10240", depth);
	tap_is(ffclose(fd), 0, "depth %d: ffclose", depth);
}

/* A FIFO gives short reads: the layer resubmits for the rest. */
static void short_reads(void)
{
	const char *fifo = ut_path("fifo");
	if (!ut_uring_is_real() || mkfifo(fifo, 0600) < 0) {
		for (int i = 0; i < 3; i++)
			tap_skip("needs io_uring and a FIFO");
		return;
	}
	int fd = ffopen(fifo, O_RDWR, 0, "uring:4");
	int wfd = open(fifo, O_WRONLY | O_NONBLOCK);
	struct ffio_layer *b = ut_bottom(fd);
	char buf[11] = { 0 };
	struct ut_req r;
	ut_completed = 0;
	if (write(wfd, "abcd", 4) != 4)
		tap_diag("write to fifo failed");
	ut_prep(&r, FFIO_OP_READ, buf, 10, 0);
	ffio_below_submit(ut_at(b), &r.r);
	ffio_below_commit(ut_at(b));
	ffio_below_reap(ut_at(b), 0); /* takes the 4 bytes, resubmits the rest */
	tap_is(r.ndone, 0, "a short read is not completed");
	if (write(wfd, "efghij", 6) != 6)
		tap_diag("write to fifo failed");
	ut_reap_until(b, 1);
	tap_is(r.r.res, 10, "the read completes with all 10 bytes");
	tap_is_str(buf, "abcdefghij", "in order");
	close(wfd);
	ffclose(fd);
}

int main(void)
{
	tap_plan(31);
	ut_mkdir("uring_async");
	many_requests();
	back_pressure(1);
	back_pressure(2);
	short_reads();
	return tap_done();
}
