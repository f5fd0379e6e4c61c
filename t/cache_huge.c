/* t/cache_huge.c -- page buffers of a cache that holds 1 MiB, or of a
 * file of 2 MiB or more, come from huge-page chunks (pages of 4 KiB to
 * 1 MiB; pages of 1 MiB or more from the first page), unless the file is
 * guarded (FF_IO_GUARD=0 turns that off; a guarded file's pages are in
 * guarded memory, shared: on huge pages of a tmpfs of the process's own
 * where it may mount one, on 4 KiB pages of memfds with FF_IO_GUARD_HUGE=0
 * and Debian's default shmem_enabled "never"): a new process
 * writing 64 KiB through 1 MiB pages gets a transparent huge page, through
 * 256 KiB pages none, one reading the start of a 3 MiB file gets one for
 * its first page; buffers are given back when pages are dropped (fsync) and
 * reused: the data read back and the file's bytes stay exact through
 * growth, drop and reuse, and over an asynchronous bottom (uring) through
 * large writes that are written around or behind. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio.h"
#include "ffio_ext.h"
#include "tap.h"

#define FILE_SIZE ((size_t)7 << 20)

static char dir[] = "/tmp/ffio-cache-huge-XXXXXX";
static char path[300];
static unsigned char *model, *got;

/* Small writes of pseudo-random sizes over the whole file, pattern seed. */
static int write_pattern(int fd, unsigned seed)
{
	size_t at = 0;
	srand(seed);
	while (at < FILE_SIZE) {
		size_t n = 1 + (size_t)rand() % 9000;
		if (n > FILE_SIZE - at)
			n = FILE_SIZE - at;
		for (size_t i = 0; i < n; i++)
			model[at + i] = (unsigned char)(rand() >> 3);
		if (ffpwrite(fd, model + at, n, (off_t)at) != (ssize_t)n)
			return -1;
		at += n + (rand() % 4 == 0 ? (size_t)rand() % 5000 : 0); /* gaps keep old bytes */
	}
	model[FILE_SIZE - 1] = (unsigned char)seed; /* the file ends where the model does */
	return ffpwrite(fd, model + FILE_SIZE - 1, 1, (off_t)FILE_SIZE - 1) == 1 ? 0 : -1;
}

static int read_all(int fd)
{
	memset(got, 0, FILE_SIZE);
	for (size_t at = 0; at < FILE_SIZE; at += 6000) {
		size_t n = FILE_SIZE - at < 6000 ? FILE_SIZE - at : 6000;
		if (ffpread(fd, got + at, n, (off_t)at) != (ssize_t)n)
			return -1;
	}
	return 0;
}

static int disk_equal(void)
{
	FILE *fp = fopen(path, "rb");
	size_t n = 0;
	if (fp) {
		n = fread(got, 1, FILE_SIZE, fp);
		fclose(fp);
	}
	return n == FILE_SIZE && memcmp(got, model, FILE_SIZE) == 0;
}

static void run(const char *spec)
{
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	tap_ok(fd >= 0, "%s: open", spec);
	if (fd < 0)
		return;
	memset(model, 0, FILE_SIZE);
	tap_ok(write_pattern(fd, 1) == 0, "%s: 7 MiB of small writes", spec);
	tap_ok(read_all(fd) == 0 && memcmp(got, model, FILE_SIZE) == 0, "%s: read back from the cache", spec);
	tap_ok(fffsync(fd) == 0, "%s: fsync (clean pages dropped)", spec);
	tap_ok(disk_equal(), "%s: file bytes exact after fsync", spec);
	tap_ok(write_pattern(fd, 2) == 0, "%s: second pattern into reused buffers", spec);
	/* large aligned writes: around or behind, both exact */
	for (int k = 0; k < 3; k++) {
		size_t big = (size_t)1 << 20;
		off_t off = (off_t)(k + 2) << 20;
		memset(model + off, 'A' + k, big);
		if (ffpwrite(fd, model + off, big, off) != (ssize_t)big)
			tap_diag("large write %d failed: %s", k, strerror(errno));
	}
	tap_ok(read_all(fd) == 0 && memcmp(got, model, FILE_SIZE) == 0, "%s: read back after reuse", spec);
	tap_ok(ffclose(fd) == 0, "%s: close", spec);
	tap_ok(disk_equal(), "%s: file bytes exact after close", spec);
}

