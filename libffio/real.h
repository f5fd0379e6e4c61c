/* libffio/real.h -- the C library's functions as ffio calls them, past
 * its own interposed names: one table (FFIO_REAL_FUNCS) of every function
 * ffio forwards to or calls itself, the struct ffio_real it is resolved
 * into, and its resolution (real.c).  Included by ffio-internal.h, after
 * the system headers it needs. */
#ifndef FFIO_REAL_H
#define FFIO_REAL_H

/* Every C library function that ffio forwards to or calls itself:
 * X(return type, name, parameter list[, argument list]).  One table serves the wrappers
 * (posix.c) and the layers. */
#define FFIO_REAL_FUNCS(X)                                                         \
	X(int, open, (const char *, int, ...))                                     \
	X(int, openat, (int, const char *, int, ...))                              \
	X(int, __open_2, (const char *, int))                                      \
	X(int, __openat_2, (int, const char *, int))                               \
	X(int, close, (int))                                                       \
	X(ssize_t, read, (int, void *, size_t))                                    \
	X(ssize_t, write, (int, const void *, size_t))                             \
	X(ssize_t, pread, (int, void *, size_t, off_t))                            \
	X(ssize_t, pwrite, (int, const void *, size_t, off_t))                     \
	X(ssize_t, readv, (int, const struct iovec *, int))                        \
	X(ssize_t, writev, (int, const struct iovec *, int))                       \
	X(ssize_t, preadv, (int, const struct iovec *, int, off_t))                \
	X(ssize_t, pwritev, (int, const struct iovec *, int, off_t))               \
	X(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int))          \
	X(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int))         \
	X(off_t, lseek, (int, off_t, int))                                         \
	X(int, fsync, (int))                                                       \
	X(int, fdatasync, (int))                                                   \
	X(int, ftruncate, (int, off_t))                                            \
	X(int, truncate, (const char *, off_t))                                    \
	X(int, fstat, (int, struct stat *))                                        \
	X(int, stat, (const char *, struct stat *))                                \
	X(int, lstat, (const char *, struct stat *))                               \
	X(int, fstatat, (int, const char *, struct stat *, int))                   \
	X(int, statx, (int, const char *, int, unsigned, struct statx *))          \
	X(int, __fxstat, (int, int, struct stat *))                                \
	X(int, __xstat, (int, const char *, struct stat *))                        \
	X(int, __lxstat, (int, const char *, struct stat *))                       \
	X(int, __fxstatat, (int, int, const char *, struct stat *, int))           \
	X(int, fcntl, (int, int, ...))                                             \
	X(int, flock, (int, int))                                                  \
	X(int, lockf, (int, int, off_t))                                           \
	X(int, dup, (int))                                                         \
	X(int, dup2, (int, int))                                                   \
	X(int, dup3, (int, int, int))                                              \
	X(int, posix_fadvise, (int, off_t, off_t, int))                            \
	X(int, fallocate, (int, int, off_t, off_t))                                \
	X(int, posix_fallocate, (int, off_t, off_t))                               \
	X(void *, mmap, (void *, size_t, int, int, int, off_t))                    \
	X(ssize_t, copy_file_range, (int, off_t *, int, off_t *, size_t, unsigned)) \
	X(ssize_t, sendfile, (int, int, off_t *, size_t))                          \
	X(ssize_t, splice, (int, off_t *, int, off_t *, size_t, unsigned))         \
	X(int, execve, (const char *, char *const[], char *const[]))               \
	X(int, execv, (const char *, char *const[]))                               \
	X(int, execvp, (const char *, char *const[]))                              \
	X(int, execvpe, (const char *, char *const[], char *const[]))              \
	X(int, fexecve, (int, char *const[], char *const[]))                       \
	X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			     const posix_spawnattr_t *, char *const[], char *const[])) \
	X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			      const posix_spawnattr_t *, char *const[], char *const[])) \
	X(int, execveat, (int, const char *, char *const[], char *const[], int))    \
	X(int, system, (const char *))                                             \
	X(FILE *, popen, (const char *, const char *))                             \
	X(pid_t, _Fork, (void))                                                    \
	X(void, _exit, (int))                                                      \
	X(int, close_range, (unsigned, unsigned, int))                             \
	X(FILE *, fdopen, (int, const char *))                                     \
	X(int, fclose, (FILE *))                                                   \
	X(FILE *, fopen, (const char *, const char *))                             \
	X(FILE *, freopen, (const char *, const char *, FILE *))                   \
	X(void, sync, (void))                                                      \
	X(int, syncfs, (int))                                                      \
	X(int, sync_file_range, (int, off_t, off_t, unsigned))                     \
	X(int, pipe, (int[2]))                                                     \
	X(int, pipe2, (int[2], int))                                               \
	X(int, socketpair, (int, int, int, int[2]))                                \
	X(ssize_t, send, (int, const void *, size_t, int))                         \
	X(ssize_t, sendto, (int, const void *, size_t, int, __CONST_SOCKADDR_ARG, socklen_t)) \
	X(ssize_t, sendmsg, (int, const struct msghdr *, int))                     \
	X(int, sendmmsg, (int, struct mmsghdr *, unsigned, int))                   \
	X(int, kill, (pid_t, int))                                                 \
	X(int, killpg, (pid_t, int))                                               \
	X(int, sigqueue, (pid_t, int, const union sigval))                         \
	X(ssize_t, recv, (int, void *, size_t, int))                               \
	X(ssize_t, recvfrom, (int, void *, size_t, int, __SOCKADDR_ARG, socklen_t *)) \
	X(ssize_t, recvmsg, (int, struct msghdr *, int))                           \
	X(int, recvmmsg, (int, struct mmsghdr *, unsigned, int, struct timespec *)) \
	X(pid_t, wait, (int *))                                                    \
	X(pid_t, waitpid, (pid_t, int *, int))                                     \
	X(pid_t, wait4, (pid_t, int *, int, struct rusage *))                      \
	X(int, waitid, (idtype_t, id_t, siginfo_t *, int))                         \
	X(int, sigwait, (const sigset_t *, int *))                                 \
	X(int, sigwaitinfo, (const sigset_t *, siginfo_t *))                       \
	X(int, sigtimedwait, (const sigset_t *, siginfo_t *, const struct timespec *)) \
	X(int, sigsuspend, (const sigset_t *))                                     \
	X(int, pause, (void))                                                      \
	X(int, sem_post, (sem_t *))                                                \
	X(int, sem_wait, (sem_t *))                                                \
	X(int, sem_trywait, (sem_t *))                                             \
	X(int, sem_timedwait, (sem_t *, const struct timespec *))                  \
	X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))       \
	X(int, nanosleep, (const struct timespec *, struct timespec *))            \
	X(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *)) \
	X(unsigned, sleep, (unsigned))                                             \
	X(int, usleep, (useconds_t))                                               \
	X(int, pclose, (FILE *))                                                   \
	X(int, fflush, (FILE *))                                                   \
	X(int, rename, (const char *, const char *))                               \
	X(int, renameat, (int, const char *, int, const char *))                   \
	X(int, renameat2, (int, const char *, int, const char *, unsigned))        \
	X(int, link, (const char *, const char *))                                 \
	X(int, linkat, (int, const char *, int, const char *, int))                \
	X(int, symlink, (const char *, const char *))                              \
	X(int, symlinkat, (const char *, int, const char *))                       \
	X(int, mkdir, (const char *, mode_t))                                      \
	X(int, mkdirat, (int, const char *, mode_t))                               \
	X(int, unlink, (const char *))                                             \
	X(int, unlinkat, (int, const char *, int))                                 \
	X(int, rmdir, (const char *))                                              \
	X(int, munmap, (void *, size_t))                                           \
	X(void *, mremap, (void *, size_t, size_t, int, ...))                      \
	X(int, sigaction, (int, const struct sigaction *, struct sigaction *))     \
	X(DIR *, opendir, (const char *))                                          \
	X(DIR *, fdopendir, (int))                                                 \
	X(int, closedir, (DIR *))                                                  \
	X(struct dirent *, readdir, (DIR *))                                       \
	X(__sighandler_t, signal, (int, __sighandler_t))                           \
	X(void, siglongjmp, (struct __jmp_buf_tag *, int))                         \
	X(void, longjmp, (struct __jmp_buf_tag *, int))                            \
	X(void, _longjmp, (struct __jmp_buf_tag *, int))                           \
	X(void, __longjmp_chk, (struct __jmp_buf_tag *, int))                      \
	X(int, futimens, (int, const struct timespec *))                           \
	X(int, utimensat, (int, const char *, const struct timespec *, int))       \
	X(int, futimes, (int, const struct timeval *))                             \
	X(int, utimes, (const char *, const struct timeval *))                     \
	X(int, lutimes, (const char *, const struct timeval *))                    \
	X(int, futimesat, (int, const char *, const struct timeval *))             \
	X(int, utime, (const char *, const struct utimbuf *))                      \
	FFIO_FRESH_FUNCS(X)

