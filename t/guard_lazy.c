/* t/guard_lazy.c -- a file open for writing starts its guardian at its
 * first write into the cache, not at its first page: a process that only
 * reads such a file (ROMIO opens read-write; its data-sieving reads go
 * through the cache) pays for no guardian.  Pages made before that write
 * (loaded for reads, or a buffer of such a page taken again for another
 * page) move to guarded memory when they first take the application's
 * bytes: a SIGKILL right after the write returned leaves those bytes in
 * the file, written back by the guardian.
 *
 * Each case runs in a child (its own guardian) that opens the file with
 * ffopen over a cache, reads, says whether a guardian runs, writes, says
 * so again, and is killed; the parent waits for the child's guardian to
 * end and compares the file with what the kernel would hold. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "ffio_ext.h"
#include "guard/guard.h"
#include "kill_safe.h"
#include "tap.h"

#define PAGE 65536
#define FILE_LEN (8 * PAGE)

static char dir[PATH_MAX / 2], path[PATH_MAX];
static unsigned char want[FILE_LEN];

/* What the child says: the guardian's pid after its reads, after its
 * writes, and whether its calls returned what they should. */
struct said {
	pid_t after_reads, after_writes;
	int calls_ok;
};

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The file before each case: a pattern, with plain calls. */
static void make_file(void)
{
	for (size_t i = 0; i < FILE_LEN; i++)
		want[i] = (unsigned char)(i * 7 + i / 4093);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, want, FILE_LEN) != FILE_LEN || close(fd) < 0)
		bail("making the file");
}

/* A write of the case, applied to want too (the kernel's view). */
struct put {
	off_t off;
	size_t n;
	unsigned char c;
};

/* The child: read the pages reads[] (records of 100 B), then write
 * puts[], each its own pattern byte; report, then die of SIGKILL. */
static void child(const char *spec, const off_t *reads, int nreads, const struct put *puts, int nputs, int out)
{
	struct said s = {0, 0, 1};
	unsigned char buf[PAGE];
	int fd = ffopen(path, O_RDWR, 0, spec);

	if (fd < 0)
		_exit(2);
	for (int i = 0; i < nreads; i++)
		if (ffpread(fd, buf, 100, reads[i]) != 100 || memcmp(buf, want + reads[i], 100) != 0)
			s.calls_ok = 0;
	s.after_reads = ffio_guardian_pid();
	for (int i = 0; i < nputs; i++) {
		memset(buf, puts[i].c, puts[i].n);
		if (ffpwrite(fd, buf, puts[i].n, puts[i].off) != (ssize_t)puts[i].n)
			s.calls_ok = 0;
	}
	s.after_writes = ffio_guardian_pid();
	/* the kernel's write, not ffio's: a write to a pipe is a message to
	 * another process, for which ffio writes every cache back first */
	if (syscall(SYS_write, out, &s, sizeof s) != (long)sizeof s)
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

/* Wait for process pid (not our child) to end: 1 when it did within 60 s. */
static int ended(pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return errno == ESRCH;
	struct pollfd p = {.fd = pfd, .events = POLLIN};
	int r = poll(&p, 1, 60000);
	close(pfd);
	return r == 1;
}

static void one_case(const char *name, const char *spec, const off_t *reads, int nreads, const struct put *puts,
		     int nputs)
{
	int pp[2], status;
	struct said s;

	make_file();
	if (pipe2(pp, O_CLOEXEC) < 0)
		bail("pipe");
	pid_t pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		close(pp[0]);
		child(spec, reads, nreads, puts, nputs, pp[1]);
	}
	close(pp[1]);
	ssize_t got = read(pp[0], &s, sizeof s);
	close(pp[0]);
	if (waitpid(pid, &status, 0) != pid)
		bail("waitpid");
	if (got != (ssize_t)sizeof s) {
		tap_ok(0, "%s: the child reported (status %#x)", name, status);
		return;
	}
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "%s: the child died of SIGKILL", name);
	tap_ok(s.calls_ok, "%s: its reads and writes returned the kernel's results", name);
	tap_is(s.after_reads, 0, "%s: no guardian after its reads", name);
	tap_ok(s.after_writes > 0, "%s: a guardian after its first write (%d)", name, (int)s.after_writes);
	tap_ok(s.after_writes <= 0 || ended(s.after_writes), "%s: the guardian ended after the child", name);
	for (int i = 0; i < nputs; i++)
		memset(want + puts[i].off, puts[i].c, puts[i].n);
	unsigned char *have = malloc(FILE_LEN + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 || !have ? -1 : pread(fd, have, FILE_LEN + 1, 0);
	if (fd >= 0)
		close(fd);
	size_t bad = 0;
	for (ssize_t i = 0; n == FILE_LEN && i < n; i++)
		bad += have[i] != want[i];
	tap_ok(n == FILE_LEN && bad == 0, "%s: the file holds every byte written, and the rest as it was (%zd bytes, %zu wrong)",
	       name, n, bad);
	free(have);
}

int main(void)
{
	const char *g = getenv("FF_IO_GUARD");
	if (ffio_guard_under_valgrind() || (g && strcmp(g, "0") == 0))
		tap_skip_all("nothing is guarded here (valgrind, or FF_IO_GUARD=0)");
	tap_tmpdir(dir, sizeof dir, "guard_lazy");
	snprintf(path, sizeof path, "%s/f.dat", dir);
	tap_plan(3 * 6);

	/* a page loaded by a read, then written: its buffer moves */
	const off_t r1[] = {100};
	const struct put w1[] = {{1000, 300, 0xa1}, {PAGE - 50, 100, 0xa2}};
	one_case("read page written", "cache:64k:4:0", r1, 1, w1, 2);

	/* pages read fill the cache; the write's page takes a read page's
	 * buffer (evicted clean), which moves too */
	const off_t r2[] = {0, PAGE, 2 * PAGE, 3 * PAGE};
	const struct put w2[] = {{5 * PAGE + 10, 5000, 0xb1}};
	one_case("reused read buffer written", "cache:64k:4:0", r2, 4, w2, 1);

	/* sieved: the read page takes records spread over it */
	const off_t r3[] = {200, 3 * PAGE + 7};
	const struct put w3[] = {{300, 8, 0xc1}, {4396, 8, 0xc2}, {8492, 8, 0xc3}, {3 * PAGE + 9000, 16, 0xc4}};
	one_case("sieved read page written", "cache.sieve:64k:4:0", r3, 2, w3, 4);

	unlink(path);
	rmdir(dir);
	return tap_done();
}