/* A field of this process's file in /proc/self (in KiB); -1 if unknown. */
static long proc_kib(const char *file, const char *field)
{
	FILE *fp = fopen(file, "r");
	char line[256];
	long kib = -1;
	size_t n = strlen(field);
	while (fp && fgets(line, sizeof line, fp))
		if (strncmp(line, field, n) == 0 && sscanf(line + n, ": %ld kB", &kib) == 1)
			break;
	if (fp)
		fclose(fp);
	return kib;
}

/* AnonHugePages of this process, in KiB; -1 if unknown. */
static long anon_huge_kib(void)
{
	return proc_kib("/proc/self/smaps_rollup", "AnonHugePages");
}

/* A transparent huge page setting of the system, its line ("" if none). */
static void thp_setting(const char *name, char *line, size_t size)
{
	char path[128];
	snprintf(path, sizeof path, "/sys/kernel/mm/transparent_hugepage/%s", name);
	FILE *fp = fopen(path, "r");
	line[0] = 0;
	if (fp) {
		if (!fgets(line, (int)size, fp))
			line[0] = 0;
		fclose(fp);
	}
}

/* Are transparent huge pages given to regions marked MADV_HUGEPAGE? */
static int thp_on(void)
{
	char line[128];
	thp_setting("enabled", line, sizeof line);
	return strstr(line, "[always]") || strstr(line, "[madvise]");
}

/* In a new process (no chunks kept from other caches): writing a new
 * file, 3 MiB in 64 KiB pieces through 1 MiB pages (WRITE_3M); writing
 * 64 KiB through 1 MiB pages (WRITE_64K: pages of half a chunk take one
 * from the first page) or through 256 KiB pages (WRITE_64K_SMALL_PAGES:
 * none, the cache holds less than 1 MiB); reading 64 KiB at the start of
 * the 3 MiB file (READ: a file of a chunk or more takes a chunk from its
 * first page).  Exit status: 0 a huge page came, 1 none did, 2 the I/O
 * failed. */
enum { WRITE_3M, READ, WRITE_64K, WRITE_64K_SMALL_PAGES };
static int huge_child(int mode)
{
	static char piece[65536];
	int reading = mode == READ;
	if (!reading) /* a file it may write is guarded: see guarded_child */
		setenv("FF_IO_GUARD", "0", 1);
	const char *spec = mode == WRITE_64K_SMALL_PAGES ? "cache:256k:8:0" : "cache:1m:8:0";
	long before = anon_huge_kib();
	int fd = reading ? ffopen(path, O_RDONLY, 0, spec) : ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, spec);
	if (fd < 0)
		return 2;
	for (int i = 0; i < (mode == WRITE_3M ? 48 : 1); i++) {
		memset(piece, 'a' + i % 26, sizeof piece);
		if (reading ? ffpread(fd, piece, sizeof piece, 0) != (ssize_t)sizeof piece || piece[0] != 'a'
			    : ffwrite(fd, piece, sizeof piece) != (ssize_t)sizeof piece)
			return 2;
	}
	long after = anon_huge_kib();
	if (ffclose(fd) != 0)
		return 2;
	return before >= 0 && after - before >= 2048 ? 0 : 1;
}

/* A file the cache may write has its pages in guarded memory (shared,
 * where a guardian process finds them if this one dies), not in huge
 * chunks: writing 64 KiB through 1 MiB pages, the process's shared memory
 * grows by the page, and it gets no huge page.  Exit status: 0 so, 1 not,
 * 2 the I/O failed. */
static int guarded_child(int unused)
{
	static char piece[65536];
	(void)unused;
	long before = proc_kib("/proc/self/status", "RssShmem"), huge = anon_huge_kib();
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:1m:8:0");
	memset(piece, 'g', sizeof piece);
	if (fd < 0 || ffwrite(fd, piece, sizeof piece) != (ssize_t)sizeof piece)
		return 2;
	long after = proc_kib("/proc/self/status", "RssShmem"), huge_after = anon_huge_kib();
	if (ffclose(fd) != 0)
		return 2;
	return before >= 0 && after - before >= 1024 && huge_after - huge < 2048 ? 0 : 1;
}

/* A guarded file's page on a huge page: writing 64 KiB through 1 MiB
 * pages, the process's shared memory mapped by huge pages
 * (ShmemPmdMapped) grows by 2 MiB or more; with no_huge, FF_IO_GUARD_HUGE
 * is 0.  Exit status: 0 it grew, 1 not, 2 the I/O failed. */
