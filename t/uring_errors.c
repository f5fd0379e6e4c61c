/* t/uring_errors.c -- errors through the uring layer: a file that fails for
 * real (RLIMIT_FSIZE: EFBIG, after a short write that is resubmitted), a
 * request the kernel refuses (write on a read-only file: EBADF), and the
 * fault layer just above uring; errors complete requests with -errno and
 * reach the application through the POSIX-style API. */
#include "uring_common.h" /* first: config.h */

#include <signal.h>
#include <sys/resource.h>

static void efbig(void)
{
	static unsigned char buf[8192];
	memset(buf, 'x', sizeof buf);
	int fd = ffopen(ut_path("big"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	struct ffio_layer *b = ut_bottom(fd);

	struct rlimit old, lim;
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 16384;
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0) {
		for (int i = 0; i < 5; i++)
			tap_skip("cannot lower RLIMIT_FSIZE");
		ffclose(fd);
		return;
	}
	struct ut_req w[3];
	ut_completed = 0;
	ut_prep(&w[0], FFIO_OP_WRITE, buf, 8192, 0);      /* fits */
	ut_prep(&w[1], FFIO_OP_WRITE, buf, 8192, 12288);  /* 4096 fit, then EFBIG */
	ut_prep(&w[2], FFIO_OP_WRITE, buf, 4096, 20480);  /* wholly past the limit */
	for (int i = 0; i < 3; i++)
		ffio_below_submit(ut_at(b), &w[i].r);
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 3);
	tap_is(w[0].r.res, 8192, "async write below the limit completes in full");
	/* a synchronous bottom (built without liburing) may report the short part */
	tap_ok(w[1].r.res == -EFBIG || (!ut_uring_is_real() && w[1].r.res == 4096),
	       "async write across the limit: short, resubmitted, -EFBIG (%zd)", w[1].r.res);
	tap_is(w[2].r.res, -EFBIG, "async write past the limit: -EFBIG");

	errno = 0;
	ssize_t n = ffpwrite(fd, buf, 4096, 32768);
	tap_ok(n == -1 && errno == EFBIG, "ffpwrite past the limit: -1, EFBIG (%zd, %s)", n,
	       strerror(errno));
	setrlimit(RLIMIT_FSIZE, &old);
	struct stat st;
	tap_ok(fstat(fd, &st) == 0 && st.st_size == 16384, "the file holds 16384 bytes");
	ffclose(fd);
}

static void ebadf(void)
{
	char buf[100] = {0};
	int fd = ffopen(ut_path("ro"), O_RDWR | O_CREAT | O_TRUNC, 0644, "sys");
	ffclose(fd);
	fd = ffopen(ut_path("ro"), O_RDONLY, 0, "uring:2");
	struct ffio_layer *b = ut_bottom(fd);
	struct ut_req r;
	ut_completed = 0;
	ut_prep(&r, FFIO_OP_WRITE, buf, sizeof buf, 0);
	int rc = ffio_below_submit(ut_at(b), &r.r);
	ffio_below_commit(ut_at(b));
	ut_reap_until(b, 1);
	tap_ok(rc == 0 && r.r.res == -EBADF, "write request on a read-only file: res -EBADF (%zd)",
	       r.r.res);
	tap_is(r.ndone, 1, "its done() ran once");
	ffclose(fd);
}

static void fault_above(void)
{
	char buf[512];
	memset(buf, 'f', sizeof buf);
	int fd = ffopen(ut_path("fault"), O_RDWR | O_CREAT | O_TRUNC, 0644,
			"fault:write:ENOSPC:2, uring:4");
	if (fd < 0) {
		for (int i = 0; i < 4; i++)
			tap_skip("fault layer not available");
		return;
	}
	tap_is(ffwrite(fd, buf, sizeof buf), 512, "write 1 passes fault");
	tap_is(ffwrite(fd, buf, sizeof buf), 512, "write 2 passes fault");
	errno = 0;
	ssize_t n = ffwrite(fd, buf, sizeof buf);
	tap_ok(n == -1 && errno == ENOSPC, "write 3: -1, ENOSPC");
	struct stat st;
	tap_ok(fstat(fd, &st) == 0 && st.st_size == 1024, "only the passed writes reached the file");
	ffclose(fd);
}

int main(void)
{
	signal(SIGXFSZ, SIG_IGN);
	tap_plan(11);
	ut_mkdir("uring_errors");
	efbig();
	ebadf();
	fault_above();
	return tap_done();
}
