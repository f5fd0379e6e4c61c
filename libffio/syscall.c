/* libffio/syscall.c -- the C library's syscall(2), interposed: a program
 * that closes or duplicates a descriptor with a raw system call through
 * syscall(), reads, writes, sizes, truncates or syncs one ffio manages,
 * starts a program or ends with SYS_exit_group, gets what the C library's
 * function of the same name gives it under ffio (one table,
 * SYSCALL_CALLS): a closed number leaves ffio's table, a write reaches the
 * cache, the cache's data reaches the file before the process ends.  Every other number, and every call made
 * inside ffio, is the kernel's, made here (ffio_syscall): ffio's own raw
 * calls never come back into the table.
 *
 * The system call instruction is written out for x86_64 and aarch64;
 * elsewhere syscall() is not interposed and ffio_syscall is the C
 * library's. */
#include "config.h"
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ffio-internal.h"
#include "interpose.h"

#if defined(__x86_64__) || defined(__aarch64__)

/* The kernel's call: its result, or -errno. */
long ffio_kernel_call(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#else
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#endif
}

long ffio_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	long r = ffio_kernel_call(n, a, b, c, d, e, f);
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* A descriptor of a file ffio manages (not one of ffio's own). */
static int managed_fd(long fd)
{
	struct ffio_ofd *o = ffio_fd_get((int)fd);
	return o != NULL && !o->is_private;
}

/* The numbers a program's raw call takes to ffio's function of the same
 * name (posix.c, process.c, ioctl.c), with the kernel's arguments a[0..5]:
 * X(number, when, call).  Those that close or replace a descriptor, and
 * the end of the process, always; those on one descriptor when it is one
 * ffio manages (MANAGED(k): argument k), so that a raw read of a pipe
 * stays a raw read.  Opens and calls by path stay the kernel's: a
 * descriptor opened with a raw call is not ffio's, and a test (or a
 * program) looks at the file as the kernel has it that way.  A raw
 * preadv's offset is its low word (pos_l), the whole offset on a 64-bit
 * kernel. */
#define ALWAYS 1
#define MANAGED(k) managed_fd(a[k])
#define I(k)  ((int)a[k])
#define U(k)  ((unsigned)a[k])
#define P(k)  ((void *)a[k])
#define O(k)  ((off_t)a[k])
#define Z(k)  ((size_t)a[k])
#define IOV(k) ((const struct iovec *)a[k])
#ifdef SYS_dup2
#define ROW_DUP2(X) X(SYS_dup2, ALWAYS, dup2(I(0), I(1)))
#else
#define ROW_DUP2(X)
#endif
#ifdef SYS_fstat
#define ROW_FSTAT(X) X(SYS_fstat, MANAGED(0), fstat(I(0), P(1)))
#else
#define ROW_FSTAT(X)
#endif
#define SYSCALL_CALLS(X)                                                                   \
	X(SYS_close, ALWAYS, close(I(0)))                                                  \
	X(SYS_close_range, ALWAYS, close_range(U(0), U(1), I(2)))                           \
	X(SYS_dup, ALWAYS, dup(I(0)))                                                      \
	ROW_DUP2(X)                                                                        \
	X(SYS_dup3, ALWAYS, dup3(I(0), I(1), I(2)))                                        \
	X(SYS_exit_group, ALWAYS, (_exit(I(0)), 0))                                        \
	X(SYS_execve, ALWAYS, execve(P(0), P(1), P(2)))                                    \
	X(SYS_execveat, ALWAYS, execveat(I(0), P(1), P(2), P(3), I(4)))                    \
	X(SYS_fcntl, MANAGED(0), fcntl(I(0), I(1), a[2]))                                  \
	X(SYS_read, MANAGED(0), read(I(0), P(1), Z(2)))                                    \
	X(SYS_write, MANAGED(0), write(I(0), P(1), Z(2)))                                  \
	X(SYS_pread64, MANAGED(0), pread(I(0), P(1), Z(2), O(3)))                          \
	X(SYS_pwrite64, MANAGED(0), pwrite(I(0), P(1), Z(2), O(3)))                        \
	X(SYS_readv, MANAGED(0), readv(I(0), IOV(1), I(2)))                                \
	X(SYS_writev, MANAGED(0), writev(I(0), IOV(1), I(2)))                              \
	X(SYS_preadv, MANAGED(0), preadv(I(0), IOV(1), I(2), O(3)))                        \
	X(SYS_pwritev, MANAGED(0), pwritev(I(0), IOV(1), I(2), O(3)))                      \
	X(SYS_preadv2, MANAGED(0), preadv2(I(0), IOV(1), I(2), O(3), I(5)))                \
	X(SYS_pwritev2, MANAGED(0), pwritev2(I(0), IOV(1), I(2), O(3), I(5)))              \
	X(SYS_lseek, MANAGED(0), lseek(I(0), O(1), I(2)))                                  \
	X(SYS_fsync, MANAGED(0), fsync(I(0)))                                              \
	X(SYS_fdatasync, MANAGED(0), fdatasync(I(0)))                                      \
	X(SYS_ftruncate, MANAGED(0), ftruncate(I(0), O(1)))                                \
	X(SYS_fallocate, MANAGED(0), fallocate(I(0), I(1), O(2), O(3)))                    \
	ROW_FSTAT(X)                                                                       \
	X(SYS_mmap, MANAGED(4), (long)ffio_map_file(P(0), Z(1), I(2), I(3), I(4), O(5), 1)) \
	X(SYS_ioctl, MANAGED(0), ioctl(I(0), (unsigned long)a[1], a[2]))                   \
	X(SYS_copy_file_range, MANAGED(0) || MANAGED(2),                                   \
	  copy_file_range(I(0), P(1), I(2), P(3), Z(4), U(5)))

#define SYSCALL_CASE(number, when, call) \
	case number:                     \
		if (!(when))             \
			return 0;        \
		*r = (long)(call);       \
		return 1;

/* The program's raw call made as the C library's function, its result in
 * *r: 1, or 0 when n is not one of them. */
static int as_function(long n, const long a[6], long *r)
{
	switch (n) {
		SYSCALL_CALLS(SYSCALL_CASE)
	}
	return 0;
}

/* Before the C library's functions are known (nothing is managed then)
 * and inside ffio, every number is the kernel's, without resolving
 * anything: a memory allocator may call syscall() while it starts.  Six
 * arguments are taken whatever the call passed, as the C library's own
 * syscall() hands the kernel six registers: the sixth lies in the
 * caller's frame, past what a call of fewer arguments passed, which
 * AddressSanitizer would report, so that read is not checked. */
__attribute__((no_sanitize_address)) FFIO_EXPORT long syscall(long n, ...)
{
	long a[6];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!ffio_in_lib && __atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY) {
		long r;
		if (as_function(n, a, &r))
			return r;
	}
	return ffio_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#else /* the C library's call, not interposed */

long ffio_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	return syscall(n, a, b, c, d, e, f);
}

#endif
