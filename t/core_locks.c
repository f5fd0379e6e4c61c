/* t/core_locks.c -- fcntl locks as coherence points between two processes
 * that each cache the same file: releasing a lock flushes the writer's
 * dirty data, acquiring one drops the reader's clean pages, so the reader
 * sees the writer's bytes (the way ROMIO's data sieving and SQLite use
 * locks).  Ordered with pipes, never with sleeps. */
#include "config.h"
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio.h"
#include "kernel_view.h"
#include "tap.h"

static int lock(int fd, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	return fcntl(fd, F_SETLKW, &fl);
}

static void say(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(98);
}

/* A raw read: ffio's read of a pipe is a message heard, which drops the
 * reader's cache by itself; here the lock must. */
static void await(int fd)
{
	char c;
	if (syscall(SYS_read, fd, &c, 1) != 1)
		_exit(98);
}

/* The first n bytes of the file as the file system has them (raw system
 * calls: an open of the file here would join the writer's cache), as a string in buf of size bytes: what was read, then a NUL;
 * "?" when the file cannot be read. */
static void raw_read(const char *path, char *buf, size_t size, size_t n)
{
	if (n >= size)
		n = size - 1;
	ssize_t got = kernel_pread(path, buf, n, 0);
	if (got < 0)
		strcpy(buf, "?");
	else
		buf[got] = '\0';
}

int main(void)
{
	char path[] = "/tmp/ffio-core-locks-XXXXXX";
	int tmp = mkstemp(path), to_child[2], to_parent[2];
	char buf[8];

	if (tmp < 0 || pipe(to_child) < 0 || pipe(to_parent) < 0)
		return 99;
	if (write(tmp, "AAAA", 4) != 4)
		return 99;
	close(tmp);
	tap_plan(7);

	pid_t pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) { /* the reader */
		/* Only the writer holds the other ends: should it die, await()
		 * sees the end of the pipe and the reader exits, not hangs. */
		close(to_child[1]);
		close(to_parent[0]);
		int fd = ffopen(path, O_RDWR, 0, "cache:4k:4:1");
		int ok = fd >= 0 && ffpread(fd, buf, 4, 0) == 4 && memcmp(buf, "AAAA", 4) == 0;
		say(to_parent[1]);       /* "AAAA" is now in my cache */
		await(to_child[0]);      /* the writer has released its lock */
		ok = ok && lock(fd, F_RDLCK) == 0;
		ok = ok && ffpread(fd, buf, 4, 0) == 4 && memcmp(buf, "BBBB", 4) == 0;
		ok = ok && lock(fd, F_UNLCK) == 0 && ffclose(fd) == 0;
		_exit(ok ? 0 : 1);
	}
	close(to_child[0]);
	close(to_parent[1]);
	await(to_parent[0]);
	int fd = ffopen(path, O_RDWR, 0, "cache:4k:4:1");
	tap_ok(fd >= 0, "the writer opens the file over a cache");
	tap_is(lock(fd, F_WRLCK), 0, "takes a write lock");
	tap_is(ffpwrite(fd, "BBBB", 4, 0), 4, "writes under the lock");
	raw_read(path, buf, sizeof buf, 4);
	tap_is_str(buf, "AAAA", "the write is still cached (not on the file yet)");
	tap_is(lock(fd, F_UNLCK), 0, "releases the lock");
	raw_read(path, buf, sizeof buf, 4);
	tap_is_str(buf, "BBBB", "releasing the lock flushed it");
	say(to_child[1]);
	int st;
	tap_ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "the reader, which had AAAA cached, read BBBB after taking its lock");
	ffclose(fd);
	unlink(path);
	return tap_done();
}
