/* t/uring_fork.c -- fork with requests in flight: the child gets a fresh
 * ring and never sees the parent's completions; the parent's requests
 * complete in the parent.  A read on a FIFO stays in flight across the
 * fork; the child's own write (through its fresh ring) is what the
 * parent's read then receives. */
#include <sys/wait.h>

#include "uring_common.h"

int main(void)
{
	if (!ut_uring_is_real())
		tap_skip_all("built without liburing");
	ut_mkdir("uring_fork");
	const char *fifo = ut_path("fifo");
	if (mkfifo(fifo, 0600) < 0)
		tap_skip_all("mkfifo failed");
	tap_plan(8);

	int fd = ffopen(fifo, O_RDWR, 0, "uring:4");
	int g = ffopen(ut_path("file"), O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	if (!tap_ok(fd >= 0 && g >= 0, "ffopen a FIFO and a file over uring:4"))
		return tap_done();
	struct ffio_layer *bf = ut_bottom(fd), *bg = ut_bottom(g);

	/* in flight at the fork: a read on the FIFO (no data yet) and 16
	 * writes to the file (the flush before fork completes them) */
	static char pbuf[8];
	static unsigned char wbuf[16][4096];
	static struct ut_req pr, w[16];
	ut_completed = 0;
	ut_prep(&pr, FFIO_OP_READ, pbuf, 5, 0);
	ffio_below_submit(ut_at(bf), &pr.r);
	ffio_below_commit(ut_at(bf));
	for (int i = 0; i < 16; i++) {
		memset(wbuf[i], 'a' + i, sizeof wbuf[i]);
		ut_prep(&w[i], FFIO_OP_WRITE, wbuf[i], 4096, (off_t)i * 4096);
		ffio_below_submit(ut_at(bg), &w[i].r);
	}
	ffio_below_commit(ut_at(bg));

	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		int fail = 0;
		int before = ut_completed;
		/* nothing of the parent's completes here */
		if (ffio_below_reap(ut_at(bf), 0) != 0 || ffio_below_reap(ut_at(bg), 0) != 0)
			fail |= 1;
		if (ut_completed != before || pr.ndone != 0)
			fail |= 2;
		/* the child's own request, through a fresh ring */
		struct ut_req cw;
		ut_prep(&cw, FFIO_OP_WRITE, "child", 5, 0);
		if (ffio_below_submit(ut_at(bf), &cw.r) < 0 || ffio_below_commit(ut_at(bf)) < 0)
			fail |= 4;
		while (cw.ndone == 0)
			if (ffio_below_reap(ut_at(bf), 1) < 0) {
				fail |= 8;
				break;
			}
		if (cw.r.res != 5)
			fail |= 16;
		if (pr.ndone != 0 || ut_completed != before + 1)
			fail |= 32;
		/* and file I/O in the child works */
		if (ffpwrite(g, "C", 1, 65536) != 1)
			fail |= 64;
		_exit(fail);
	}

	int status = 0;
	tap_is(waitpid(pid, &status, 0), pid, "child exited");
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child: no parent completion seen, own request completed (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	int all = 1;
	for (int i = 0; i < 16; i++)
		all &= w[i].ndone == 1 && w[i].r.res == 4096;
	tap_ok(all, "the parent's 16 writes completed once each, in the parent");
	while (pr.ndone == 0)
		if (ffio_below_reap(ut_at(bf), 1) < 0)
			break;
	tap_is(pr.r.res, 5, "the parent's read completes in the parent");
	tap_ok(memcmp(pbuf, "child", 5) == 0, "with the bytes the child wrote");
	tap_is(pr.ndone, 1, "its done() ran once");
	struct stat st;
	tap_ok(fstat(g, &st) == 0 && st.st_size == 65537, "file: parent's 64 KiB and the child's byte");
	ffclose(g);
	close(fd); /* the FIFO: its state is not this test's subject */
	return tap_done();
}
