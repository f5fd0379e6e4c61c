/* t/posix_mmap_hook.c -- a library that takes over mmap and makes the map
 * itself with syscall(SYS_mmap), as UCX's memory hooks do under MPICH:
 * ffio's syscall() must not hand that call back to the name mmap (the
 * hook again, for ever: the stack overflowed in every MPICH program with
 * a spec matching the files UCX maps).  This program is the hooking
 * library: its own mmap comes first for every caller, ffio included.  It
 * re-executes itself with a spec matching *.dat, writes a file through
 * the cache and maps it: one call of the hook, no recursion, and the map
 * shows the bytes written (ffio's mmap work done around the kernel's
 * call: the cached bytes reached the file first). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"

static int hook_calls, hook_depth, hook_deepest;

/* The hook: counts, refuses to go deeper than twice (so that a recursion
 * fails the test, not the stack), maps with the raw call. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	hook_calls++;
	if (++hook_depth > hook_deepest)
		hook_deepest = hook_depth;
	if (hook_depth > 2) {
		errno = ELOOP;
		p = MAP_FAILED;
	} else {
		p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	}
	hook_depth--;
	return p;
}

int main(int argc, char **argv)
{
	static const char text[] = "bytes cached, then mapped through a hook";
	char dir[4096], path[4200];

	(void)argc;
	if (!getenv("FF_IO_OPTS")) {
		setenv("FF_IO_OPTS", "*.dat(cache:64k:4:0)", 1);
		execv(tap_self(), argv);
		printf("Bail out! exec %s: %s\n", tap_self(), strerror(errno));
		return 1;
	}
	tap_tmpdir(dir, sizeof dir, "posix_mmap_hook");
	snprintf(path, sizeof path, "%s/m.dat", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		printf("Bail out! open %s: %s\n", path, strerror(errno));
		return 1;
	}
	tap_is(write(fd, text, sizeof text), (long)sizeof text, "a write into the cache");
	hook_calls = hook_deepest = 0;
	char *p = mmap(NULL, sizeof text, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(p != MAP_FAILED, "the hooked mmap of a cached file maps it%s%s", p == MAP_FAILED ? ": " : "",
	       p == MAP_FAILED ? strerror(errno) : "");
	tap_is(hook_calls, 1, "the hook ran once (syscall(SYS_mmap) did not call it again)");
	tap_is(hook_deepest, 1, "and never inside itself");
	tap_ok(p != MAP_FAILED && memcmp(p, text, sizeof text) == 0, "the map shows the bytes written");
	if (p != MAP_FAILED)
		munmap(p, sizeof text);
	char back[sizeof text];
	tap_is(pread(fd, back, sizeof back, 0), (long)sizeof back, "a read after the map");
	tap_ok(memcmp(back, text, sizeof text) == 0, "gives the same bytes");
	close(fd);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
