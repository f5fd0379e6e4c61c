/* t/diff_kernel.h -- what the differential test's two files share: the
 * harness (t/diff_kernel.c: one seed's state, the trace, the comparison of
 * two results, parameters drawn from the kernel's view, the seeds) and
 * the operations it applies to both files (t/diff_kernel_ops.c). */
#ifndef FFIO_TEST_DIFF_KERNEL_H
#define FFIO_TEST_DIFF_KERNEL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RNG_SHARED /* one generator for both files (t/diff_kernel.c) */
#include "rng.h"
#include "bad_buf.h"

extern char **environ;

#define PAGE 4096
#define MAXF (256 * 1024) /* offsets and lengths are drawn below this */
#define NSLOT 6           /* descriptors per file */
#define TRACE 20          /* steps shown on a difference */
#define LINE 400

enum kind {
	K_OPEN, K_CLOSE, K_DUP, K_DUP2, K_WRITE, K_READ, K_SEEK, K_HOLE, K_TRUNC,
	K_STAT, K_SYNC, K_FCNTL, K_RENAME, K_FORK, K_MMAP, K_CLOSERANGE, K_STDIO,
	K_SPAWN, K_PEER, K_THREAD, K_RDONLY, K_RAWFD, NKIND
};
extern unsigned kmask;

struct res {
	long long r;          /* return value (-1: failed, errno in e) */
	int e;
	long long x;          /* a second value: a size, a flag word, a count */
	const unsigned char *b; /* bytes read, n of them */
	size_t n;
};

/* One seed's state (t/diff_kernel.c).  Side 0 is the managed file, side 1
 * its twin. */
extern char dir[PATH_MAX / 2], path[2][PATH_MAX];
extern unsigned long long seed;
extern int gen;
extern int slot[NSLOT][2], used[NSLOT], nslot; /* slot[i][side]: one open, both files */
extern char trace[TRACE][LINE];
extern long step;
extern int sub; /* a forked child's steps: step.sub */
extern char msg[8192]; /* the first difference, empty while all agree */
extern int verbose, in_child;
extern unsigned char wbuf[4 * PAGE + 64], rbuf[2][4 * PAGE + 64];
extern char **env_plain; /* environ without LD_PRELOAD */

/* The harness (t/diff_kernel.c). */
int any(void);
int add(const int fd[2]);
void drop(int i);
void tr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tra(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ename(int e);
int same(const struct res r[2], const char *what);
off_t twin_size(void);
int twin_fl(int i);
off_t rnd_off(void);
size_t rnd_len(void);
void fill(unsigned char *p, size_t n);
int cut_iov(struct iovec *iov, unsigned char *base, size_t n);
const char *flstr(int fl);

/* A result and the errno the call left (read after the call returned). */
static inline struct res RES(long long ret) { return (struct res){.r = ret, .e = errno}; }

/* The operations (t/diff_kernel_ops.c). */
void op_open(int first);
void op_close(void);
void op_dup(void);
void op_dup2(void);
void op_write(void);
void op_read(void);
void op_seek(int hole);
void op_trunc(void);
void op_stat(void);
void op_sync(void);
void op_fcntl(void);
void set_paths(void);
void op_rename(void);
extern sigjmp_buf bus_jmp;
void on_bus(int sig);
void op_mmap(void);
void op_closerange(void);
void op_stdio(void);
unsigned char *read_all(int fd, size_t *len);
int spawn_capture(char *const argv[], char **envp, unsigned char **out, size_t *len);
void op_spawn(int plain);
void op_thread(void);
void op_rdonly(void);
void op_rawfd(void);

#endif