static int guarded_huge_child(int no_huge)
{
	static char piece[65536];
	if (no_huge)
		setenv("FF_IO_GUARD_HUGE", "0", 1);
	long before = proc_kib("/proc/self/smaps_rollup", "ShmemPmdMapped");
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:1m:8:0");
	memset(piece, 'h', sizeof piece);
	if (fd < 0 || ffwrite(fd, piece, sizeof piece) != (ssize_t)sizeof piece)
		return 2;
	long after = proc_kib("/proc/self/smaps_rollup", "ShmemPmdMapped");
	if (ffclose(fd) != 0)
		return 2;
	return before >= 0 && after - before >= 2048 ? 0 : 1;
}

/* The control, without ffio: can this process mount a tmpfs of its own
 * with huge=advise (in a user namespace where it is not root) and get a
 * huge page in a region of a file there marked MADV_HUGEPAGE?  Exit
 * status: 0 yes, 1 no. */
static int tmpfs_control_child(int unused)
{
	(void)unused;
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount)
	if (geteuid() != 0) {
		char map[64];
		unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
		FILE *fp;
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
			return 1;
		if ((fp = fopen("/proc/self/setgroups", "w")))
			fputs("deny", fp), fclose(fp);
		snprintf(map, sizeof map, "%u %u 1", uid, uid);
		if (!(fp = fopen("/proc/self/uid_map", "w")) || fputs(map, fp) < 0 || fclose(fp) != 0)
			return 1;
		snprintf(map, sizeof map, "%u %u 1", gid, gid);
		if (!(fp = fopen("/proc/self/gid_map", "w")) || fputs(map, fp) < 0 || fclose(fp) != 0)
			return 1;
	}
	long fs = syscall(SYS_fsopen, "tmpfs", 0);
	if (fs < 0 || syscall(SYS_fsconfig, fs, 1 /* FSCONFIG_SET_STRING */, "huge", "advise", 0) != 0 ||
	    syscall(SYS_fsconfig, fs, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0) != 0)
		return 1;
	long mnt = syscall(SYS_fsmount, fs, 0, 0);
	int fd = mnt < 0 ? -1 : openat((int)mnt, ".", O_TMPFILE | O_RDWR, 0600);
	size_t huge = (size_t)2 << 20;
	if (fd < 0 || ftruncate(fd, (off_t)(4 * huge)) != 0)
		return 1;
	char *p = mmap(NULL, 4 * huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	char *aligned = (char *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
	long before = proc_kib("/proc/self/smaps_rollup", "ShmemPmdMapped");
	if (madvise(aligned, huge, MADV_HUGEPAGE) != 0)
		return 1;
	memset(aligned, 1, huge);
	long after = proc_kib("/proc/self/smaps_rollup", "ShmemPmdMapped");
	return before >= 0 && after - before >= 2048 ? 0 : 1;
#else
	return 1;
#endif
}

/* Do memfds get huge pages here (shmem_enabled other than "never")? */
static int memfd_thp(void)
{
	char line[128];
	thp_setting("shmem_enabled", line, sizeof line);
	return !strstr(line, "[never]") && !strstr(line, "[deny]");
}

/* The control, without ffio: does a region marked MADV_HUGEPAGE get a
 * huge page here and now?  THP may be enabled while the kernel has no
 * free 2 MiB page to give (fragmented memory, defrag settings, limits of
 * the container).  Exit status: 0 one came, 1 none did. */
static int control_child(int unused)
{
	(void)unused;
	size_t huge = (size_t)2 << 20;
	char *p = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	char *aligned = (char *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
	long before = anon_huge_kib();
	if (madvise(aligned, huge, MADV_HUGEPAGE) != 0)
		return 1;
	memset(aligned, 1, huge);
	long after = anon_huge_kib();
	return before >= 0 && after - before >= 2048 ? 0 : 1;
}

/* The exit status of fn run in a new process, -1 if it did not exit. */
static int in_child(int (*fn)(int), int arg)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	int st = -1;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Root's child as the user nobody, writing in dir_nobody: may it mount a
 * tmpfs of its own in a user namespace (the control)?  Then is its guarded
 * page on a huge page there, as root's (the mount made in a child that
 * enters the namespace first, not in the process)?  Exit status: 0 so, 1
 * not, 2 the I/O failed, 3 it cannot be that user, 4 it may not mount, 5
 * it may not run the guardian. */
static char dir_nobody[] = "/tmp/ffio-cache-huge-nobody-XXXXXX";
static int as_nobody_child(int unused)
{
	(void)unused;
	struct passwd *pw = getpwnam("nobody");
	if (!pw || setgroups(0, NULL) != 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0 ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) /* (its /proc/self files its own again) */
		return 3;
	if (in_child(tmpfs_control_child, 0) != 0)
		return 4;
	snprintf(path, sizeof path, "%s/f", dir_nobody);
	int st = guarded_huge_child(0);
	/* (a build tree in a directory the user may not enter, /root: no
	 * guardian to run, nothing guarded) */
	return st == 1 && ffio_guardian_pid() == 0 ? 5 : st;
}

static void test_first_chunk(int mode)
{
	static const char *const what[] = {"writing 3 MiB through 1 MiB pages, unguarded",
					   "reading 64 KiB of a 3 MiB file through 1 MiB pages",
					   "writing 64 KiB through 1 MiB pages, unguarded",
					   "writing 64 KiB through 256 KiB pages, unguarded"};
	int want = mode == WRITE_64K_SMALL_PAGES ? 1 : 0;
	if (!thp_on() || anon_huge_kib() < 0) {
		tap_skip("no transparent huge pages here");
		return;
	}
	int st = in_child(huge_child, mode);
	if (in_child(control_child, 0) != 0) {
		tap_skip("transparent huge pages are enabled but the kernel gives none now, "
			 "not even to a plain madvise(MADV_HUGEPAGE) region");
		return;
	}
	tap_ok(st == want, "a new process %s gets %s (status %d)", what[mode], want ? "no huge page" : "a huge page",
	       st);
}

int main(void)
{
	const char *specs[] = {"cache:256k:32:0", "cache.sieve:1m:8:2", "cache:512k:24:0, uring:8",
			       "cache:16k:512:4", "cache:4k:2048:8"};
	int nspecs = (int)(sizeof specs / sizeof specs[0]);

	model = malloc(FILE_SIZE);
	got = malloc(FILE_SIZE);
	if (!model || !got || !mkdtemp(dir))
		tap_skip_all("no memory or no temporary directory");
	snprintf(path, sizeof path, "%s/f", dir);
	tap_plan(8 + 9 * nspecs);
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "/vgpreload_")) {
		tap_skip("under valgrind nothing is guarded (ffio-reliability(7))");
		tap_skip("under valgrind nothing is guarded (ffio-reliability(7))");
		tap_skip("under valgrind nothing is guarded (ffio-reliability(7))");
		tap_skip("under valgrind nothing is guarded (ffio-reliability(7))");
	} else {
		int st = in_child(guarded_child, 0);
		tap_ok(st == 0,
		       "a new process writing 64 KiB through 1 MiB pages has the page in guarded memory (status %d)", st);
		if (in_child(tmpfs_control_child, 0) != 0) {
			tap_skip("this process may not mount a tmpfs with huge pages of its own (no user namespaces?)");
		} else {
			st = in_child(guarded_huge_child, 0);
			tap_ok(st == 0, "the guarded page is on a huge page of the process's own tmpfs (status %d)", st);
		}
		int made = geteuid() == 0 && mkdtemp(dir_nobody) != NULL;
		st = geteuid() != 0 ? -1 : !made || chmod(dir_nobody, 0777) != 0 ? -2 : in_child(as_nobody_child, 0);
		if (st == -1 || st == -2 || st == 3 || st == 4 || st == 5)
			tap_skip(st == -1   ? "not as another user: not root"
				 : st == -2 ? "not as another user: no directory"
				 : st == 3  ? "not as another user: no user nobody"
				 : st == 4  ? "not as another user: nobody may not mount a tmpfs of its own"
					    : "not as another user: nobody may not run the guardian from this build tree");
		else
			tap_ok(st == 0, "as another user (nobody), on a huge page of a tmpfs of its own in a user namespace (status %d)", st);
		if (made) {
			char f[sizeof dir_nobody + 2];
			snprintf(f, sizeof f, "%s/f", dir_nobody);
			unlink(f);
			rmdir(dir_nobody);
		}
		if (memfd_thp()) {
			tap_skip("memfds get huge pages here (shmem_enabled)");
		} else {
			st = in_child(guarded_huge_child, 1);
			tap_ok(st == 1, "with FF_IO_GUARD_HUGE=0, on 4 KiB pages of memfds (status %d)", st);
		}
	}
	test_first_chunk(WRITE_3M);
	test_first_chunk(READ);
	test_first_chunk(WRITE_64K);
	test_first_chunk(WRITE_64K_SMALL_PAGES);
	for (int i = 0; i < nspecs; i++)
		run(specs[i]);
	unlink(path);
	rmdir(dir);
	free(model);
	free(got);
	return tap_done();
}
