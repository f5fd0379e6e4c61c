/* t/fuse_lag.c -- on a FUSE file system whose server tells sizes late
 * (t/lagfs: writes acknowledged before the size reaches the server, as
 * GlusterFS's write-behind has them), a program that writes and reads
 * back without a stat call reads its bytes back, and must with ffio too.
 * A plain stat there asks the server, and the kernel takes the late size
 * for its own and ends reads at it; ffio asks sizes and identities for
 * itself (its cache's size below after a coherence point forgot it, the
 * type of a descriptor read from) and must ask the kernel alone.
 *
 * The bytes are read back in reads smaller than a page (through the
 * cache's pages), each asking for bytes written, no more: a read past the end the
 * kernel knows asks the server too (as a stat does), without ffio also.
 * The kernel without ffio first: writes, a pipe read, the bytes read
 * back; then a plain stat, which sees the late size (the hazard itself).
 * Then through a cache: writes, a pipe read (a coherence point: the
 * cache writes back and forgets the sizes), every byte read back; more
 * writes past the end, again; and the file as the kernel has it after
 * close.  Skipped where lagfs cannot be mounted (no /dev/fuse, not root,
 * no libfuse 3). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio.h"
#include "tap.h"

#define LEN 12388  /* three 4 KiB pages and 100 bytes */
#define MORE 5000  /* written past that end */
#define SPEC "cache:4k:16:0"
#define PIECE 1000 /* reads smaller than a page: through the cache's pages */

static char dir[4096], mnt[4200];
static pid_t server = -1;

/* Byte i of the file's data. */
static char byte_at(long i)
{
	return (char)('A' + (i * 7 + i / 4096) % 53);
}

static void fill(char *buf, long off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = byte_at(off + (long)i);
}

static int holds(const char *buf, long off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != byte_at(off + (long)i))
			return 0;
	return 1;
}

/* A message through a pipe, as from another process: for ffio a
 * coherence point (the caches write back, and forget sizes). */
static int hear(void)
{
	int p[2];
	char c = 'x';
	if (pipe(p) < 0)
		return 0;
	int ok = write(p[1], &c, 1) == 1 && read(p[0], &c, 1) == 1;
	close(p[0]);
	close(p[1]);
	return ok;
}

/* Read [0, len) back in reads of PIECE bytes (raw: by the kernel
 * alone), until one comes short: the bytes read. */
static long read_back(int fd, char *buf, long len, int raw)
{
	long done = 0;
	while (done < len) {
		size_t n = len - done < PIECE ? (size_t)(len - done) : PIECE;
		long r = raw ? syscall(SYS_pread64, fd, buf + done, n, done) : (long)pread(fd, buf + done, n, done);
		if (r <= 0)
			break;
		done += r;
		if ((size_t)r < n)
			break;
	}
	return done;
}

/* Start lagfs on mnt; 0 when it mounted (it says so through a pipe from
 * its init, or closes the pipe unsaid when it fails). */
static int mount_lagfs(const char *prog)
{
	int ready[2];
	char c;
	if (pipe(ready) < 0)
		return -1;
	server = fork();
	if (server < 0)
		return -1;
	if (server == 0) {
		char fd[16];
		close(ready[0]);
		snprintf(fd, sizeof fd, "%d", ready[1]);
		setenv("LAGFS_READY_FD", fd, 1);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2); /* its complaints when it cannot mount */
		execl(prog, "lagfs", "-f", "-s", mnt, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	ssize_t r = read(ready[0], &c, 1);
	close(ready[0]);
	if (r != 1) {
		waitpid(server, NULL, 0);
		server = -1;
		return -1;
	}
	return 0;
}

static void unmount_lagfs(void)
{
	if (server < 0)
		return;
	if (umount2(mnt, 0) < 0)
		kill(server, SIGTERM);
	waitpid(server, NULL, 0);
	server = -1;
}

static void cleanup(void)
{
	unmount_lagfs();
	rmdir(mnt);
	rmdir(dir);
}

/* The kernel alone: the same writes, a pipe read, the read back. */
static void kernel_alone(void)
{
	static char buf[LEN + MORE];
	char path[4300];
	snprintf(path, sizeof path, "%s/kernel.dat", mnt);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		tap_ok(0, "the kernel alone: open %s: %s", path, strerror(errno));
		tap_skip("the kernel alone: no file");
		return;
	}
	fill(buf, 0, LEN);
	int wrote = 1;
	for (long off = 0; off < LEN; off += LEN / 4)
		wrote &= syscall(SYS_pwrite64, fd, buf + off, (size_t)(LEN / 4), off) == LEN / 4;
	memset(buf, 0, sizeof buf);
	int heard = hear();
	long got = read_back(fd, buf, LEN, 1);
	tap_ok(wrote && heard && got == LEN && holds(buf, 0, LEN),
	       "the kernel alone: 4 writes, a pipe read, all %d bytes read back (got %ld)", LEN, got);

	struct stat st;
	int rc = (int)syscall(SYS_fstat, fd, &st);
	tap_ok(rc == 0 && st.st_size == 0, "the kernel alone: a plain stat asks the server, which tells the size "
					   "late (%lld)", rc == 0 ? (long long)st.st_size : -1LL);
	got = read_back(fd, buf, LEN, 1);
	tap_diag("after that stat the kernel reads %ld of %d bytes back", got, LEN);
	syscall(SYS_close, fd);
}

