/* t/trans_cases.c -- everyday situations in which a program must see with
 * ffio exactly what it sees without it, one case per run: t/trans_cases.sh
 * runs each case raw and preloaded over several stacks and compares what
 * the case printed.  Each case works on DIR/x.dat (matched by the specs),
 * runs its calls in a child process and prints, from the parent, what the
 * kernel then holds, so that a byte lost at the child's exit shows.
 *
 * Usage: trans_cases CASE DIR     (trans_cases list: the case names;
 *        trans_cases poke PATH N: case heard's writer in another program) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "trans_cases.h"

extern char **environ;
char path[4096];

void put(int fd, const char *s)
{
	ssize_t n = write(fd, s, strlen(s));
	printf("write %zd\n", n);
}

/* What the kernel holds, read by the parent (which never opened the file). */
static void show(void)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("file: missing\n");
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	printf("file: %zd bytes [", n);
	for (ssize_t i = 0; i < n; i++)
		putchar(buf[i] == '\n' ? '|' : buf[i]);
	printf("]\n");
}

static void case_closefrom(void)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "12345678");
	fflush(stdout);
	closefrom(3);
	exit(0);
}

static void case_close_range(void)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "12345678");
	fflush(stdout);
	printf("close_range %d\n", close_range(3, ~0U, 0));
	printf("write after %zd errno %d\n", write(fd, "x", 1), errno);
	exit(0);
}

static void case_fdopen(void)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "12345678");
	FILE *f = fdopen(fd, "a");
	fprintf(f, "stdio");
	printf("fclose %d\n", fclose(f));
	int g = open(path, O_RDONLY); /* may take the number fclose freed */
	char buf[32] = {0};
	printf("read %zd [%s]\n", read(g, buf, sizeof buf - 1), buf);
	exit(0);
}

static void case_two_opens(void)
{
	char buf[32] = {0};
	int a = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(a, "AAAAAAAA");
	int b = open(path, O_RDONLY);
	printf("second open reads %zd\n", read(b, buf, sizeof buf - 1));
	int d = open(path, O_RDWR);
	put(d, "BBBB");
	close(d);
	memset(buf, 0, sizeof buf);
	printf("first reads %zd [%s]\n", pread(a, buf, sizeof buf - 1, 0), buf);
	exit(0);
}

static void case_append_fork(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	put(fd, "AAAA\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int g = open(path, O_WRONLY | O_APPEND);
		put(g, "BBBB\n");
		close(g);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	put(fd, "CCCC\n");
	exit(0);
}

static void case_append_two(void)
{
	/* Two unrelated appenders: neither overwrites the other. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	put(fd, "first\n");
	int p[2];
	if (pipe(p) < 0)
		exit(99);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (read(p[0], &c, 1) != 1)
			_exit(99);
		execl("/bin/sh", "sh", "-c", "printf 'other\\n' >> \"$0\"", path, (char *)NULL);
		_exit(98);
	}
	put(fd, "second\n");
	if (write(p[1], "g", 1) != 1)
		exit(99);
	waitpid(pid, NULL, 0);
	put(fd, "third\n");
	exit(0);
}

static void case_fork_offset(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	put(fd, "parent1\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		put(fd, "child\n");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	put(fd, "parent2\n");
	printf("offset %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	exit(0);
}

static void case_osync_abort(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC, 0644);
	put(fd, "0123456789");
	fflush(stdout);
	signal(SIGABRT, SIG_DFL);
	abort();
}

static void case_exit_underscore(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	put(fd, "written before _exit");
	fflush(stdout);
	_exit(0);
}

static void case_system(void)
{
	char cmd[4200];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	put(fd, "abcdef");
	snprintf(cmd, sizeof cmd, "wc -c < '%s'", path);
	fflush(stdout);
	printf("system %d\n", system(cmd));
	FILE *p = popen(cmd, "r");
	char out[64] = {0};
	if (p && fgets(out, sizeof out, p))
		printf("popen: %s", out);
	if (p)
		pclose(p);
	put(fd, "gh");
	pid_t pid;
	char *argv[] = {"cat", path, NULL};
	fflush(stdout);
	if (posix_spawnp(&pid, "cat", NULL, NULL, argv, environ) == 0)
		waitpid(pid, NULL, 0);
	printf("\n");
	exit(0);
}

static void case_mmap(void)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "mapped bytes");
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		exit(99);
	printf("mapping [%.12s]\n", m);
	printf("pwrite %zd\n", pwrite(fd, "MAPPED", 6, 0));
	printf("mapping [%.12s]\n", m);
	memcpy(m + 7, "BYTES", 5);
	char buf[16] = {0};
	printf("pread %zd [%s]\n", pread(fd, buf, 12, 0), buf);
	munmap(m, 4096);
	close(fd);
	int g = open(path, O_RDWR); /* reopened after the mapping: still coherent */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, g, 0);
	put(g, "again");
	printf("mapping [%.12s]\n", m == MAP_FAILED ? "failed" : m);
	exit(0);
}

