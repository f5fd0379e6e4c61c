/* t/posix_calls.c -- every interposed libc file call on a managed file
 * (FF_IO_OPTS matching *.dat), checked for data and behaviour: positions
 * shared across dup, O_APPEND, sizes that include unflushed data, flush
 * points (fsync, locks, mmap, copy_file_range, fork, exec), and that every
 * name the program references binds to libffio.  Built plain, with
 * _FILE_OFFSET_BITS=64 and with _FORTIFY_SOURCE=2, linked with libffio or
 * preloaded (t/posix_preload.sh).
 *
 * The program re-executes itself once with FF_IO_OPTS (argv[1], or the
 * default below), FF_IO_OPEN_DIAGS and FF_IO_LOGFILE set.  The file's
 * contents are checked with raw system calls, which ffio cannot see.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define DEFAULT_SPEC "*.dat(event.summary, cache:4k:4:1, sys)"

int __open_2(const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
int __fxstat(int ver, int fd, struct stat *st);
int __xstat(int ver, const char *path, struct stat *st);

/* ---- raw access (the kernel's view, bypassing every wrapper) ---------- */

static ssize_t raw_file(const char *path, char *buf, size_t max)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = syscall(SYS_pread64, fd, buf, max, 0);
	syscall(SYS_close, fd);
	return n;
}

static long raw_size(const char *path)
{
	struct stat st;
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) < 0)
		return -1;
	return (long)st.st_size;
}

/* The file holds exactly want (n bytes), as the kernel sees it. */
static int raw_is(const char *path, const char *want, size_t n)
{
	static char buf[1 << 16];
	ssize_t got = raw_file(path, buf, sizeof buf);
	return got == (ssize_t)n && memcmp(buf, want, n) == 0;
}