/* A file ffio does not manage (no spec names it), written and read back
 * with write and read through ffio's calls: ffio learns what each
 * descriptor read from brings (a file: nothing from another process). */
static void unmanaged(void)
{
	static char buf[LEN];
	char path[4300];
	snprintf(path, sizeof path, "%s/plain.dat", mnt);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fill(buf, 0, LEN);
	int wrote = fd >= 0;
	for (long off = 0; wrote && off < LEN; off += LEN / 4)
		wrote &= write(fd, buf + off, (size_t)(LEN / 4)) == LEN / 4;
	memset(buf, 0, sizeof buf);
	long got = -1;
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0) {
		got = 0;
		for (ssize_t r = 1; got < LEN && r > 0; got += r > 0 ? r : 0)
			r = read(fd, buf + got, (size_t)(LEN - got) < PIECE ? (size_t)(LEN - got) : PIECE);
	}
	tap_ok(wrote && got == LEN && holds(buf, 0, LEN),
	       "a file no spec names: 4 writes, all %d bytes read back with read (got %ld)", LEN, got);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static char buf[LEN + MORE + 100], self[4096], prog[4200];
	char path[4300];
	(void)argc;

	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(prog, sizeof prog, "%s/lagfs", dirname(self));
	if (access("/dev/fuse", R_OK | W_OK) != 0)
		tap_skip_all("no /dev/fuse");
	if (access(prog, X_OK) != 0)
		tap_skip_all("t/lagfs not built (no libfuse 3)");
	snprintf(dir, sizeof dir, "/tmp/ffio-t-fuse_lag.XXXXXX");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	snprintf(mnt, sizeof mnt, "%s/mnt", dir);
	if (mkdir(mnt, 0755) < 0 || mount_lagfs(prog) < 0) {
		cleanup();
		tap_skip_all("lagfs cannot be mounted here (FUSE refused, or not root)");
	}
	atexit(cleanup);
	tap_plan(10);

	kernel_alone();
	unmanaged();

	snprintf(path, sizeof path, "%s/ffio.dat", mnt);
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, SPEC);
	if (fd < 0) {
		tap_diag("ffopen %s: %s", path, strerror(errno));
		return 1;
	}
	fill(buf, 0, LEN);
	int wrote = 1;
	for (long off = 0; off < LEN; off += LEN / 4)
		wrote &= pwrite(fd, buf + off, (size_t)(LEN / 4), off) == LEN / 4;
	tap_ok(wrote, "through " SPEC ": 4 writes of %d bytes", LEN / 4);

	memset(buf, 0, sizeof buf);
	int heard = hear();
	long got = read_back(fd, buf, LEN, 0);
	tap_ok(heard && got == LEN && holds(buf, 0, LEN),
	       "after a pipe read, all %d bytes read back (got %ld)", LEN, got);

	fill(buf, LEN, MORE);
	tap_ok(pwrite(fd, buf, MORE, LEN) == MORE, "%d bytes more past the end", MORE);
	memset(buf, 0, sizeof buf);
	heard = hear();
	got = read_back(fd, buf, LEN + MORE, 0);
	tap_ok(heard && got == LEN + MORE && holds(buf, 0, LEN + MORE),
	       "after another pipe read, all %d bytes read back (got %ld)", LEN + MORE, got);
	tap_is(lseek(fd, 0, SEEK_CUR), 0, "the descriptor's position unmoved by the preads");
	tap_is(close(fd), 0, "close");

	/* The file as the kernel has it: after the close's flush the
	 * server tells the whole size. */
	memset(buf, 0, sizeof buf);
	int kfd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int rc = kfd >= 0 ? (int)syscall(SYS_fstat, kfd, &st) : -1;
	got = kfd >= 0 ? syscall(SYS_pread64, kfd, buf, sizeof buf, 0) : -1;
	if (kfd >= 0)
		syscall(SYS_close, kfd);
	tap_ok(rc == 0 && st.st_size == LEN + MORE && got == LEN + MORE && holds(buf, 0, LEN + MORE),
	       "the kernel's file: %d bytes, each as written (size %lld, read %ld)", LEN + MORE,
	       rc == 0 ? (long long)st.st_size : -1LL, got);
	return tap_done();
}