static void case_dup2_reuse(void)
{
	int a = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(a, "file data");
	int p[2];
	if (pipe(p) < 0)
		exit(99);
	printf("dup2 %d\n", dup2(p[1], a) == a); /* a now is the pipe */
	printf("write to pipe %zd\n", write(a, "pipe", 4));
	char buf[8] = {0};
	printf("read pipe %zd [%s]\n", read(p[0], buf, 4), buf);
	exit(0);
}

static void case_stdio_first(void)
{
	char buf[16] = {0};
	FILE *f = fopen(path, "w+");
	fputs("stdio", f);
	fflush(f);
	int fd = open(path, O_RDWR);
	printf("read %zd\n", read(fd, buf, sizeof buf - 1));
	printf("pwrite %zd\n", pwrite(fd, "XY", 2, 0));
	rewind(f);
	memset(buf, 0, sizeof buf);
	printf("fread %zu [%s]\n", fread(buf, 1, sizeof buf - 1, f), buf);
	fclose(f);
	put(fd, "+fd");
	exit(0);
}

static void case_stdout_redirect(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fflush(stdout);
	if (dup2(fd, STDOUT_FILENO) != STDOUT_FILENO)
		exit(99);
	printf("line1\n");
	fflush(stdout);
	if (write(fd, "line2\n", 6) != 6)
		exit(98);
	printf("line3\n");
	fflush(stdout);
	exit(0);
}

static void *stat_loop(void *arg)
{
	struct stat st;
	for (int i = 0; i < 20000 && !*(volatile int *)arg; i++)
		if (stat(path, &st) == 0 && st.st_size != 0 && st.st_size != 8)
			return (void *)1;
	return NULL;
}

static void case_threads(void)
{
	static int stop;
	pthread_t t[2];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, stat_loop, &stop);
	int bad = 0;
	for (int i = 0; i < 2000; i++) {
		fd = open(path, O_WRONLY | O_TRUNC);
		bad |= write(fd, "abcdefgh", 8) != 8;
		bad |= close(fd) != 0;
	}
	stop = 1;
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	printf("threads %s\n", bad ? "saw a wrong size or a failed call" : "clean");
	exit(0);
}

/* Times set on a file with writes not yet written back (cp -p sets them
 * on the open copy, then closes it): each call that sets them, then the
 * times the kernel holds once the file is closed. */
static void times_check(const char *how)
{
	struct stat st;
	if (stat(path, &st) == 0)
		printf("%s: mtime %lld.%09ld atime %lld\n", how, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		       (long long)st.st_atim.tv_sec);
	else
		printf("%s: stat %s\n", how, strerror(errno));
}