static long fd_size(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- binding ----------------------------------------------------------- */

static int in_libffio(void *fn)
{
	Dl_info info;
	return fn && dladdr(fn, &info) && info.dli_fname && strstr(info.dli_fname, "libffio");
}

#define BIND(name) { #name, (void *)&name }
static void check_binding(void)
{
	static const struct { const char *name; void *fn; } calls[] = {
		BIND(open), BIND(openat), BIND(creat), BIND(__open_2), BIND(close),
		BIND(read), BIND(write), BIND(__read_chk), BIND(pread), BIND(pwrite),
		BIND(__pread_chk), BIND(readv), BIND(writev), BIND(preadv), BIND(pwritev),
		BIND(preadv2), BIND(pwritev2), BIND(lseek), BIND(fsync), BIND(fdatasync),
		BIND(ftruncate), BIND(truncate), BIND(fstat), BIND(stat), BIND(lstat),
		BIND(fstatat), BIND(statx), BIND(__fxstat), BIND(__xstat), BIND(fcntl),
		BIND(flock), BIND(lockf), BIND(dup), BIND(dup2), BIND(dup3),
		BIND(posix_fadvise), BIND(fallocate), BIND(posix_fallocate), BIND(mmap),
		BIND(copy_file_range), BIND(sendfile), BIND(splice), BIND(execve),
		BIND(execv), BIND(execvp), BIND(execl), BIND(fexecve),
		BIND(open64), BIND(pread64), BIND(pwrite64), BIND(lseek64), BIND(fstat64),
		BIND(stat64), BIND(fcntl64), BIND(ftruncate64), BIND(mmap64),
	};
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* A sanitizer's runtime interposes these names ahead of every library. */
	const int sanitized = 1;
#else
	const int sanitized = 0;
#endif
	int bad = 0;
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (!in_libffio(calls[i].fn)) {
			if (!sanitized)
				tap_diag("%s does not bind to libffio", calls[i].name);
			bad++;
		}
	if (sanitized)
		tap_skip("names bind to the sanitizer runtime first in a sanitizer build");
	else
		tap_is(bad, 0, "all %zu referenced names bind to libffio", sizeof calls / sizeof calls[0]);
}

/* ---- the calls --------------------------------------------------------- */

static char pat[8192]; /* the bytes written: pattern by offset */

static void fill(void)
{
	for (size_t i = 0; i < sizeof pat; i++)
		pat[i] = (char)('a' + (i * 7 + i / 13) % 26);
}

static void test_rw(void)
{
	char buf[4096];
	int fd = open("rw.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_ok(fd >= 0, "open O_CREAT");
	tap_is(write(fd, pat, 100), 100, "write");
	tap_is(pwrite(fd, pat + 100, 100, 100), 100, "pwrite");
	struct iovec wv[2] = { { pat + 200, 50 }, { pat + 250, 50 } };
	tap_is(lseek(fd, 200, SEEK_SET), 200, "lseek SEEK_SET");
	tap_is(writev(fd, wv, 2), 100, "writev");
	struct iovec pv[2] = { { pat + 300, 30 }, { pat + 330, 70 } };
	tap_is(pwritev(fd, pv, 2, 300), 100, "pwritev");
	struct iovec p2[1] = { { pat + 400, 100 } };
	tap_is(pwritev2(fd, p2, 1, 400, 0), 100, "pwritev2 at an offset");
	tap_is(lseek(fd, 0, SEEK_CUR), 300, "position after writev only");
	tap_is(lseek(fd, 500, SEEK_SET), 500, "lseek");
	struct iovec p3[1] = { { pat + 500, 100 } };
	tap_is(pwritev2(fd, p3, 1, -1, 0), 100, "pwritev2 at the position");
	tap_is(lseek(fd, 0, SEEK_END), 600, "lseek SEEK_END is the logical size");
	tap_is(fd_size(fd), 600, "fstat size includes unflushed data");
	struct stat st;
	tap_ok(stat("rw.dat", &st) == 0 && st.st_size == 600, "stat size by path");
	tap_ok(lstat("rw.dat", &st) == 0 && st.st_size == 600, "lstat size");
	tap_ok(fstatat(AT_FDCWD, "rw.dat", &st, 0) == 0 && st.st_size == 600, "fstatat size");
	tap_ok(fstatat(fd, "", &st, AT_EMPTY_PATH) == 0 && st.st_size == 600, "fstatat AT_EMPTY_PATH");
	struct statx stx;
	tap_ok(statx(AT_FDCWD, "rw.dat", 0, STATX_BASIC_STATS, &stx) == 0 && stx.stx_size == 600,
	       "statx size");
	tap_ok(__fxstat(1, fd, &st) == 0 && st.st_size == 600, "__fxstat size");
	tap_ok(__xstat(1, "rw.dat", &st) == 0 && st.st_size == 600, "__xstat size");

	memset(buf, 0, sizeof buf);
	tap_is(lseek(fd, 0, SEEK_SET), 0, "rewind");
	tap_ok(read(fd, buf, 150) == 150 && memcmp(buf, pat, 150) == 0, "read");
	size_t cap = sizeof buf; /* not constant to the compiler: fortify checks */
	tap_ok(__read_chk(fd, buf, 50, cap) == 50 && memcmp(buf, pat + 150, 50) == 0, "__read_chk");
	tap_ok(pread(fd, buf, 100, 250) == 100 && memcmp(buf, pat + 250, 100) == 0, "pread");
	tap_ok(__pread_chk(fd, buf, 10, 590, cap) == 10 && memcmp(buf, pat + 590, 10) == 0,
	       "__pread_chk");
	char a[60], b[40];
	struct iovec rv[2] = { { a, 60 }, { b, 40 } };
	tap_ok(readv(fd, rv, 2) == 100 && memcmp(a, pat + 200, 60) == 0 &&
		       memcmp(b, pat + 260, 40) == 0, "readv at the position");
	tap_ok(preadv(fd, rv, 2, 400) == 100 && memcmp(a, pat + 400, 60) == 0, "preadv");
	tap_ok(preadv2(fd, rv, 2, -1, 0) == 100 && memcmp(a, pat + 300, 60) == 0,
	       "preadv2 at the position");
	tap_is(pread(fd, buf, 100, 600), 0, "pread at the end: 0");
	volatile size_t vten = 10;
	size_t ten = vten; /* unknown at compile time: fortified calls */
	tap_ok(pread(fd, buf, ten, 100) == 10 && memcmp(buf, pat + 100, 10) == 0,
	       "pread of a run-time size");
	tap_ok(lseek(fd, 20, SEEK_SET) == 20 && read(fd, buf, ten) == 10 &&
		       memcmp(buf, pat + 20, 10) == 0, "read of a run-time size");

	tap_is(fsync(fd), 0, "fsync");
	tap_ok(raw_is("rw.dat", pat, 600), "after fsync the kernel has every byte");
	tap_is(ftruncate(fd, 1000), 0, "ftruncate grows");
	tap_is(fd_size(fd), 1000, "size after growing");
	tap_ok(pread(fd, buf, 10, 990) == 10 && memcmp(buf, "\0\0\0\0\0\0\0\0\0\0", 10) == 0,
	       "the grown part reads zeros");
	tap_is(truncate("rw.dat", 300), 0, "truncate by path of an open file");
	tap_is(fd_size(fd), 300, "size after truncate by path");
	tap_is(fdatasync(fd), 0, "fdatasync");
	tap_ok(raw_is("rw.dat", pat, 300), "after fdatasync the kernel has 300 bytes");
	tap_is(close(fd), 0, "close");
}

static void test_dup(void)
{
	char buf[64];
	int fd = open("dup.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	int fd2 = dup(fd);
	tap_ok(fd2 >= 0 && fd2 != fd, "dup");
	tap_is(write(fd, pat, 10), 10, "write on the first");
	tap_is(write(fd2, pat + 10, 10), 10, "write on the dup continues at the shared position");
	tap_is(lseek(fd, 0, SEEK_CUR), 20, "both see position 20");
	int fd3 = fcntl(fd, F_DUPFD, 100);
	tap_ok(fd3 >= 100, "F_DUPFD");
	int fd4 = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	tap_ok(fd4 >= 0 && (fcntl(fd4, F_GETFD) & FD_CLOEXEC), "F_DUPFD_CLOEXEC");
	tap_is(close(fd), 0, "close the original");
	tap_is(write(fd3, pat + 20, 10), 10, "write on F_DUPFD's descriptor");
	tap_ok(pread(fd2, buf, 30, 0) == 30 && memcmp(buf, pat, 30) == 0, "read through the dup");
	tap_is(fd_size(fd4), 30, "fstat through the other dup");

	int other = open("dup2.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_is(write(other, "zzzz", 4), 4, "write a second managed file");
	tap_is(dup2(fd2, other), other, "dup2 onto a managed descriptor");
	tap_ok(raw_is("dup2.dat", "zzzz", 4), "the replaced file was flushed and closed");
	tap_is(write(other, pat + 30, 10), 10, "write through dup2's descriptor");
	int fd5 = dup3(fd2, 200, O_CLOEXEC);
	tap_is(fd5, 200, "dup3");
	tap_is(lseek(fd5, 0, SEEK_CUR), 40, "dup3 shares the position");
	close(fd2);
	close(fd3);
	close(fd4);
	close(other);
	tap_is(close(fd5), 0, "close the last descriptor");
	tap_ok(raw_is("dup.dat", pat, 40), "the file has exactly what was written");
}

static void test_append(void)
{
	int fd = open("app.dat", O_CREAT | O_RDWR | O_TRUNC | O_APPEND, 0644);
	tap_ok((fcntl(fd, F_GETFL) & O_APPEND) != 0, "F_GETFL shows O_APPEND");
	tap_is(write(fd, pat, 10), 10, "append");
	lseek(fd, 0, SEEK_SET);
	tap_is(write(fd, pat + 10, 10), 10, "append after a seek to 0");
	tap_is(fd_size(fd), 20, "both appended");
	tap_is(fcntl(fd, F_SETFL, 0), 0, "F_SETFL clears O_APPEND");
	tap_ok((fcntl(fd, F_GETFL) & O_APPEND) == 0, "F_GETFL no longer shows it");
	lseek(fd, 0, SEEK_SET);
	tap_is(write(fd, "XY", 2), 2, "now writes at the position");
	close(fd);
	char want[20];
	memcpy(want, pat, 20);
	memcpy(want, "XY", 2);
	tap_ok(raw_is("app.dat", want, 20), "file contents after O_APPEND changes");
}

static void test_locks(void)
{
	int fd = open("lock.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	tap_is(fcntl(fd, F_SETLKW, &fl), 0, "fcntl F_SETLKW");
	tap_is(write(fd, pat, 100), 100, "write under the lock");
	fl.l_type = F_UNLCK;
	tap_is(fcntl(fd, F_SETLK, &fl), 0, "fcntl F_UNLCK");
	tap_ok(raw_is("lock.dat", pat, 100), "releasing the lock flushed the data");
	tap_is(flock(fd, LOCK_EX), 0, "flock LOCK_EX");
	tap_is(write(fd, pat + 100, 100), 100, "write under flock");
	tap_is(flock(fd, LOCK_UN), 0, "flock LOCK_UN");
	tap_ok(raw_is("lock.dat", pat, 200), "flock release flushed");
	lseek(fd, 0, SEEK_SET);
	tap_is(lockf(fd, F_LOCK, 10), 0, "lockf F_LOCK");
	tap_is(pwrite(fd, pat + 200, 100, 200), 100, "write under lockf");
	tap_is(lockf(fd, F_ULOCK, 10), 0, "lockf F_ULOCK");
	tap_ok(raw_is("lock.dat", pat, 300), "lockf release flushed");
	close(fd);
}

static void test_kernel_paths(void)
{
	int fd = open("map.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_is(write(fd, pat, 4096), 4096, "write a page");
	char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(m != MAP_FAILED && memcmp(m, pat, 4096) == 0, "mmap sees the written data");
	if (m != MAP_FAILED)
		munmap(m, 4096);
	int out = open("copy.out", O_CREAT | O_RDWR | O_TRUNC, 0644);
	loff_t in_off = 0;
	tap_is(pwrite(fd, pat + 4096, 100, 4096), 100, "more data, not flushed");
	tap_is(copy_file_range(fd, &in_off, out, NULL, 4196, 0), 4196, "copy_file_range");
	tap_ok(raw_is("copy.out", pat, 4196), "the copy has the unflushed data");
	tap_is(lseek(fd, 100, SEEK_SET), 100, "seek the source");
	int out2 = open("send.out", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_is(sendfile(out2, fd, NULL, 50), 50, "sendfile from the position");
	tap_is(lseek(fd, 0, SEEK_CUR), 150, "sendfile moved the position");
	tap_ok(raw_is("send.out", pat + 100, 50), "sendfile's data");
	int pfd[2];
	char buf[64];
	tap_ok(pipe(pfd) == 0, "pipe");
	loff_t soff = 10;
	tap_ok(splice(fd, &soff, pfd[1], NULL, 20, 0) == 20 && read(pfd[0], buf, 20) == 20 &&
		       memcmp(buf, pat + 10, 20) == 0, "splice from the file");
	close(pfd[0]);
	close(pfd[1]);
	/* copy into the managed file: it must relearn its data and size */
	int src = open("copy.out", O_RDONLY);
	loff_t zero = 0, dst = 5000;
	tap_is(copy_file_range(src, &zero, fd, &dst, 100, 0), 100, "copy_file_range into the file");
	tap_is(fd_size(fd), 5100, "its size includes the copy");
	tap_ok(pread(fd, buf, 10, 5000) == 10 && memcmp(buf, pat, 10) == 0, "and reads show it");
	tap_is(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0, "posix_fadvise DONTNEED");
	tap_is(posix_fallocate(fd, 0, 8192), 0, "posix_fallocate grows");
	tap_is(fd_size(fd), 8192, "size after posix_fallocate");
	tap_is(fallocate(fd, 0, 0, 10000), 0, "fallocate grows");
	tap_is(fd_size(fd), 10000, "size after fallocate");
	tap_ok(pread(fd, buf, 10, 0) == 10 && memcmp(buf, pat, 10) == 0, "data kept");
	close(fd);
	close(out);
	close(out2);
	close(src);
}

static void test_unlink(void)
{
	char buf[32];
	int fd = open("gone.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_is(unlink("gone.dat"), 0, "unlink an open managed file");
	tap_is(write(fd, pat, 32), 32, "write after unlink");
	tap_ok(pread(fd, buf, 32, 0) == 32 && memcmp(buf, pat, 32) == 0, "read after unlink");
	tap_is(close(fd), 0, "close after unlink");
}

static void test_fork_exec(const char *self)
{
	int fd = open("fork.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	tap_is(write(fd, pat, 100), 100, "write before fork");
	pid_t pid = fork();
	if (pid == 0) {
		/* the child: the data is already in the kernel; write more and exec */
		int ok = raw_is("fork.dat", pat, 100);
		if (write(fd, pat + 100, 100) != 100)
			ok = 0;
		char fdtext[16];
		snprintf(fdtext, sizeof fdtext, "%d", fd);
		if (ok)
			execl(self, self, "--exec-check", fdtext, (char *)NULL);
		_exit(1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child saw the flushed data; exec flushed its write and the new image wrote at its position");
	tap_is(close(fd), 0, "parent close");
	tap_ok(raw_is("fork.dat", pat, 300), "parent + child + exec'd child: 300 bytes, in order");
}

/* The exec'd child: the file has 200 bytes and fd is at 200. */
static int exec_check(const char *fdtext)
{
	int fd = atoi(fdtext);
	if (!raw_is("fork.dat", pat, 200))
		return 2;
	if (syscall(SYS_lseek, fd, 0, SEEK_CUR) != 200)
		return 3;
	if (syscall(SYS_write, fd, pat + 200, 100) != 100)
		return 4;
	return 0;
}

static void test_opens(void)
{
	int fds[6];
	fds[0] = open64("o1.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	fds[1] = creat("o2.dat", 0644);
	fds[2] = openat(AT_FDCWD, "o3.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	fds[3] = __open_2("o1.dat", O_RDONLY);
	fds[4] = open("plain.txt", O_CREAT | O_RDWR | O_TRUNC, 0644); /* not matched */
	fds[5] = creat64("o4.dat", 0644);
	int ok = 1;
	for (int i = 0; i < 6; i++)
		ok = ok && fds[i] >= 0;
	tap_ok(ok, "open64, creat, openat, __open_2, open, creat64");
	tap_is(write(fds[4], "unmatched", 9), 9, "write an unmatched file");
	tap_ok(raw_is("plain.txt", "unmatched", 9), "an unmatched file is written at once");
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	errno = 0;
	tap_ok(open("missing/x.dat", O_RDONLY) == -1 && errno == ENOENT, "open error: -1 ENOENT");
	errno = 0;
	tap_ok(read(-1, pat, 1) == -1 && errno == EBADF, "read on a bad descriptor: EBADF");
}

/* For exact event counts (t/posix_preload.sh): 1 open, 4 writes, 3 reads,
 * 1 close on count.dat in the current directory. */
static int count_run(void)
{
	char buf[16];
	int fd = open("count.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, pat, 16) != 16 || write(fd, pat, 16) != 16 ||
	    write(fd, pat, 16) != 16 || pwrite(fd, pat, 16, 48) != 16 ||
	    lseek(fd, 0, SEEK_SET) != 0 || read(fd, buf, 16) != 16 || read(fd, buf, 16) != 16 ||
	    pread(fd, buf, 16, 32) != 16 || close(fd) != 0)
		return 1;
	return raw_size("count.dat") == 64 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--count") == 0) {
		fill();
		return count_run();
	}
	if (argc == 3 && strcmp(argv[1], "--exec-check") == 0) {
		fill();
		return exec_check(argv[2]);
	}
	if (!getenv("FFIO_POSIX_TEST_RUN")) {
		/* Start again with the spec in the environment (read at start-up). */
		char dir[] = "/tmp/ffio-posix-XXXXXX";
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
		char log[64];
		snprintf(log, sizeof log, "%s/ffio.log", dir);
		setenv("FF_IO_OPTS", argc > 1 ? argv[1] : DEFAULT_SPEC, 1);
		setenv("FF_IO_LOGFILE", log, 1);
		setenv("FF_IO_OPEN_DIAGS", "1", 1);
		setenv("FFIO_POSIX_TEST_RUN", dir, 1);
		char *args[] = { (char *)tap_self(), argc > 1 ? argv[1] : DEFAULT_SPEC, NULL };
		execv(args[0], args);
		perror("execv");
		return 1;
	}
	const char *dir = getenv("FFIO_POSIX_TEST_RUN");
	if (chdir(dir) < 0) {
		perror(dir);
		return 1;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	tap_diag("FF_IO_OPTS=%s in %s", getenv("FF_IO_OPTS"), dir);
	fill();
	check_binding();
	test_opens();
	test_rw();
	test_dup();
	test_append();
	test_locks();
	test_kernel_paths();
	test_unlink();
	test_fork_exec(self);

	static char logtext[1 << 16];
	ssize_t ln = raw_file("ffio.log", logtext, sizeof logtext - 1);
	logtext[ln > 0 ? ln : 0] = '\0';
	if (getenv("FFIO_POSIX_TEST_MALFORMED")) {
		tap_ok(strstr(logtext, "FF_IO_OPTS") && !strstr(logtext, "open o1.dat"),
		       "a malformed spec: one message, plain I/O, same data");
	} else {
		tap_ok(strstr(logtext, "open o1.dat: entry 1") && strstr(logtext, "open o2.dat: entry 1") &&
			       strstr(logtext, "open o3.dat: entry 1") &&
			       strstr(logtext, "open o4.dat: entry 1"),
		       "every open name was interposed (open diagnostics)");
	}
	tap_ok(!strstr(logtext, "plain.txt") && !strstr(logtext, "copy.out"),
	       "unmatched files never appear in the log");
	int rc = tap_done();
	if (rc == 0) {
		const char *names[] = { "rw.dat", "dup.dat", "dup2.dat", "app.dat", "lock.dat", "map.dat",
					"copy.out", "send.out", "fork.dat", "o1.dat", "o2.dat",
					"o3.dat", "o4.dat", "plain.txt", "ffio.log" };
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			syscall(SYS_unlinkat, AT_FDCWD, names[i], 0);
		syscall(SYS_unlinkat, AT_FDCWD, dir, AT_REMOVEDIR);
	}
	return rc;
}
