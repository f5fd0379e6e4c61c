/* libffio/fdtable.c -- descriptor -> open file description, one load per lookup.  The
 * table is one anonymous mapping sized for the process's descriptor limit;
 * untouched pages cost nothing. */
#include "config.h"
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