static void case_times(void)
{
	const struct timespec ts[2] = {{946684800, 0}, {946684801, 500}};
	const struct timeval tv[2] = {{946684802, 0}, {946684803, 7}};
	const struct utimbuf ub = {946684804, 946684805};
	char cmd[4 * sizeof path + 64];
	for (int how = 0; how < 7; how++) {
		static const char *const name[7] = {"futimens", "utimensat", "utimensat empty", "futimes",
						    "utimes", "lutimes", "utime"};
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = -1;
		put(fd, "0123456789");
		switch (how) {
		case 0: rc = futimens(fd, ts); break;
		case 1: rc = utimensat(AT_FDCWD, path, ts, 0); break;
		case 2: rc = utimensat(fd, "", ts, AT_EMPTY_PATH); break;
		case 3: rc = futimes(fd, tv); break;
		case 4: rc = utimes(path, tv); break;
		case 5: rc = lutimes(path, tv); break;
		default: rc = utime(path, &ub); break;
		}
		printf("%s %d\n", name[how], rc);
		close(fd);
		times_check(name[how]);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644); /* the copy cp -p makes */
	put(fd, "copied with cp -p");
	close(fd);
	if (utimensat(AT_FDCWD, path, ts, 0) != 0)
		printf("utimensat: %s\n", strerror(errno));
	snprintf(cmd, sizeof cmd, "cp -p '%s' '%s.copy.dat' && mv '%s.copy.dat' '%s'", path, path, path, path);
	fflush(stdout);
	printf("cp -p %d\n", system(cmd));
	times_check("cp -p");
	exit(0);
}

/* RLIMIT_FSIZE: writes cached before the limit is lowered stay; a write
 * that reaches the limit is cut there, one at it is EFBIG with SIGXFSZ
 * (counted, then with the default action: the process dies), as is a
 * truncation past it; the limit raised with prlimit; a program started
 * under the limit (this one, through system: fsize_writer) dies of
 * SIGXFSZ at it.  The limit
 * holds for every file the process writes: its report goes to a pipe. */
static volatile sig_atomic_t xfsz;
static void on_xfsz(int sig) { (void)sig, xfsz++; }

static void fsize_set(const char *how, rlim_t cur)
{
	struct rlimit rl;
	int rc = getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = cur;
	if (rc == 0)
		rc = how[0] == 's' ? setrlimit(RLIMIT_FSIZE, &rl) : prlimit(0, RLIMIT_FSIZE, &rl, NULL);
	printf("%s %llu: %d\n", how, (unsigned long long)cur, rc);
}

static void fsize_said(const char *what, long long n)
{
	printf("%s: %lld %s, SIGXFSZ %d\n", what, n, n < 0 ? strerror(errno) : "", (int)xfsz);
}

