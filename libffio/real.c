/* libffio/real.c -- the C library functions behind the interposed names,
 * found once with dlsym(RTLD_NEXT) from the one table FFIO_REAL_FUNCS, so
 * that ffio's own I/O and the wrappers' pass-through reach the system. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio-internal.h"

struct ffio_real ffio_real;
int ffio_real_state;
_Thread_local struct ffio_thread_state ffio_thread __attribute__((tls_model("initial-exec")));
static _Thread_local int resolving; /* this thread is inside the resolution */

/* RTLD_NEXT finds the definition after libffio (the C library, or another
 * interposer in between).  When libffio was loaded after the C library (as
 * a dependency of a glue library, not preloaded), there is nothing after
 * it: then ask the C library itself. */
static void *real_sym(const char *sym)
{
	static void *libc;
	void *p = dlsym(RTLD_NEXT, sym);

	if (p)
		return p;
	if (!libc)
		libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	return libc ? dlsym(libc, sym) : NULL;
}

#define REAL_RESOLVE(ret, name, params, ...) ffio_real.name = (ret(*) params)real_sym(#name);

int ffio_real_resolve(void)
{
	int expect = FFIO_REAL_NONE;

	if (__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY)
		return 1;
	if (resolving)
		return 0;
	if (__atomic_compare_exchange_n(&ffio_real_state, &expect, FFIO_REAL_RESOLVING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		resolving = 1;
		FFIO_REAL_FUNCS(REAL_RESOLVE)
		resolving = 0;
		__atomic_store_n(&ffio_real_state, FFIO_REAL_READY, __ATOMIC_RELEASE);
		return 1;
	}
	while (__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) != FFIO_REAL_READY)
		sched_yield();
	return 1;
}

void ffio_real_init(void)
{
	static const char msg[] = "ffio: cannot resolve the C library's file calls\n";

	if (ffio_real_ready() && ffio_real.pwrite && ffio_real.openat && ffio_real.close)
		return;
	/* Without the real calls nothing can work; say so and stop. */
	(void)!FFIO_SYS(SYS_write, 2, msg, sizeof msg - 1);
	abort();
}

__attribute__((constructor(101))) static void real_ctor(void)
{
	ffio_real_resolve();
}
