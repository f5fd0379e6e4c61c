/* t/uring_hostmalloc.c -- a program that knows nothing of ffio, run with
 * libffio preloaded (FFIO_LIB): its malloc, free, posix_memalign and
 * realloc stay the C library's although libffio's buffer pool links
 * jemalloc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static const char *owner(const char *sym)
{
	void *p = dlsym(RTLD_DEFAULT, sym);
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *lib = getenv("FFIO_LIB");
	if (!dlsym(RTLD_DEFAULT, "ffopen")) {
		if (!lib || access(lib, R_OK) != 0)
			tap_skip_all("FFIO_LIB not set");
		setenv("LD_PRELOAD", lib, 1);
		execv(tap_self(), argv);
		perror("execv");
		return 1;
	}
	static const char *const syms[] = { "malloc", "free", "posix_memalign", "realloc" };
	tap_plan(5);
	tap_ok(dlsym(RTLD_DEFAULT, "ffopen") != NULL, "libffio is preloaded");
	for (int i = 0; i < 4; i++) {
		const char *o = owner(syms[i]);
		tap_ok(strcmp(o, "?") != 0 && !strstr(o, "jemalloc"), "%s is not jemalloc's (%s)", syms[i], o);
	}
	return tap_done();
}