static void fsize_run(void)
{
	char cmd[sizeof path + 128], what[64];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	signal(SIGXFSZ, on_xfsz);
	put(fd, "cached before the limit, 44 bytes long .....");
	fsize_set("setrlimit", 20); /* below what was written */
	fsize_said("pwrite 8 at 16", pwrite(fd, "abcdefgh", 8, 16));
	fsize_said("pwrite 8 at 30", pwrite(fd, "abcdefgh", 8, 30));
	fsize_said("fsync", fsync(fd));
	fsize_set("setrlimit", 64);
	for (off_t at = 40; at <= 72; at += 8) {
		snprintf(what, sizeof what, "pwrite 8 at %lld", (long long)at);
		fsize_said(what, pwrite(fd, "abcdefgh", 8, at));
	}
	fsize_said("lseek 58", lseek(fd, 58, SEEK_SET));
	fsize_said("write 8", write(fd, "ABCDEFGH", 8));
	fsize_said("write 8", write(fd, "ABCDEFGH", 8));
	fsize_said("write 0", write(fd, "", 0));
	fsize_said("ftruncate 100", ftruncate(fd, 100));
	fsize_said("pwrite 2 at 62", pwrite(fd, "yz", 2, 62));
	fsize_set("prlimit", 80);
	fsize_said("pwrite 8 at 64", pwrite(fd, "12345678", 8, 64));
	fsize_said("pwrite 16 at 72", pwrite(fd, "ijklmnopqrstuvwx", 16, 72));
	fsize_said("close", close(fd));
	snprintf(cmd, sizeof cmd, "'/proc/%d/exe' fsize_writer '%s'", (int)getpid(), path);
	fflush(stdout);
	int st = system(cmd);
	printf("a program started under the limit: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	fd = open(path, O_WRONLY);
	signal(SIGXFSZ, SIG_DFL);
	fflush(stdout);
	fsize_said("pwrite 1 at 80, SIGXFSZ's default action", pwrite(fd, "!", 1, 80));
	exit(0);
}

static void case_fsize(void)
{
	char buf[512];
	ssize_t n;
	int p[2], st;
	if (pipe(p) != 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO), close(p[0]), close(p[1]);
		fsize_run();
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	waitpid(pid, &st, 0);
	printf("fsize: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	exit(0);
}

/* ioctl on a file with writes cached: FIONREAD (from the position, and
 * past the end: negative), FS_IOC_FIEMAP (the extents, whether allocated
 * yet or delayed), FIBMAP (a block now), FICLONE into a second file
 * (refused on ext4, done on XFS and btrfs: the copy must hold the cached
 * bytes). */
static void case_ioctl(void)
{
	char copy[sizeof path + 8];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), n = -1;
	put(fd, "0123456789 the bytes of a record, cached for now ....................................");
	for (off_t at = 10; at <= 200; at += 190) {
		lseek(fd, at, SEEK_SET);
		int rc = ioctl(fd, FIONREAD, &n);
		printf("FIONREAD at %lld: %d %d\n", (long long)at, rc, n);
	}
	struct {
		struct fiemap map;
		struct fiemap_extent ext[4];
	} fm = {.map = {.fm_length = FIEMAP_MAX_OFFSET, .fm_extent_count = 4}};
	int rc = ioctl(fd, FS_IOC_FIEMAP, &fm);
	printf("FIEMAP: %d, %u extents", rc, fm.map.fm_mapped_extents);
	for (unsigned i = 0; i < fm.map.fm_mapped_extents && i < 4; i++)
		printf(" [%llu +%llu%s]", (unsigned long long)fm.ext[i].fe_logical,
		       (unsigned long long)fm.ext[i].fe_length,
		       fm.ext[i].fe_flags & FIEMAP_EXTENT_LAST ? " last" : ""); /* delayed or not: the kernel's writeback */
	int block = 0;
	rc = ioctl(fd, FIBMAP, &block);
	printf("\nFIBMAP of block 0: %d, %s\n", rc, rc == 0 ? block ? "a block" : "none" : strerror(errno));
	snprintf(copy, sizeof copy, "%s.2.dat", path);
	int to = open(copy, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, " and more");
	rc = ioctl(to, FICLONE, fd);
	printf("FICLONE: %d %s\n", rc, rc < 0 ? strerror(errno) : "");
	char back[256] = "";
	ssize_t got = pread(to, back, sizeof back - 1, 0);
	printf("the clone: %zd [%.*s]\n", got, got > 0 ? (int)got : 0, back);
	close(to), unlink(copy);
	exit(0);
}

/* st_mtime and st_blocks after writes ffio caches: the kernel's with the
 * writes, through each stat call.  The times are set far back before
 * each write, so that the write must move them. */
static void case_stat_times(void)
{
	static const char *const how[] = {"fstat", "stat", "lstat", "fstatat", "fstatat empty", "statx",
					  "statx empty"};
	static char rec[12288];
	const struct timespec back[2] = {{946684800, 0}, {946684800, 0}}; /* 2000-01-01 */
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	memset(rec, 'r', sizeof rec);
	for (int i = 0; i < 7; i++) {
		struct stat st;
		struct statx sx;
		int rc;
		futimens(fd, back);
		ssize_t w = pwrite(fd, rec, sizeof rec, (off_t)i * 2 * (off_t)sizeof rec);
		switch (i) {
		case 0: rc = fstat(fd, &st); break;
		case 1: rc = stat(path, &st); break;
		case 2: rc = lstat(path, &st); break;
		case 3: rc = fstatat(AT_FDCWD, path, &st, 0); break;
		case 4: rc = fstatat(fd, "", &st, AT_EMPTY_PATH); break;
		default:
			rc = statx(i == 5 ? AT_FDCWD : fd, i == 5 ? path : "", i == 5 ? 0 : AT_EMPTY_PATH,
				   STATX_BASIC_STATS, &sx);
			st.st_size = (off_t)sx.stx_size, st.st_blocks = (blkcnt_t)sx.stx_blocks;
			st.st_mtime = sx.stx_mtime.tv_sec;
		}
		printf("write %zd, %s %d: size %lld, %lld blocks, mtime %s\n", w, how[i], rc,
		       (long long)st.st_size, (long long)st.st_blocks,
		       st.st_mtime == back[1].tv_sec ? "as set before the write" : "moved by the write");
	}
	/* Small writes into a page the cache holds, clean after the last stat. */
	for (int i = 0; i < 4; i++) {
		struct stat st;
		ssize_t w = pwrite(fd, "12345678", 8, 6 * 2 * (off_t)sizeof rec + 100 + 8 * i);
		if (i % 2 == 0) { /* the next one after the times set back */
			futimens(fd, back);
			printf("small write %zd\n", w);
			continue;
		}
		int rc = i == 3 ? stat(path, &st) : fstat(fd, &st);
		printf("small write %zd, %s %d: mtime %s\n", w, i == 3 ? "stat" : "fstat", rc,
		       st.st_mtime == back[1].tv_sec ? "as set before the write" : "moved by the write");
	}
	/* A descriptor ffio never saw (a raw system call): the same inode. */
	struct stat st;
	int other = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
	ssize_t w = pwrite(fd, "the end", 7, 200000);
	int rc = fstat(other, &st);
	printf("write %zd at the end, fstat of another descriptor %d: size %lld, %lld blocks\n", w, rc,
	       (long long)st.st_size, (long long)st.st_blocks);
	close(other);
	close(fd);
	exit(0);
}

/* Record locks as the kernel keeps them: a lock on one file orders the
 * writes to another (a child waiting for the lock on y.lock, which no spec
 * matches, then reads x.dat, written by the parent under that lock); and
 * a lock on a file stays when the file is then mapped (ffio passes it
 * through, and must not close a descriptor of it: that drops the
 * process's locks).  Each file is opened after the fork, so that no
 * description is shared with the child. */
static void case_locks(void)
{
	char lockpath[sizeof path + 16], path2[sizeof path + 16];
	snprintf(lockpath, sizeof lockpath, "%s.y.lock", path);
	snprintf(path2, sizeof path2, "%s.2.dat", path);
	int y = open(lockpath, O_RDWR | O_CREAT, 0644);
	struct flock wr = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	struct flock un = {.l_type = F_UNLCK, .l_whence = SEEK_SET};
	printf("lock y: %d\n", fcntl(y, F_SETLK, &wr));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char back[64] = "";
		int cy = open(lockpath, O_RDWR);
		printf("child: lock y after the parent: %d\n", fcntl(cy, F_SETLKW, &wr));
		int cx = open(path, O_RDONLY);
		ssize_t got = pread(cx, back, sizeof back - 1, 0);
		printf("child: x.dat then: %zd [%s]\n", got, got > 0 ? back : "");
		fflush(stdout);
		_exit(0);
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(fd, "written under the lock on y");
	fflush(stdout);
	int rc = fcntl(y, F_SETLK, &un);
	waitpid(pid, NULL, 0);
	printf("unlock y: %d\n", rc);
	fflush(stdout);
	int f2 = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	put(f2, "mapped");
	printf("lock 2.dat: %d\n", fcntl(f2, F_SETLK, &wr));
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f2, 0);
	printf("mmap 2.dat: %s\n", m == MAP_FAILED ? strerror(errno) : "mapped");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		int c2 = open(path2, O_RDONLY);
		rc = fcntl(c2, F_GETLK, &q);
		printf("child: F_GETLK on 2.dat: %d, %s\n", rc,
		       q.l_type == F_UNLCK ? "no lock" : q.l_pid == getppid() ? "the parent's lock" : "another lock");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	unlink(lockpath);
	unlink(path2);
	exit(0);
}

