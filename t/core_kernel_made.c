/* t/core_kernel_made.c -- files the kernel makes as they are read (/proc,
 * /sys) are never managed, and the question is asked of each mount once:
 * where the kernel gives mounts IDs it never reuses (STATX_MNT_ID_UNIQUE),
 * a second open on the same mount makes no fstatfs, which on a network or
 * FUSE file system is a request to the server.  fstatfs is counted by
 * defining it here: the core, linked into this program, calls this one. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif

static int statfs_calls;

int fstatfs(int fd, struct statfs *buf)
{
	statfs_calls++;
	return (int)syscall(SYS_fstatfs, fd, buf);
}

static struct ffio_entry entry = {
	.index = 1,
	.pattern = "*",
	.nlayers = 1,
};

/* Does this kernel give mounts IDs it never reuses? */
static int unique_mount_ids(int fd)
{
	struct statx stx;
	return statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID_UNIQUE);
}

/* Open path through the core and say whether it was managed (-1: the open
 * failed). */
static int managed(const char *path)
{
	int fd = ffio_open(&entry, AT_FDCWD, path, O_RDONLY, 0, 0);
	if (fd < 0)
		return -1;
	int m = ffio_fd_file(fd) != NULL;
	if (m)
		(void)ffio_fd_close(fd, 1);
	else
		close(fd);
	return m;
}

int main(void)
{
	char path[] = "/tmp/ffio-core-made-XXXXXX";
	const char *sys = "/sys/devices/system/cpu/possible";
	int has_sys = access(sys, R_OK) == 0;

	tap_plan(10);
	ffio_init();
	entry.layer[0].ops = &ffio_layer_sys;
	int tmp = mkstemp(path);
	if (tmp < 0 || write(tmp, "data", 4) != 4)
		return 99;
	int unique = unique_mount_ids(tmp);
	close(tmp);

	for (int round = 1; round <= 2; round++) {
		int before = statfs_calls;
		tap_is(managed(path), 1, "round %d: a file of data is managed", round);
		tap_is(managed("/proc/self/status"), 0, "round %d: a file of /proc is not", round);
		if (has_sys)
			tap_is(managed(sys), 0, "round %d: a file of /sys is not", round);
		else
			tap_skip("no /sys here");
		int calls = statfs_calls - before;
		if (!unique)
			tap_skip("the kernel gives no unique mount IDs (Linux 6.8): fstatfs at every open");
		else if (round == 1)
			tap_is(calls, has_sys ? 3 : 2, "round 1: the type of each mount asked once");
		else
			tap_is(calls, 0, "round 2: no mount asked again");
	}
	/* errno is the program's: an answer from memory leaves it as it was */
	int fd = open("/proc/self/status", O_RDONLY);
	errno = EXDEV;
	tap_ok(fd >= 0 && ffio_kernel_fs(fd) == FFIO_FS_KERNEL_MADE && errno == EXDEV, "errno unchanged, the answer from memory");
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDONLY);
	errno = EXDEV;
	tap_ok(fd >= 0 && ffio_kernel_fs(fd) == 0 && errno == EXDEV, "and for a file of data");
	if (fd >= 0)
		close(fd);
	unlink(path);
	return tap_done();
}