/* Calls that make a descriptor without open: X(ret, name, params, args);
 * rows of FFIO_REAL_FUNCS too (whose X ignores args). */
#define FFIO_FRESH_FUNCS(X)                                                               \
	X(int, socket, (int domain, int type, int proto), (domain, type, proto))           \
	X(int, accept, (int fd, __SOCKADDR_ARG a, socklen_t *restrict l), (fd, a, l))      \
	X(int, accept4, (int fd, __SOCKADDR_ARG a, socklen_t *restrict l, int fl),         \
	  (fd, a, l, fl))                                                                  \
	X(int, eventfd, (unsigned init, int flags), (init, flags))                         \
	X(int, memfd_create, (const char *name, unsigned flags), (name, flags))            \
	X(int, epoll_create, (int size), (size))                                           \
	X(int, epoll_create1, (int flags), (flags))                                        \
	X(int, signalfd, (int fd, const sigset_t *mask, int flags), (fd, mask, flags))     \
	X(int, timerfd_create, (int clock, int flags), (clock, flags))                     \
	X(int, inotify_init, (void), ())                                                   \
	X(int, inotify_init1, (int flags), (flags))

#define FFIO_REAL_FIELD(ret, name, params, ...) ret(*name) params;
struct ffio_real {
	FFIO_REAL_FUNCS(FFIO_REAL_FIELD)
};
extern struct ffio_real ffio_real;

/* Resolve ffio_real once (thread-safe).  Returns 1 when the table is ready,
 * 0 when called again from inside the resolution (dlsym calling back into
 * a wrapper): the caller must then make the system call itself. */
int ffio_real_resolve(void);
enum { FFIO_REAL_NONE, FFIO_REAL_RESOLVING, FFIO_REAL_READY };
extern int ffio_real_state; /* accessed with __atomic builtins */
static inline int ffio_real_ready(void)
{
	return __builtin_expect(__atomic_load_n(&ffio_real_state, __ATOMIC_ACQUIRE) == FFIO_REAL_READY, 1) ||
	       ffio_real_resolve();
}
/* The same, for callers that cannot do without the table. */
void ffio_real_init(void);

#endif