/* Descriptor numbers: ffio's own descriptors (each managed file's, a
 * ring's, the log's) take no number the program would get; and at its
 * RLIMIT_NOFILE the program gets EMFILE exactly where it would without
 * ffio, which gives its own up (those files pass through to the kernel).
 * Every file keeps every byte written. */
static void case_fd_numbers(void)
{
	static char big[256 << 10]; /* written back in pieces: over uring, a ring */
	char name[sizeof path + 16];
	int fds[64], n = 0, p[2], sv[2];

	memset(big, 'b', sizeof big);
	for (; n < 4; n++) {
		snprintf(name, sizeof name, "%s.%d.dat", path, n);
		fds[n] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
		printf("open %d, write %zd", fds[n], write(fds[n], big, sizeof big));
		printf(", fsync %d\n", fsync(fds[n]));
	}
	int d = dup(fds[0]), d2 = fcntl(fds[1], F_DUPFD, 0), d3 = fcntl(fds[2], F_DUPFD_CLOEXEC, 7);
	printf("dup %d, F_DUPFD %d, F_DUPFD_CLOEXEC from 7 %d\n", d, d2, d3);
	int rp = pipe(p), rs = socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ev = eventfd(0, 0);
	printf("pipe %d: %d %d, socketpair %d: %d %d, eventfd %d\n", rp, p[0], p[1], rs, sv[0], sv[1], ev);
	FILE *f = fopen(path, "w");
	printf("fopen: descriptor %d\n", f ? fileno(f) : -1);
	fclose(f);
	/* The limit a few descriptors above the lowest free one. */
	int low = dup(0);
	close(low);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)low + 12;
	printf("setrlimit NOFILE %d\n", setrlimit(RLIMIT_NOFILE, &rl));
	int first = n;
	for (; n < 40; n++) {
		char rec[32];
		snprintf(name, sizeof name, "%s.%d.dat", path, n);
		fds[n] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[n] < 0) {
			printf("open %s\n", strerror(errno));
			break;
		}
		snprintf(rec, sizeof rec, "record %d", n);
		printf("open %d, write %zd\n", fds[n], write(fds[n], rec, strlen(rec)));
	}
	d = dup(0);
	printf("dup %d %s, ", d, strerror(errno));
	rp = pipe(p);
	printf("pipe %d %s\n", rp, strerror(errno));
	close(fds[first]);
	printf("after a close: dup %d\n", dup(0));
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < n; i++) {
		char back[32] = "";
		snprintf(name, sizeof name, "%s.%d.dat", path, i);
		int fd = open(name, O_RDONLY);
		ssize_t got = pread(fd, back, sizeof back - 1, i < first ? (off_t)sizeof big - 4 : 0);
		printf("%d: %zd [%s]%s", i, got, got > 0 ? back : "", i % 4 == 3 ? "\n" : " ");
		close(fd);
		unlink(name);
	}
	printf("\n");
	exit(0);
}

