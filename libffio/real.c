/* libffio/real.c -- the libc functions behind the interposed names, found
 * with dlsym(RTLD_NEXT), so that ffio's own I/O reaches the system. */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ffio-internal.h"

struct ffio_real ffio_real;
_Thread_local int ffio_in_lib;

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

#define RESOLVE(field, sym)                                \
	do {                                               \
		*(void **)&ffio_real.field = real_sym(sym); \
		if (!ffio_real.field)                      \
			missing = sym;                     \
	} while (0)

static void resolve(void)
{
	const char *missing = NULL;

	ffio_in_lib++;
	RESOLVE(open, "open");
	RESOLVE(openat, "openat");
	RESOLVE(close, "close");
	RESOLVE(read, "read");
	RESOLVE(write, "write");
	RESOLVE(pread, "pread");
	RESOLVE(pwrite, "pwrite");
	RESOLVE(readv, "readv");
	RESOLVE(writev, "writev");
	RESOLVE(preadv, "preadv");
	RESOLVE(pwritev, "pwritev");
	RESOLVE(preadv2, "preadv2");
	RESOLVE(pwritev2, "pwritev2");
	RESOLVE(lseek, "lseek");
	RESOLVE(fsync, "fsync");
	RESOLVE(fdatasync, "fdatasync");
	RESOLVE(ftruncate, "ftruncate");
	RESOLVE(fstat, "fstat");
	RESOLVE(fcntl, "fcntl");
	RESOLVE(dup, "dup");
	RESOLVE(posix_fadvise, "posix_fadvise");
	ffio_in_lib--;
	if (missing) {
		/* Without the real calls nothing can work; say which and stop. */
		static const char msg[] = "ffio: cannot resolve the C library's ";
		(void)!syscall(SYS_write, 2, msg, sizeof msg - 1);
		(void)!syscall(SYS_write, 2, missing, strlen(missing));
		(void)!syscall(SYS_write, 2, "\n", 1);
		abort();
	}
}

void ffio_real_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (!ffio_real.pwrite)
		pthread_once(&once, resolve);
}

__attribute__((constructor(101))) static void real_ctor(void)
{
	ffio_real_init();
}
