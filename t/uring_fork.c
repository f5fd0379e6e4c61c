/* t/uring_fork.c -- fork with requests in flight on a uring stack: the
 * parent's requests complete in the parent, before the fork returns, and
 * their bytes are in the file; from then on the file passes through to the
 * kernel in both processes (no ring is left in either), so the child's
 * write through the inherited descriptor moves the offset the parent sees,
 * as it does without ffio. */

#include "uring_common.h" /* first: config.h */
#include "kernel_view.h"

#include <sys/wait.h>

int main(void)
{
	if (!ut_uring_is_real())
		tap_skip_all("built without liburing");
	ut_mkdir("uring_fork");
	const char *path = ut_path("file");
	tap_plan(9);

	int g = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "uring:4");
	struct ffio_layer *bg = g >= 0 ? ut_bottom(g) : NULL;
	if (!tap_ok(g >= 0 && bg != NULL, "ffopen a file over uring:4"))
		return tap_done();

	/* in flight at the fork: 16 writes (the fork completes them) */
	static unsigned char wbuf[16][4096];
	static struct ut_req w[16];
	ut_completed = 0;
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
		static unsigned char got[16 * 4096];
		if (ut_bottom(g) != NULL)
			fail |= 1; /* the stack was closed before the fork */
		if (kernel_pread(path, got, sizeof got, 0) != (ssize_t)sizeof got)
			fail |= 2;
		for (size_t i = 0; i < sizeof got && !(fail & 2); i++)
			if (got[i] != 'a' + i / 4096)
				fail |= 4;
		if (lseek(g, 65536, SEEK_SET) != 65536 || write(g, "child", 5) != 5)
			fail |= 8;
		_exit(fail);
	}

	int status = 0;
	tap_is(waitpid(pid, &status, 0), pid, "child exited");
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child: no stack, the parent's 64 KiB in the file, its own write made (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	int all = 1;
	for (int i = 0; i < 16; i++)
		all &= w[i].ndone == 1 && w[i].r.res == 4096;
	tap_ok(all, "the parent's 16 writes completed once each, in the parent");
	tap_is(ut_completed, 16, "and nothing else completed");
	tap_ok(ut_bottom(g) == NULL, "the parent's stack is closed too");
	tap_is(lseek(g, 0, SEEK_CUR), 65541, "the child's write moved the shared offset");
	char tail[8] = {0};
	tap_is(pread(g, tail, sizeof tail, 65536), 5, "the parent reads the child's bytes");
	struct stat st;
	tap_ok(fstat(g, &st) == 0 && st.st_size == 65541 && memcmp(tail, "child", 5) == 0,
	       "file: parent's 64 KiB and the child's 5 bytes");
	ffclose(g);
	return tap_done();
}