/* Files the kernel makes at each read (/proc, /sys: their size says 0 or
 * 4096, whatever they hold), matched by an entry: read as the kernel reads
 * them, and a write to one reaches the kernel at once. */
static void case_kernel_files(void)
{
	static const char *const name[] = {"/proc/sys/kernel/ostype", "/proc/sys/kernel/random/boot_id",
					   "/sys/devices/system/cpu/possible", "/proc/self/comm"};
	for (size_t i = 0; i < sizeof name / sizeof name[0]; i++) {
		char buf[8192];
		struct stat st;
		int fd = open(name[i], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) < 0) {
			printf("%s: %s\n", name[i], strerror(errno));
			continue;
		}
		ssize_t got = read(fd, buf, sizeof buf), more = read(fd, buf + (got > 0 ? got : 0), 16);
		off_t end = lseek(fd, 0, SEEK_END);
		close(fd);
		printf("%s: size %lld, read %zd then %zd, end %lld [%.*s]\n", name[i], (long long)st.st_size, got, more,
		       (long long)end, (int)(got > 0 ? got : 0), buf);
	}
	int fd = open("/proc/self/comm", O_WRONLY);
	ssize_t put_n = write(fd, "trans-name", 10);
	char now[32] = "";
	int rc = prctl(PR_GET_NAME, now);
	printf("write /proc/self/comm: %zd; the kernel's name now: %d [%s]\n", put_n, rc, now);
	close(fd);
	exit(0);
}

/* The list of the process's descriptors (/proc/self/fd and where
 * /dev/fd and /proc/thread-self/fd lead) with managed files open: the
 * program's own, none of ffio's; then a daemon's close of every one it
 * finds above 2, and the number the next open gets. */
