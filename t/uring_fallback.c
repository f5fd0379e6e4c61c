/* t/uring_fallback.c -- where io_uring cannot be set up (forced here with
 * the test knob FF_IO_URING_DISABLE=1) the uring layer says so once and
 * behaves as sys: requests complete inside submit, data is right, and the
 * log holds exactly one message for any number of files.  The program
 * re-executes itself with the knob and a log file set. */
#include "uring_common.h"

int main(int argc, char **argv)
{
	(void)argc;
	char log[300];
	if (!getenv("URING_FALLBACK_CHILD")) {
		ut_mkdir("uring_fallback");
		snprintf(log, sizeof log, "%s/log", ut_dir);
		setenv("URING_FALLBACK_CHILD", ut_dir, 1);
		setenv("FF_IO_LOGFILE", log, 1);
		setenv("FF_IO_URING_DISABLE", "1", 1);
		fflush(stdout);
		execv(tap_self(), argv);
		perror("execv");
		return 1;
	}
	snprintf(ut_dir, sizeof ut_dir, "%s", getenv("URING_FALLBACK_CHILD"));
	atexit(ut_cleanup);
	snprintf(log, sizeof log, "%s/log", ut_dir);
	tap_plan(9);

	int fd[3];
	char name[16];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "f%d", i);
		fd[i] = ffopen(ut_path(name), O_RDWR | O_CREAT | O_TRUNC, 0644,
			       i == 2 ? "uring.direct.sqpoll:2" : "uring:4");
	}
	tap_ok(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0, "three files open over uring");

	struct ffio_layer *b = ut_bottom(fd[0]);
	static char buf[8][1000];
	static struct ut_req w[8];
	int inline_done = 1;
	ut_completed = 0;
	for (int i = 0; i < 8; i++) {
		memset(buf[i], '0' + i, sizeof buf[i]);
		ut_prep(&w[i], FFIO_OP_WRITE, buf[i], sizeof buf[i], (off_t)i * 1000);
		ffio_below_submit(ut_at(b), &w[i].r);
		inline_done &= w[i].ndone == 1 && w[i].r.res == 1000;
	}
	tap_ok(inline_done, "each request completes inside submit, in full");
	tap_is(ffio_below_commit(ut_at(b)), 0, "commit is a no-op");
	tap_is(ffio_below_reap(ut_at(b), 1), 0, "reap has nothing left");
	char got[8000];
	tap_is(ffpread(fd[0], got, sizeof got, 0), 8000, "the bytes read back");
	int same = 1;
	for (int i = 0; i < 8000; i++)
		same &= got[i] == '0' + i / 1000;
	tap_ok(same, "and they are the written bytes");
	tap_is(ffpwrite(fd[1], "hello", 5, 0), 5, "a synchronous write on the second file");

	for (int i = 0; i < 3; i++)
		ffclose(fd[i]);
	FILE *lf = fopen(log, "r");
	int lines = 0, msgs = 0;
	char line[512];
	while (lf && fgets(line, sizeof line, lf)) {
		lines++;
		msgs += strstr(line, "layer 'uring' is not available here") != NULL;
	}
	if (lf)
		fclose(lf);
	tap_is(msgs, 1, "one message says io_uring is unavailable");
	tap_is(lines, 1, "and nothing else is logged");
	return tap_done();
}
