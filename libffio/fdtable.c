/* libffio/fdtable.c -- descriptor -> open file description, one load per lookup.  The
 * table is one anonymous mapping sized for the process's descriptor limit;
 * untouched pages cost nothing.  Also where ffio's own descriptors live:
 * at the top, out of the program's way (ffio_fd_park, ffio_fd_pressure). */
#include "config.h"
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "ffio-internal.h"

struct ffio_ofd *_Atomic *ffio_fdtab;
int ffio_fdtab_size;

#define FDTAB_MIN (1 << 16)
#define FDTAB_MAX (1 << 22)

int ffio_fdtab_init(void)
{
	struct rlimit rl;
	size_t n = FDTAB_MIN;
	void *p;

	if (ffio_fdtab)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
		n = rl.rlim_max > FDTAB_MAX ? FDTAB_MAX : rl.rlim_max;
	p = ffio_map_anon(n * sizeof(*ffio_fdtab), MAP_NORESERVE);
	if (!p)
		return -errno;
	ffio_fdtab = p;
	ffio_fdtab_size = (int)n;
	return 0;
}

int ffio_fd_attach(int fd, struct ffio_ofd *o)
{
	if (fd < 0 || fd >= ffio_fdtab_size)
		return -EMFILE;
	o->refs++;
	ffio_fdtab[fd] = o;
	return 0;
}

struct ffio_ofd *ffio_fd_detach(int fd)
{
	struct ffio_ofd *o;
	if ((unsigned)fd >= (unsigned)ffio_fdtab_size)
		return NULL;
	o = ffio_fdtab[fd];
	ffio_fdtab[fd] = NULL;
	return o;
}

/* ---- ffio's own descriptors -------------------------------------------- */

/* The kernel hands a program the lowest free descriptor.  ffio's own (a
 * managed file's, a ring's, the log's) are moved to the highest free
 * number below min(the soft RLIMIT_NOFILE, FFIO_FD_TOP), so the program's
 * get the numbers they would get without ffio.  (Not always where the
 * program's reach up among them, near its limit: one it closes up there
 * leaves a hole above ffio's.  Its EMFILE still comes where it would:
 * ffio_fd_pressure gives up the lowest of ffio's, the number the kernel
 * alone would hand out.)  FFIO_FD_TOP is select()'s FD_SETSIZE: the
 * kernel's table of a process that never had more than that many
 * descriptors does not grow for ffio's. */
#define FFIO_FD_TOP 1024

static int park_top = -1; /* min(soft RLIMIT_NOFILE, FFIO_FD_TOP); -1: not read yet */

void ffio_fd_top_refresh(void)
{
	struct rlimit rl;
	int top = FFIO_FD_TOP;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (int)rl.rlim_cur;
	__atomic_store_n(&park_top, top, __ATOMIC_RELAXED);
}

/* Grow the kernel's descriptor table now, while the process has one
 * thread (the library's start, before main): once threads share it (MPI's
 * progress threads), the kernel grows it only after a grace period of RCU,
 * 5-15 ms here, paid in the open that parks a descriptor.  Up to twice the
 * top: ffio_fd_park's probes may land above the top (where the numbers up
 * to it are taken), which would grow it again.  A table never shrinks; a
 * forked child's is made anew. */
void ffio_fd_table_reserve(void)
{
	int saved = errno;
	struct rlimit rl;
	long want = 2 * FFIO_FD_TOP;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)want)
		want = (long)rl.rlim_cur;
	long fd = FFIO_SYS(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fd < want - 1) {
		long high = FFIO_SYS(SYS_fcntl, fd, F_DUPFD_CLOEXEC, want - 1);
		if (high >= 0)
			(void)FFIO_SYS(SYS_close, high);
	}
	if (fd >= 0)
		(void)FFIO_SYS(SYS_close, fd);
	errno = saved;
}

int ffio_fd_park(int fd)
{
	int saved = errno, best = -1, top, again = 1;

	if (fd < 0)
		return fd;
	if (__atomic_load_n(&park_top, __ATOMIC_RELAXED) < 0)
		ffio_fd_top_refresh();
	top = __atomic_load_n(&park_top, __ATOMIC_RELAXED);
	/* The highest free number in [lo, hi], if there is one: F_DUPFD gives
	 * the lowest free number >= its argument (EMFILE: none up to the
	 * limit; one past hi: none up to hi, under a soft limit above the
	 * top).  The first try, at the top, is the one that usually finds. */
	for (int lo = fd + 1, hi = top - 1; lo <= hi;) {
		int t = best < 0 && hi == top - 1 ? hi : lo + (hi - lo + 1) / 2;
		int nfd = ffio_real.fcntl(fd, F_DUPFD_CLOEXEC, t);
		if (nfd > hi) {
			(void)ffio_real.close(nfd);
			hi = t - 1;
			continue;
		}
		if (nfd < 0) {
			if (errno == EINVAL && again) { /* the limit, lowered from outside */
				again = 0;
				ffio_fd_top_refresh();
				lo = fd + 1, hi = (top = __atomic_load_n(&park_top, __ATOMIC_RELAXED)) - 1;
				continue;
			}
			if (errno != EMFILE)
				break;
			hi = t - 1;
			continue;
		}
		if (best >= 0)
			(void)ffio_real.close(best);
		best = nfd;
		lo = nfd + 1;
	}
	if (best >= 0) {
		(void)ffio_real.close(fd);
		fd = best;
	}
	errno = saved;
	return fd;
}

#define OWN_MAX 64
static int own[OWN_MAX], nown;
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void own_fork_safe(void)
{
	ffio_atfork_hold(&own_lock, FFIO_LOCK_OWN_FDS);
}

void ffio_fd_own_record(int fd)
{
	pthread_mutex_lock(&own_lock);
	if (nown < OWN_MAX)
		own[nown++] = fd;
	pthread_mutex_unlock(&own_lock);
}

int ffio_fd_own(int fd)
{
	fd = ffio_fd_park(fd);
	if (fd >= 0)
		ffio_fd_own_record(fd);
	return fd;
}

void ffio_fd_disown(int fd)
{
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < nown; i++)
		if (own[i] == fd) {
			own[i] = own[--nown];
			break;
		}
	pthread_mutex_unlock(&own_lock);
}

int ffio_fd_own_next(int fd)
{
	int best = -1;
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < nown; i++)
		if (own[i] >= fd && (best < 0 || own[i] < best))
			best = own[i];
	pthread_mutex_unlock(&own_lock);
	return best;
}

static int (*idle_release)(void), (*last_number)(void), (*last_release)(void);

void ffio_fd_on_pressure(int (*release)(void))
{
	idle_release = release;
}

void ffio_fd_on_pressure_last(int (*number)(void), int (*release)(void))
{
	last_number = number;
	last_release = release;
}

int ffio_fd_pressure(void)
{
	int saved = errno, freed;

	ffio_in_lib++;
	int last = last_number ? last_number() : -1;
	freed = (idle_release && idle_release()) || ffio_log_release() ||
		ffio_private_give_up(last >= 0 ? last : INT_MAX) || (last >= 0 && last_release());
	ffio_in_lib--;
	errno = saved;
	return freed;
}