static int by_number(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* A handler on a small alternate stack (12 KiB: Python's faulthandler
 * reports on one of about that size) makes the process's first write to a
 * file: the memory below that stack is untouched (ffio starts nothing
 * there that needs a large stack) and the file holds the report.  Built
 * with AddressSanitizer, every frame has red zones around its variables
 * and the sanitizer's allocator runs on the same stack: 32 KiB there. */
#if defined(__SANITIZE_ADDRESS__)
#define ALT_SIZE 32768
#else
#define ALT_SIZE 12288
#endif
#define ALT_PAD 65536
static int report_fd = -1;

static void on_report(int sig)
{
	char line[64];
	int n = snprintf(line, sizeof line, "report of signal %d\n", sig);
	for (int i = 0; i < 20; i++)
		(void)!write(report_fd, line, (size_t)n);
}

/* An alternate stack of ALT_SIZE bytes between two pads of a known
 * pattern, and handler on it for SIGUSR1; alt_touched: the pad bytes
 * changed since. */
static unsigned char *alt_stack(void (*handler)(int))
{
	unsigned char *base = malloc(ALT_SIZE + 2 * ALT_PAD);
	if (!base)
		exit(1);
	memset(base, 0x5a, ALT_SIZE + 2 * ALT_PAD);
	stack_t ss = {.ss_sp = base + ALT_PAD, .ss_size = ALT_SIZE};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		exit(1);
	return base;
}

static size_t alt_touched(const unsigned char *base)
{
	size_t touched = 0;
	for (size_t i = 0; i < ALT_PAD; i++)
		touched += base[i] != 0x5a || base[ALT_PAD + ALT_SIZE + i] != 0x5a;
	return touched;
}

static void case_altstack(void)
{
	unsigned char *base = alt_stack(on_report);
	struct stat st;

	report_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	raise(SIGUSR1);
	printf("bytes touched beside the handler's stack: %zu\n", alt_touched(base));
	printf("close %d\n", close(report_fd));
	printf("report: %lld bytes\n", stat(path, &st) == 0 ? (long long)st.st_size : -1LL);
	exit(0);
}

/* The same on a file that exists: the handler's writes fall in the middle
 * of pages the cache has not read, and it reads other parts (pages are
 * loaded and read ahead on that stack); then the whole file is summed. */
static uint32_t alt_read_sum;

static void on_report_existing(int sig)
{
	char line[64], got[64];
	int n = snprintf(line, sizeof line, "signal %d at ", sig);
	for (int i = 0; i < 24; i++) {
		off_t at = (off_t)i * 10007 + 4090;
		int m = n + snprintf(line + n, sizeof line - (size_t)n, "%lld;", (long long)at);
		(void)!pwrite(report_fd, line, (size_t)m, at);
		ssize_t r = pread(report_fd, got, sizeof got, at + 70000);
		for (ssize_t k = 0; k < r; k++)
			alt_read_sum = alt_read_sum * 31 + (unsigned char)got[k];
	}
}

static void case_altstack_existing(void)
{
	unsigned char *base = alt_stack(on_report_existing), chunk[4096];
	uint32_t sum = 0;

	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < 64; i++) {
		for (size_t k = 0; k < sizeof chunk; k++)
			chunk[k] = (unsigned char)('a' + (i * 7 + (int)k) % 26);
		if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
			exit(1);
	}
	if (fd < 0 || close(fd) != 0)
		exit(1);
	report_fd = open(path, O_RDWR);
	raise(SIGUSR1);
	printf("bytes touched beside the handler's stack: %zu\n", alt_touched(base));
	printf("the handler read bytes summing to %u\n", (unsigned)alt_read_sum);
	printf("close %d\n", close(report_fd));
	fd = open(path, O_RDONLY);
	ssize_t r;
	off_t total = 0;
	while (fd >= 0 && (r = read(fd, chunk, sizeof chunk)) > 0) {
		for (ssize_t k = 0; k < r; k++)
			sum = sum * 31 + chunk[k];
		total += r;
	}
	printf("file: %lld bytes summing to %u\n", (long long)total, (unsigned)sum);
	exit(0);
}

/* A script written, closed and run at once, again and again: it is never
 * busy (ETXTBSY), though its data went through a cache (and a guardian
 * knows the file: it holds no description of it open for writing while
 * the process lives). */
