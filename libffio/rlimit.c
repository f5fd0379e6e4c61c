/* libffio/rlimit.c -- RLIMIT_FSIZE at the program's call, as the kernel
 * has it: ffio knows the process's limit (read at start-up, and again
 * after the program sets it with setrlimit or prlimit), so that a cached
 * write past it is cut short, or refused with EFBIG and SIGXFSZ, when the
 * program makes it (ofd.c's kernel_limits; write hits end before it).
 * Lowering the limit first writes back what ffio holds: those writes were
 * made under the old limit, and the kernel had them then.  A limit another
 * process sets on this one (prlimit with its pid) is not seen until the
 * program sets one itself (ffio(7)).  A new RLIMIT_NOFILE moves where
 * ffio puts its own descriptors (fdtable.c's ffio_fd_park). */
#include "config.h"
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "interpose.h"

/* Does setting rl on this process (pid 0 or its own) change what ffio
 * must know?  A vfork child shares ffio's memory with its parent: its
 * limit is its own. */
static int ours(pid_t pid, int resource, const struct rlimit *rl)
{
	return (resource == RLIMIT_FSIZE || resource == RLIMIT_NOFILE) && rl != NULL && !ffio_in_lib &&
	       !ffio_in_vfork_child() && (pid == 0 || pid == getpid());
}

/* Before the limit is set: a lower one finds ffio's cached writes already
 * with the kernel (an error writing them back is deferred to the file's
 * next write, fsync or close, as at exec).  rl may be a bad pointer,
 * which the kernel refuses (EFAULT): it is not read then. */
static void before(const struct rlimit *rl)
{
	if (ffio_user_range_odd(rl, sizeof *rl) || !ffio_any_open())
		return;
	rlim_t cur = rl->rlim_cur;
	if (cur != RLIM_INFINITY && cur < (rlim_t)__atomic_load_n(&ffio_fsize_limit, __ATOMIC_RELAXED))
		(void)IN_LIB(ffio_flush_all());
}

/* The kernel's call, as the C library makes it (prlimit64 on this
 * process for setrlimit): a system call, with no look-up of the C
 * library's function, since sanitizer runtimes set limits while they
 * start, before anything else is ready. */
static int sys_prlimit(pid_t pid, int resource, const struct rlimit *rl, struct rlimit *old)
{
	return (int)FFIO_SYS(SYS_prlimit64, pid, resource, rl, old);
}

static int set_limit(pid_t pid, int resource, const struct rlimit *rl, struct rlimit *old)
{
	if (!ours(pid, resource, rl))
		return sys_prlimit(pid, resource, rl, old);
	if (resource == RLIMIT_FSIZE)
		before(rl);
	int rc = sys_prlimit(pid, resource, rl, old);
	int err = errno;
	if (resource == RLIMIT_FSIZE)
		ffio_fsize_refresh();
	else
		ffio_fd_top_refresh(); /* where ffio's own descriptors go (fdtable.c) */
	errno = err;
	return rc;
}

FFIO_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	return set_limit(0, (int)resource, rl, NULL);
}

FFIO_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *rl, struct rlimit *old)
{
	return set_limit(pid, (int)resource, rl, old);
}

/* The large-file names: struct rlimit64 is struct rlimit on LP64 targets. */
_Static_assert(sizeof(struct rlimit64) == sizeof(struct rlimit), "rlimit64 is rlimit");

FFIO_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	return set_limit(0, (int)resource, (const struct rlimit *)rl, NULL);
}

FFIO_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *rl,
			  struct rlimit64 *old)
{
	return set_limit(pid, (int)resource, (const struct rlimit *)rl, (struct rlimit *)old);
}
