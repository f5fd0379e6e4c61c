/* libffio/guard/shmfile.c -- the two files that hold the guarded memory
 * (arena.c): on a tmpfs of this process's own, mounted with huge pages,
 * where the system lets the process mount one; else memfds.
 *
 * Why.  memfds live on the kernel's internal tmpfs, which gets huge pages
 * only when the administrator sets
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled (Debian's default is
 * "never"), so guarded memory is touched 4 KiB at a time: each new page
 * costs a fault, and on a virtual machine whose page tables the host
 * shadows, an exit at the first access by the process and again at the
 * first access by the kernel (the write-back reads it).  Measured on the
 * development machine, 16 MiB populated, written by the process and then
 * written to a file: 50 ms from memfds, 7 ms from a tmpfs with huge
 * pages.  A tmpfs mount's own huge= option holds whatever shmem_enabled
 * says (but "deny"); it is "advise" here: arena.c advises the data's
 * mapping only.
 *
 * How.  A detached tmpfs mount, made with the new mount API (fsopen,
 * fsconfig, fsmount: attached nowhere, gone with its last file), and two
 * unnamed files opened on it (O_TMPFILE).  Root makes it in the process
 * itself; another user, in a child sharing our memory and our descriptor
 * table (ffio_guard_run_child with CLONE_FILES, as the guardian's start),
 * which first enters a user namespace of its own (with a mount namespace:
 * its mounts are nobody else's), mapping only its own IDs.  Where that is
 * refused (no unprivileged user namespaces, a seccomp filter, a chroot),
 * or the variable FF_IO_GUARD_HUGE is 0, memfds as before.  Both make
 * system calls only (the child's stack is ours; errno is restored).  The mount
 * has no size limit (size=0), as memfds have none: the cache's spec
 * bounds what is used.  Nothing is mounted where anyone could see it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "guard.h"

#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount)
#include <linux/mount.h>
#define HAVE_NEW_MOUNT_API 1
#endif

/* A memfd, where the kernel puts it (arena.c closes it before the
 * program's next call). */
static int memfd(const char *name)
{
	int fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

#ifdef HAVE_NEW_MOUNT_API
struct make {
	int userns;                 /* enter a user namespace first */
	char uid_map[32], gid_map[32];
	int fd[2];
	int err;                    /* the first failure's errno */
};

/* The child's stack: one make at a time (the arena's lock). */
static char make_stack[8192] __attribute__((aligned(64)));

/* Write text to path (a /proc file of the child's own). */
__attribute__((no_sanitize_address)) static int put(const char *path, const char *text)
{
	long len = 0, fd = FFIO_SYS(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (text[len]) /* (no C library call here: see make_files) */
		len++;
	long n = FFIO_SYS(SYS_write, fd, text, len);
	FFIO_SYS(SYS_close, fd);
	return n == len ? 0 : -1;
}

/* The mount and its two files, in m: system calls only (in the child, the
 * sanitizers' interceptors of the C library would run on its small stack,
 * beside our thread's state); m->err is the first failure's errno. */
__attribute__((no_sanitize_address)) static void make_mount(struct make *m)
{
	long fs = -1, mnt = -1;

	if (m->userns && (FFIO_SYS(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
			  put("/proc/self/setgroups", "deny") < 0 || put("/proc/self/uid_map", m->uid_map) < 0 ||
			  put("/proc/self/gid_map", m->gid_map) < 0))
		goto fail;
	if ((fs = FFIO_SYS(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) < 0 ||
	    FFIO_SYS(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "huge", "advise", 0) < 0 ||
	    FFIO_SYS(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "0", 0) < 0 ||
	    FFIO_SYS(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    FFIO_SYS(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = FFIO_SYS(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0)
		goto fail;
	for (int i = 0; i < 2; i++)
		if ((m->fd[i] = (int)FFIO_SYS(SYS_openat, mnt, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
			goto fail;
	FFIO_SYS(SYS_close, mnt);
	FFIO_SYS(SYS_close, fs);
	return;
fail:
	m->err = errno ? errno : EPERM;
	for (int i = 0; i < 2; i++)
		if (m->fd[i] >= 0)
			FFIO_SYS(SYS_close, m->fd[i]);
	m->fd[0] = m->fd[1] = -1;
	if (mnt >= 0)
		FFIO_SYS(SYS_close, mnt);
	if (fs >= 0)
		FFIO_SYS(SYS_close, fs);
}

/* The child, which enters a user namespace of its own first. */
__attribute__((no_sanitize_address)) static int make_files(void *arg)
{
	make_mount(arg);
	FFIO_SYS(SYS_exit, 0);
	return 0;
}

/* The two files on a huge-page tmpfs: 0, or -errno. */
static int tmpfs_files(int userns, int fd[2])
{
	struct make m = {.userns = userns, .fd = {-1, -1}};
	int err;

	snprintf(m.uid_map, sizeof m.uid_map, "%u %u 1", (unsigned)geteuid(), (unsigned)geteuid());
	snprintf(m.gid_map, sizeof m.gid_map, "%u %u 1", (unsigned)getegid(), (unsigned)getegid());
	if (!userns) {
		/* In this process: a child made for the mount alone is one
		 * more wait to be scheduled, and where ranks outnumber cores
		 * it waited 1 to 6 ms (4 ranks on 2 cores, their first
		 * cached writes at once). */
		int saved = errno;
		make_mount(&m);
		errno = saved;
	} else if ((err = ffio_guard_run_child(make_files, make_stack, sizeof make_stack, CLONE_FILES, &m)) < 0) {
		return err;
	}
	if (m.err)
		return -m.err;
	fd[0] = m.fd[0];
	fd[1] = m.fd[1];
	return 0;
}
#endif

int ffio_guard_shm_files(int *meta_fd, int *data_fd, int *huge)
{
	int fd[2] = {-1, -1};
	const char *v = ffio_env(FFIO_ENV_GUARD_HUGE);

	*huge = 0;
#ifdef HAVE_NEW_MOUNT_API
	if (!v || strcmp(v, "0") != 0) {
		/* directly where the process may mount (root), else in a user
		 * namespace of its own */
		int err = geteuid() == 0 ? tmpfs_files(0, fd) : -EPERM;
		if (err == -EPERM)
			err = tmpfs_files(1, fd);
		if (err == 0) {
			*meta_fd = fd[0];
			*data_fd = fd[1];
			*huge = 1;
			return 0;
		}
	}
#else
	(void)v;
#endif
	if ((fd[0] = memfd("ffio-guard-meta")) < 0)
		return fd[0];
	if ((fd[1] = memfd("ffio-guard-data")) < 0) {
		int err = fd[1];
		ffio_real.close(fd[0]);
		return err;
	}
	*meta_fd = fd[0];
	*data_fd = fd[1];
	return 0;
}
