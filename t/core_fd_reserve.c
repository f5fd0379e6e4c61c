/* t/core_fd_reserve.c -- ffio parks its own descriptors high (up to 1023,
 * t/core_park), which grows the kernel's descriptor table.  In a process
 * whose threads share that table (an MPI rank's progress threads), the
 * kernel grows it only after an RCU grace period: 5-15 ms in the first
 * managed open (or ffopen) of every rank.  So the library grows the
 * table at its start, one thread still, to twice the top: the test finds
 * it grown before main (FDSize in /proc/self/status), without a spec and,
 * re-executed, with FF_IO_OPTS; then it starts a thread and opens,
 * writes, syncs and closes managed files: the table does not grow again. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tap.h"

/* FDSize of /proc/self/status: the table's size; -1 if not found. */
static long fd_size(void)
{
	char buf[8192];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *s = strstr(buf, "\nFDSize:");
	return s ? strtol(s + 8, NULL, 10) : -1;
}

static int wake[2];

static void *sleeper(void *arg)
{
	char c;
	(void)arg;
	while (read(wake[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	char dir[4096], path[4200];
	struct rlimit rl;
	pthread_t t;

	(void)argc;
	if (!getenv("FF_IO_OPTS")) { /* (ffopen(3) needs no spec: grown without one too) */
		char size[32];
		snprintf(size, sizeof size, "%ld", fd_size());
		setenv("FFIO_TEST_FDSIZE_NO_SPEC", size, 1);
		setenv("FF_IO_OPTS", "*.dat(cache:64k:4:0)", 1);
		execv(tap_self(), argv);
		printf("Bail out! exec %s: %s\n", tap_self(), strerror(errno));
		return 1;
	}
	long at_start = fd_size(), no_spec = atol(getenv("FFIO_TEST_FDSIZE_NO_SPEC") ? getenv("FFIO_TEST_FDSIZE_NO_SPEC") : "-1");
	if (at_start < 0)
		tap_skip_all("no FDSize in /proc/self/status");
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		printf("Bail out! getrlimit: %s\n", strerror(errno));
		return 1;
	}
	long want = rl.rlim_cur < 2048 ? (long)rl.rlim_cur : 2048;
	tap_ok(no_spec >= want, "without a spec, the table has %ld slots before main (soft limit %llu: at least %ld)",
	       no_spec, (unsigned long long)rl.rlim_cur, want);
	tap_ok(at_start >= want, "with one, %ld", at_start);

	if (pipe(wake) < 0 || pthread_create(&t, NULL, sleeper, NULL) != 0) {
		printf("Bail out! a second thread: %s\n", strerror(errno));
		return 1;
	}
	tap_tmpdir(dir, sizeof dir, "core_fd_reserve");
	int bad = 0;
	char data[100];
	memset(data, 'd', sizeof data);
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof path, "%s/f%d.dat", dir, i);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		bad |= fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data || fsync(fd) < 0 || close(fd) < 0;
		unlink(path);
	}
	tap_ok(!bad, "8 managed files opened, written, synced and closed beside a second thread");
	tap_is(fd_size(), at_start, "the table did not grow (FDSize %ld)", at_start);
	if (write(wake[1], "x", 1) != 1 || pthread_join(t, NULL) != 0) {
		printf("Bail out! ending the thread\n");
		return 1;
	}
	rmdir(dir);
	return tap_done();
}