static void case_exec_written(void)
{
	int busy = 0, ran = 0;

	for (int i = 0; i < 40; i++) {
		char script[sizeof path + 16];
		snprintf(script, sizeof script, "%s.%d.dat", path, i);
		int fd = open(script, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, "#!/bin/sh\nexit 7\n", 18) != 18 || close(fd) != 0)
			exit(1);
		pid_t pid = fork();
		if (pid == 0) {
			execl(script, script, (char *)NULL);
			_exit(errno == ETXTBSY ? 100 : 101);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			exit(1);
		busy += WIFEXITED(st) && WEXITSTATUS(st) == 100;
		ran += WIFEXITED(st) && WEXITSTATUS(st) == 7;
		unlink(script);
	}
	printf("40 scripts written and run: %d ran, %d busy\n", ran, busy);
	exit(0);
}

static void case_fd_list(void)
{
	static const char *const dirs[] = {"/proc/self/fd", "/dev/fd", "/proc/thread-self/fd"};
	char name[sizeof path + 16];
	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof name, "%s.%d.dat", path, k);
		int fd = open(k == 0 ? path : name, O_RDWR | O_CREAT | O_TRUNC, 0644);
		put(fd, k == 0 ? "x.dat's bytes" : "another file");
		if (k > 0)
			unlink(name);
	}
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		int seen[64], n = 0;
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL)
			if (e->d_name[0] != '.' && n < 64)
				seen[n++] = atoi(e->d_name);
		qsort(seen, (size_t)n, sizeof seen[0], by_number);
		printf("%s: %d entries:", dirs[i], n);
		for (int k = 0; k < n; k++)
			printf(" %d", seen[k]);
		printf("\n");
		if (d)
			closedir(d);
	}
	fflush(stdout);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int closed = 0;
	while (d && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
			closed += close(fd) == 0;
	}
	if (d)
		closedir(d);
	printf("closed %d; the next open: %d\n", closed, open(path, O_RDONLY));
	exit(0);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{"closefrom", case_closefrom},     {"close_range", case_close_range},
	{"fdopen", case_fdopen},           {"two_opens", case_two_opens},
	{"append_fork", case_append_fork}, {"append_two", case_append_two},
	{"fork_offset", case_fork_offset}, {"osync_abort", case_osync_abort},
	{"_exit", case_exit_underscore},   {"system", case_system},
	{"mmap", case_mmap},               {"dup2_reuse", case_dup2_reuse},
	{"stdio_first", case_stdio_first}, {"stdout_redirect", case_stdout_redirect},
	{"threads", case_threads},         {"times", case_times},
	{"fsize", case_fsize},              {"ioctl", case_ioctl},
	{"fd_numbers", case_fd_numbers},   {"stat_times", case_stat_times},
	{"locks", case_locks},             {"messages", case_messages},
	{"shared_index", case_shared_index}, {"handlers", case_handlers},
	{"crash_report", case_crash_report}, {"timer_log", case_timer_log},
	{"lock_timeout", case_lock_timeout},
	{"kernel_files", case_kernel_files}, {"grown_behind", case_grown_behind},
	{"fd_list", case_fd_list},         {"heard", case_heard},
	{"heard_past_end", case_heard_past_end},
	{"altstack", case_altstack},       {"altstack_existing", case_altstack_existing},
	{"exec_written", case_exec_written},
};

int main(int argc, char **argv)
{
	size_t n = sizeof cases / sizeof cases[0];
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "poke") == 0) /* case heard */
		return poke(argv[2], atoi(argv[3])) < 0;
	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "fsize_writer") == 0) { /* case fsize: zeros from 48 in 16-byte records */
		static const char zeros[16];
		int fd = open(argv[2], O_WRONLY);
		for (off_t at = 48; fd >= 0 && at < 176; at += 16)
			if (pwrite(fd, zeros, sizeof zeros, at) != (ssize_t)sizeof zeros)
				return 1;
		return fd < 0 ? 1 : 0;
	}
	snprintf(path, sizeof path, "%s/x.dat", argv[2]);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(argv[1], cases[i].name) != 0)
			continue;
		unlink(path);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			cases[i].run();
		int status;
		waitpid(pid, &status, 0);
		fflush(stdout);
		printf("status %s %d\n", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		show();
		return 0;
	}
	return 2;
}
