/* ffio-internal.h -- the contract between the core (libffio/) and the layers
 * (layers/): layer descriptors and method tables, the parsed spec, the open
 * file (a stack of layer instances), the fd table, logging, and the calls
 * a layer makes to the layer below it.
 *
 * Conventions: every internal function returns 0 (or a byte count) on
 * success and -errno on failure; errno is set only at the POSIX boundary
 * (posix.c, api.c).  Calls made from inside ffio reach the system through
 * ffio_real (never through the interposed names).
 */
#ifndef FFIO_INTERNAL_H
#define FFIO_INTERNAL_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ffio.h"
#include "ffio_ext.h"

#define FFIO_MAX_PARAMS 8  /* arguments of one layer */

/* The functions a call on a managed descriptor runs every time (the
 * wrappers, a write that passes the stack), kept together in the
 * library's code (GCC places hot functions in .text.hot): where every
 * system call empties the processor's TLB (kernel page-table isolation
 * without PCID), each page of code a call touches costs a page walk
 * after it, and a 320 B write touched 9 of libffio's pages. */
#define FFIO_HOT __attribute__((hot))

struct ffio_layer;
struct statx; /* <sys/stat.h> declares it only with _GNU_SOURCE */
struct timeval;
struct utimbuf;
struct ffio_file;

/* ---- layer descriptors ------------------------------------------------ */

enum ffio_param_type {
	FFIO_P_SIZE,  /* bytes; suffix k, m, g (powers of 1024) */
	FFIO_P_COUNT, /* plain count; suffix k, m, g allowed */
	FFIO_P_TIME,  /* nanoseconds; suffix ns, us, ms, s (bare number: us) */
	FFIO_P_RATE,  /* bytes per second; suffix k, m, g */
	FFIO_P_ERRNO, /* an errno name (ENOSPC) or number */
	FFIO_P_ENUM,  /* one of .names; the value is its index */
};

struct ffio_param {
	const char *name;
	enum ffio_param_type type;
	int64_t def;                /* default when not given */
	int64_t min, max;           /* accepted range (inclusive) */
	const char *const *names;   /* FFIO_P_ENUM: NULL-terminated */
};

/* A flag (".direct").  Flags whose group is non-zero exclude each other
 * (event.summary / event.trace); the last one given wins. */
struct ffio_flag {
	const char *name;
	unsigned bit;
	unsigned group; /* mask of the bits this flag replaces */
};

/* Layer kinds (ffio_layer_ops.kind). */
#define FFIO_LAYER_BOTTOM 0x1u /* opens the file itself: sys, uring */

struct ffio_layer_spec;

/* Asynchronous requests (enum ffio_op, struct ffio_req): ffio_ext.h. */

/* The descriptor and method table of one layer.  Each layers/<name>.c
 * exports one of these.  A NULL method passes the call through to the
 * layer below (for pread/pwrite: a layer implementing either the plain or
 * the vector form handles both; see ffio_below_*). */
struct ffio_layer_ops {
	const char *name;
	const char *const *aliases;       /* NULL-terminated, or NULL */
	const struct ffio_flag *flags;    /* {NULL}-terminated, or NULL */
	const struct ffio_param *params;  /* positional order, {NULL}-terminated */
	unsigned kind;                    /* FFIO_LAYER_* */
	size_t instance_size;             /* size of the instance (>= ffio_layer) */
	const char *unavailable;          /* non-NULL: known but not built here, why */
	const char *fallback;             /* when unavailable: layer to use instead, or NULL */

	/* Spec time: rewrite a spec onto another layer (eie -> cache); may
	 * also check argument combinations.  Returns 0 or -EINVAL with a reason
	 * in err. */
	int (*map)(struct ffio_layer_spec *ls, char *err, size_t errlen);

	/* Instance life.  open() must call ffio_below_open() (bottoms open the
	 * file and set l->file->fd).  close() must close below as well; it is
	 * called once, on the last descriptor's close. */
	int (*open)(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode);
	int (*close)(struct ffio_layer *l);

	ssize_t (*pread)(struct ffio_layer *l, void *buf, size_t n, off_t off);
	ssize_t (*pwrite)(struct ffio_layer *l, const void *buf, size_t n, off_t off);
	ssize_t (*preadv)(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
	ssize_t (*pwritev)(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
	/* The hit path, for the top layer of a stack only (optional): a small
	 * read or write that the layer completes at once in its own memory,
	 * with no call below, no wait and no error possible.  Returns n, or 0
	 * having changed nothing (not a hit: the call takes the full path).
	 * Called in a process with one thread, 0 < n <= FFIO_HIT_CAP, off >= 0,
	 * buf wholly in plain user memory (ffio_ofd_hit_fits); the file does
	 * not pass through, the description is not O_DIRECT, and for writes
	 * the file holds no deferred error and the description is plain (no
	 * O_APPEND, O_SYNC, O_DSYNC).  A write hit goes only into data that a
	 * write of the full path dirtied since the last flush (ffio_file's
	 * unwritten is set already).  Hits do not move the file's stack_calls:
	 * a layer that keeps state from one hit to the next sees its own hits.
	 * See ffio_ofd_hits and ffio_ofd_read_hit below. */
	ssize_t (*read_hit)(struct ffio_layer *l, void *buf, size_t n, off_t off);
	ssize_t (*write_hit)(struct ffio_layer *l, const void *buf, size_t n, off_t off);

	/* Told of a request that passed the whole stack (see passes in
	 * struct ffio_layer, and stack.c): write, at off, n bytes asked; r is
	 * the kernel's result, a count or -errno.  Optional. */
	void (*passed)(struct ffio_layer *l, int write, off_t off, size_t n, ssize_t r);

	int (*flush)(struct ffio_layer *l);      /* push buffered writes below and wait */
	int (*fsync)(struct ffio_layer *l, int datasync); /* flush + kernel sync + drop clean */
	int (*truncate)(struct ffio_layer *l, off_t len);
	int (*size)(struct ffio_layer *l, off_t *len);    /* logical size */
	int (*invalidate)(struct ffio_layer *l); /* drop clean cached data and sizes */

	int (*submit)(struct ffio_layer *l, struct ffio_req *r);
	int (*commit)(struct ffio_layer *l);
	int (*reap)(struct ffio_layer *l, unsigned min); /* complete >= min requests */

	/* Statistics for ffgetstats(); fill *st, return 0 (or -ENOTSUP). */
	int (*stats)(struct ffio_layer *l, struct ffio_stats *st);
	/* At exit, after the last flush (final reports).  There is no fork
	 * event: a file open at fork passes through to the kernel in both
	 * processes, its stack closed first (file.c). */
	void (*atexit)(struct ffio_layer *l);

	/* Drop buffered (dirty and clean) data without writing it: the file
	 * is being deleted (nc_abort of a file being created).  Optional;
	 * see ffio_file_discard(). */
	int (*discard)(struct ffio_layer *l);

	/* Advice about the kernel's page cache, as posix_fadvise's:
	 * WILLNEED starts reading [off, off + len) and returns at once;
	 * RANDOM and NORMAL turn the kernel's own read-ahead off and on.
	 * Optional; -EOPNOTSUPP when no layer below can (O_DIRECT, say). */
	int (*advise)(struct ffio_layer *l, off_t off, off_t len, int advice);
};

/* Flags and parameters shared between layers that map onto each other
 * (eie, cachea and bufa become cache): cache params are, in order,
 * page (FFIO_P_SIZE), pages (FFIO_P_COUNT), ahead (FFIO_P_COUNT). */
#define FFIO_CACHE_DIRECT 0x01u
#define FFIO_CACHE_WT     0x02u
#define FFIO_CACHE_DIAG   0x04u
#define FFIO_CACHE_SHARED 0x08u
#define FFIO_CACHE_SIEVE  0x10u
enum { FFIO_CACHE_PAGE, FFIO_CACHE_PAGES, FFIO_CACHE_AHEAD };

/* ---- parsed spec ------------------------------------------------------ */

struct ffio_layer_spec {
	const struct ffio_layer_ops *ops; /* after map(): the layer that runs */
	unsigned flags;                   /* bits of ops->flags given */
	unsigned given;                   /* bit i: params[i] given explicitly */
	int64_t arg[FFIO_MAX_PARAMS];     /* params, defaults filled in */
	char text[64];                    /* the layer as written (truncated), for labels */
	void *shared;                     /* per-entry state of the layer (.shared caches) */
	pthread_mutex_t shared_lock;      /* guards the creation of shared */
};

struct ffio_entry {
	int index;      /* 1-based position in FF_IO_OPTS */
	char *pattern;  /* fnmatch(3) glob */
	int has_slash;  /* match the whole path, not the last component */
	int nlayers;
	struct ffio_layer_spec layer[FFIO_MAX_LAYERS];
};

struct ffio_spec {
	int nentries;
	struct ffio_entry *entry;
};

/* Parse text (the value of the variable named source, e.g. "FF_IO_OPTS").
 * On error returns -EINVAL and writes one message (naming source, entry,
 * column and what was expected) into err.  An empty spec has 0 entries. */
int ffio_spec_parse(const char *text, const char *source, struct ffio_spec **out,
		    char *err, size_t errlen);
void ffio_spec_free(struct ffio_spec *s);
/* The first entry matching path (as the program passed it), or NULL. */
struct ffio_entry *ffio_spec_match(const struct ffio_spec *s, const char *path);
/* Parse a stack without a pattern ("cache:1m, sys") into one entry. */
int ffio_spec_parse_stack(const char *text, const char *source, struct ffio_spec **out,
			  char *err, size_t errlen);

/* ---- registry --------------------------------------------------------- */

const struct ffio_layer_ops *ffio_layer_find(const char *name, size_t len);
/* NULL-terminated list of every known layer. */
extern const struct ffio_layer_ops *const ffio_layers[];

extern const struct ffio_layer_ops ffio_layer_sys;
extern const struct ffio_layer_ops ffio_layer_uring;
extern const struct ffio_layer_ops ffio_layer_cache;
extern const struct ffio_layer_ops ffio_layer_eie;
extern const struct ffio_layer_ops ffio_layer_cachea;
extern const struct ffio_layer_ops ffio_layer_bufa;
extern const struct ffio_layer_ops ffio_layer_event;
extern const struct ffio_layer_ops ffio_layer_fault;
extern const struct ffio_layer_ops ffio_layer_delay;

/* ---- layer instances and open files ----------------------------------- */

/* The common head of every layer instance; a layer's own struct begins
 * with it (struct cache { struct ffio_layer base; ... }). */
struct ffio_layer {
	const struct ffio_layer_ops *ops;
	const struct ffio_layer_spec *spec;
	struct ffio_layer *below; /* NULL for the bottom */
	struct ffio_file *file;
	int index;                /* 0 = top of the stack */
	/* FFIO_PASS_*: the requests the layer would hand, just now, to the
	 * layer below unchanged and with nothing to do first; a bottom's bit
	 * says that it makes them as one kernel call on the file's
	 * descriptor.  Set and cleared by the layer itself, wherever what
	 * decides it changes.  A request that every layer of the stack
	 * passes, of at most FFIO_WRITE_WHOLE bytes, is made by the core
	 * itself, and each layer hears of it afterwards (ops->passed): so
	 * that a cache standing aside costs no more than a call (stack.c). */
	unsigned passes;
};
#define FFIO_PASS_READ  0x1u
#define FFIO_PASS_WRITE 0x2u

/* Files follow the kernel's three levels (see file.c):
 *  - struct ffio_file: one per file (device, inode) in the process, shared
 *    by every open of it: the stack of layers, ffio's own descriptor of the
 *    file (write-back never depends on the application's), deferred errors;
 *  - struct ffio_ofd: one per open file description (what open creates and
 *    dup and fork share): the position and the status flags;
 *  - the descriptor table (fdtable.c): application descriptor -> ffio_ofd.
 * A file "passes through" once the kernel must see every call as it is made
 * (it is shared with a forked child, mapped, or handed to stdio): its stack
 * is flushed and closed, and calls on its descriptors go to the kernel. */
struct ffio_ofd {
	struct ffio_file *file;
	off_t pos;                /* the position (file->lock) */
	/* The top layer and its hit methods, where they may take this
	 * description's calls, else NULL: set by ffio_ofd_hits wherever what
	 * decides it changes (the flags, the file passing through or losing
	 * its stack), so that the hit path tests one pointer. */
	struct ffio_layer *hit_layer;
	ssize_t (*read_hit)(struct ffio_layer *l, void *buf, size_t n, off_t off);
	ssize_t (*write_hit)(struct ffio_layer *l, const void *buf, size_t n, off_t off);
	int oflags;               /* status flags as the application set them (file->lock) */
	int refs;                 /* descriptors attached to it (files lock) */
	int kfd;                  /* one of them: the kernel's twin of this description */
	int is_private;           /* the entry of ffio's own descriptor of the file */
	struct ffio_ofd *next;    /* the file's descriptions (files lock) */
};

#define FFIO_NOTES 4
struct ffio_file {
	pthread_mutex_t lock;     /* serialises calls into the stack */
	struct ffio_layer *top;   /* NULL once the file passes through */
	int fd;                   /* ffio's own descriptor (the bottom's), or -1 */
	int oflags;               /* the flags ffio's descriptor was opened with */
	int error;                /* deferred error (-errno) not yet reported, or 0 */
	int through;              /* calls go straight to the kernel (see above) */
	int posix_locked;         /* a process-wide record lock was taken: flush before closes */
	off_t app_lock_lo, app_lock_hi; /* the range [lo, hi) of the record lock the program
				     took last and has not released (hi 0: none; f->lock):
				     its reads and writes there are its own read-modify-
				     write (ffio_file_app_locked) */
	int users;                /* open descriptions and holds (files lock) */
	int refs;                 /* users and lookups in progress: the memory (files lock) */
	struct ffio_entry *entry;
	char *path;               /* as the first open named it */
	dev_t dev;
	ino_t ino;
	struct ffio_ofd *ofds;    /* its open descriptions (files lock) */
	struct ffio_ofd priv;     /* the table entry of fd (is_private) */
	struct ffio_file *next, *prev; /* list of open files (files lock) */
	unsigned glue_flags;      /* FFIO_FILE_* (ffio_ext.h), from glue that knows more */
	unsigned long stack_calls; /* calls into the stack but hits (stack.c): a layer's
				     hit can tell that nothing but hits has run in the
				     stack since its last one */
	off_t max_pos;            /* the kernel's largest position: lseek past it is EINVAL,
				     a write at it EFBIG (s_maxbytes; ffio_kernel_max_pos) */
	size_t dio_align;         /* O_DIRECT's alignment (ffio_kernel_dio_align), 0 until
				     a description asks (f->lock) */
	off_t wmax_pos;           /* where writes must end: max_pos, or RLIMIT_FSIZE's
				     limit when lower (ffio_fsize_limit; files lock) */
	int write_whole;          /* long buffered writes go below in one call
				     (FFIO_FS_WRITE_WHOLE: FUSE) */
	int kept_fd;              /* ffio's own descriptor, kept open after the stack
				     closed (the file passes through): the process
				     may hold POSIX record locks on the file, which
				     any close of a descriptor of it drops; closed
				     with the file (-1: none) */
	int unwritten;            /* a write of the full path went into the stack
				     since the last ffio_file_stat_sync (a write
				     hit follows one): the kernel's times and
				     blocks may not have it */
	struct ffio_note {        /* what layers decided at run time (ffio_layer_note),
				     for the event layers' summaries (f->lock) */
		int layer;        /* its index */
		char text[200];
	} notes[FFIO_NOTES];
	int nnotes;               /* made; beyond FFIO_NOTES the last one is replaced */
};

/* Open path for the application (entry e, or NULL: only when the file is
 * already open through ffio) and manage the descriptor: the kernel opens
 * it exactly as asked; a regular file matched by e, or already open in the
 * process, gets its description attached.  any_type: any file e matches
 * (ffopen, which names its stack), not only regular ones.  Returns the
 * descriptor or -errno (the kernel's error). */
int ffio_open(struct ffio_entry *e, int dirfd, const char *path, int flags, mode_t mode,
	      int any_type);
/* A descriptor the kernel opened without ffio (fd-creating calls that are
 * not open): forget a stale entry of that number. */
void ffio_fd_fresh(int fd);
/* Attach newfd (already a kernel duplicate of oldfd) to oldfd's description. */
int ffio_fd_dup(int oldfd, int newfd);
/* Drop descriptor fd: close it in the kernel (kclose) or not (it is already
 * closed: fclose, closefrom); the last descriptor of a file flushes and
 * closes its stack.  Returns the kernel's error, else the file's first
 * error not yet reported. */
int ffio_fd_close(int fd, int kclose);
/* The file behind an application descriptor, NULL when fd is not managed. */
struct ffio_file *ffio_fd_file(int fd);
/* Is fd ffio's own descriptor of some file? */
int ffio_fd_is_private(int fd);
/* Move ffio's own descriptors out of [lo, hi] (the application is about to
 * take those numbers). 0 or -errno. */
int ffio_private_evict(int lo, int hi);
/* The lowest of ffio's own descriptors >= fd, or -1 (for closefrom). */
int ffio_private_next(int fd);
/* Give up ffio's lowest-numbered descriptor of a file, the number the
 * kernel alone would hand out next (the file passes through to the
 * kernel), if it is below below: 1, or 0 when no file has one. */
int ffio_private_give_up(int below);

/* Operations on an open description; each takes the file's lock. */
ssize_t ffio_ofd_preadv(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off);
ssize_t ffio_ofd_pwritev(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off);
ssize_t ffio_ofd_readv(struct ffio_ofd *o, const struct iovec *iov, int iovcnt);  /* at pos */
ssize_t ffio_ofd_writev(struct ffio_ofd *o, const struct iovec *iov, int iovcnt); /* at pos */
/* pwritev2's flags: RWF_APPEND, RWF_(D)SYNC. off -1: at pos. */
ssize_t ffio_ofd_pwritev2(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off, int flags);
off_t ffio_ofd_seek(struct ffio_ofd *o, off_t off, int whence);
int ffio_ofd_truncate(struct ffio_ofd *o, off_t len);
off_t ffio_ofd_pos(struct ffio_ofd *o);
/* F_SETFL made on the kernel's twin: follow the flags it now has. */
void ffio_ofd_set_flags(struct ffio_ofd *o, int flags);

/* What the calls of a thread ask on their way through ffio, together at
 * one offset from the thread pointer (initial-exec: libffio is preloaded
 * or linked, so its TLS is in the static block): one load on every
 * wrapped call. */
struct ffio_thread_state {
	/* Reentrancy: while set, interposed calls go straight to the system. */
	int in_lib;
	/* A handler of the program for a signal that came while this thread
	 * was inside ffio waits, with the program's other signals, until the
	 * thread leaves (handlers.c): set while one waits. */
	int signal_waiting;
	/* Set while the thread writes back and drops every file's clean
	 * data for a message heard (coherence.c): its own calls into the
	 * stacks cache nothing that stays. */
	int hearing;
};
extern _Thread_local struct ffio_thread_state ffio_thread __attribute__((tls_model("initial-exec")));
#define ffio_in_lib (ffio_thread.in_lib)
#define ffio_signal_waiting (ffio_thread.signal_waiting)
/* The number of the program's signal handlers this thread is running
 * (handlers.c).  In one, ffio flushes no other file for a message (a
 * handler may interrupt the program holding any lock: coherence.c), and
 * a write on a managed file reaches the kernel before it returns, as the
 * handler may be a fatal signal's, writing a crash report (ofd.c). */
extern _Thread_local int ffio_in_handler __attribute__((tls_model("initial-exec")));
/* Run the waiting handler as the kernel would have, then let the
 * thread's signals in again. */
void ffio_signal_run_waiting(void);
/* After fork, in the child: the parent's waiting handler is not its own. */
void ffio_signal_forget_waiting(void);

/* Leave ffio: the end of a call's work, made with nothing held and
 * nothing half-done, where a signal handler that waited may run. */
static inline void ffio_leave(void)
{
	if (--ffio_in_lib == 0 && __builtin_expect(ffio_signal_waiting, 0))
		ffio_signal_run_waiting();
}

/* The small calls, with the hit path first (ffio_layer_ops.read_hit and
 * write_hit): inline in the wrappers, as a cache hit's whole cost is a
 * few dozen instructions.  A process with one thread needs no lock (see
 * LOCKED in ofd.c); a miss, or anything unusual, takes the full path.
 * Which descriptions may hit at all (ofd.c's ffio_ofd_hits): not ffio's
 * own; a file that does not pass through, with a top layer that has the
 * method; readable for reads; writable, without O_APPEND, O_SYNC or
 * O_DSYNC for writes; not O_DIRECT (its alignment: ofd.c's direct_odd). */
void ffio_ofd_hits(struct ffio_ofd *o);

/* A hit, or 0.  In ffio meanwhile, as in the full path: a signal's handler
 * waits until the hit is done (handlers.c; a miss leaves that to the full
 * path, which follows).  Bytes at
 * or past the file system's largest size, or written past RLIMIT_FSIZE,
 * are the full path's (do_read, do_write: the kernel's limits). */
static inline int ffio_ofd_within(off_t max, size_t n, off_t at)
{
	return at < max && n <= (size_t)(max - at);
}

/* Might the kernel refuse the n bytes at buf (EFAULT, or a short count)?
 * Yes for a range that starts in the lowest 64 KiB (below
 * vm.mmap_min_addr's default) or ends past the first 2^47 bytes less a page
 * (user space on x86-64 with four-level page tables, where access_ok
 * ends), or wraps; with no bytes, for an address past that end (access_ok
 * looks at it even then).  Generous on purpose: the kernel makes such a
 * call itself (ofd.c), so it gets the kernel's answer whatever the
 * machine.  Buffers that are valid at their start and unmapped further on
 * are not seen here (ffio(7), SEMANTICS). */
#define FFIO_USER_LO ((uintptr_t)1 << 16)
#define FFIO_USER_HI (((uintptr_t)1 << 47) - 4096)
static inline int ffio_user_range_odd(const void *buf, size_t n)
{
	uintptr_t a = (uintptr_t)buf - FFIO_USER_LO;
	if (a < FFIO_USER_HI - FFIO_USER_LO)
		return n > FFIO_USER_HI - FFIO_USER_LO - a;
	return n > 0 || (uintptr_t)buf >= FFIO_USER_HI;
}

/* A hit takes at most this many bytes (a layer's own limit is lower). */
#define FFIO_HIT_CAP ((size_t)1 << 20)

/* May a hit take these n bytes at buf, at at: 0 < n <= FFIO_HIT_CAP, within
 * the kernel's limits, and wholly in plain user memory (not
 * ffio_user_range_odd: the hit's copy would fault where the kernel
 * returns EFAULT)?  One comparison for the buffer, given the cap. */
static inline int ffio_ofd_hit_fits(off_t max, const void *buf, size_t n, off_t at)
{
	return n - 1 < FFIO_HIT_CAP && (uintptr_t)buf - FFIO_USER_LO < FFIO_USER_HI - FFIO_USER_LO - n &&
	       ffio_ofd_within(max, n, at);
}

static inline ssize_t ffio_ofd_read_hit_at(struct ffio_ofd *o, void *buf, size_t n, off_t at, int move)
{
	ssize_t r = 0;
	if (o->read_hit && __libc_single_threaded && ffio_ofd_hit_fits(o->file->max_pos, buf, n, at)) {
		ffio_in_lib++;
		r = o->read_hit(o->hit_layer, buf, n, at);
		if (r <= 0) {
			ffio_in_lib--; /* the full path follows, and leaves */
			return r;
		}
		if (move)
			o->pos += r;
		ffio_leave();
	}
	return r;
}

/* A file with a deferred error reports it at the next write (do_write);
 * a write in a signal handler takes the full path (ffio_in_handler). */
static inline ssize_t ffio_ofd_write_hit_at(struct ffio_ofd *o, const void *buf, size_t n, off_t at, int move)
{
	ssize_t r = 0;
	if (o->write_hit && __libc_single_threaded && !o->file->error && !ffio_in_handler &&
	    ffio_ofd_hit_fits(o->file->wmax_pos, buf, n, at)) {
		ffio_in_lib++;
		r = o->write_hit(o->hit_layer, buf, n, at);
		if (r <= 0) {
			ffio_in_lib--;
			return r;
		}
		if (move)
			o->pos += r;
		ffio_leave();
	}
	return r;
}

static inline ssize_t ffio_ofd_read_hit(struct ffio_ofd *o, void *buf, size_t n, off_t at)
{
	return ffio_ofd_read_hit_at(o, buf, n, at, 0);
}

static inline ssize_t ffio_ofd_write_hit(struct ffio_ofd *o, const void *buf, size_t n, off_t at)
{
	return ffio_ofd_write_hit_at(o, buf, n, at, 0);
}

/* At the position, which a hit moves (inside ffio, as a handler that
 * waited may use the same description). */
static inline ssize_t ffio_ofd_read_hit_pos(struct ffio_ofd *o, void *buf, size_t n)
{
	return ffio_ofd_read_hit_at(o, buf, n, o->pos, 1);
}

static inline ssize_t ffio_ofd_write_hit_pos(struct ffio_ofd *o, const void *buf, size_t n)
{
	return ffio_ofd_write_hit_at(o, buf, n, o->pos, 1);
}

/* An absolute seek within the kernel's limits sets the position, and a
 * relative one by 0 (where am I? netCDF asks before each read) tells it,
 * which is all do_seek would do, on a description with a stack (the file
 * does not pass through: hit_layer) in a process with one thread.  1 when
 * done (the result is o->pos). */
static inline int ffio_ofd_seek_hit(struct ffio_ofd *o, off_t off, int whence)
{
	if (!o->hit_layer || !__libc_single_threaded)
		return 0;
	if (whence == SEEK_SET && off >= 0 && off <= o->file->max_pos) {
		o->pos = off;
		return 1;
	}
	return whence == SEEK_CUR && off == 0;
}

/* ffpread and ffpwrite: the hit first, then the full path. */
static inline ssize_t ffio_ofd_pread(struct ffio_ofd *o, void *buf, size_t n, off_t off)
{
	ssize_t r = off >= 0 ? ffio_ofd_read_hit(o, buf, n, off) : 0;
	return r > 0 ? r : ffio_ofd_preadv(o, &(struct iovec){buf, n}, 1, off);
}

static inline ssize_t ffio_ofd_pwrite(struct ffio_ofd *o, const void *buf, size_t n, off_t off)
{
	ssize_t r = off >= 0 ? ffio_ofd_write_hit(o, buf, n, off) : 0;
	return r > 0 ? r : ffio_ofd_pwritev(o, &(struct iovec){(void *)buf, n}, 1, off);
}

/* Operations on a file (every description); each takes f->lock. */
ssize_t ffio_file_pread(struct ffio_file *f, void *buf, size_t n, off_t off);
ssize_t ffio_file_pwrite(struct ffio_file *f, const void *buf, size_t n, off_t off);
int ffio_file_truncate(struct ffio_file *f, off_t len);
/* truncate(2) of path, which names f: the kernel's call after f's writes. */
int ffio_file_truncate_path(struct ffio_file *f, const char *path, off_t len);
int ffio_file_size(struct ffio_file *f, off_t *len);
/* The size a stat reports, given the kernel's: the kernel's when the stack
 * holds nothing unwritten (the stack then follows it), else the stack's. */
int ffio_file_stat_size(struct ffio_file *f, off_t kernel, off_t *len);
/* With f->lock held: f's writes to the kernel; then (drop_clean) the stack
 * forgets its clean data and sizes, whether or not writing back failed. */
int ffio_file_write_back(struct ffio_file *f, int drop_clean);
/* One more reference on f, given back with ffio_file_put (ffio_ext.h). */
void ffio_file_get(struct ffio_file *f);
/* The program took (or released: l_type F_UNLCK) the record lock fl (its
 * start absolute) on f; posix: a process-wide lock, not an OFD one. */
void ffio_file_note_lock(struct ffio_file *f, const struct flock *fl, int posix);
/* Does the program hold a record lock over [off, off + n) of f (the one it
 * took last; f->lock held)?  Data sieving (ROMIO's: lock, read the extent,
 * modify it, write it, unlock) then reads and writes its own buffer. */
static inline int ffio_file_app_locked(const struct ffio_file *f, off_t off, size_t n)
{
	return f->app_lock_lo <= off && (uint64_t)off + n <= (uint64_t)f->app_lock_hi;
}
/* ffio_file_flush, _fsync, _invalidate, _discard, _stats, _find_inode,
 * _put, _hold, _unhold and _set_flag: ffio_ext.h. */
/* Make the kernel's view current before another path reads the file
 * (copy_file_range, sendfile): flush and set every description's kernel
 * offset to its position. */
int ffio_file_sync_kernel(struct ffio_file *f);
/* Before a stat: a file written since the last call writes back what its
 * stack holds, so that the kernel's st_mtime, st_ctime and st_blocks have
 * the writes (an error is the file's, deferred).  1 when it wrote back, 0
 * when there was nothing to write. */
int ffio_file_stat_sync(struct ffio_file *f);
/* Give each description's kernel descriptor its position (f->lock held):
 * 0 or the first error (pipes, which have no offset, are no error). */
int ffio_file_give_offsets(struct ffio_file *f);
/* From now on the kernel sees every call on f as it is made: flush, give
 * each description's kernel twin its position, close the stack.  With
 * forever, later opens of the file in this process are not managed either
 * (a mapping or a stdio stream may outlive the descriptors). */
int ffio_file_pass_through(struct ffio_file *f, int forever);
/* The process reaches (dev, ino) behind ffio (a stdio stream): its open
 * file passes through, and later opens are not managed until as many
 * releases (forever: never). */
int ffio_kernel_hold(dev_t dev, ino_t ino, int forever);
void ffio_kernel_release(dev_t dev, ino_t ino);
/* Record an error of a deferred operation, reported by the next write,
 * fsync or close (the first one wins). Call with f->lock held. */
void ffio_file_set_error(struct ffio_file *f, int err);
/* The deferred error, cleared (0 if none). Call with f->lock held. */
int ffio_file_take_error(struct ffio_file *f);

/* Every open file: flush and set the kernel offsets (before exec and
 * spawn; errors are recorded on their files and logged), run atexit hooks
 * (exit). */
int ffio_flush_all(void);
/* A lock released, on any file: every file's writes go to the kernel
 * first; a lock taken (drop_clean): every file drops its clean data too,
 * so that reads see what other processes wrote before they released it.
 * A lock on one file commonly guards others (SQLite's on its -shm guards
 * its -wal).  An error is each file's, deferred; the first is returned.
 * drop_clean FFIO_ORDER_FORGET: no write-back, every file forgets its
 * sizes and clean pages only (dirty data stays).
 * For a message heard (ffio_thread.hearing), files marked one-writer
 * (FFIO_FILE_SIEVE: this process alone writes them) are left alone. */
#define FFIO_ORDER_FORGET 2
int ffio_files_order(int drop_clean, const struct ffio_file *except);
void ffio_exit_all(void);
/* Around fork (the files' part of fork.c's handlers): every file passes
 * through, with the files' locks held until ffio_files_fork_after. */
void ffio_files_fork_prepare(void);
void ffio_files_fork_after(void);
/* Drop the table's descriptors in [lo, hi] that the kernel is about to
 * close (closefrom, close_range), ffio's own excepted. */
void ffio_fd_close_range(unsigned lo, unsigned hi);
/* Is any file open through ffio? */
int ffio_any_open(void);

/* ---- what other processes see (coherence.c) ---------------------------- */

/* Set when a write enters a file's stack; cleared when every file's writes
 * went to the kernel before the process told another one something. */
extern int ffio_unwritten_any;
static inline void ffio_note_unwritten(struct ffio_file *f)
{
	f->unwritten = 1;
	__atomic_store_n(&ffio_unwritten_any, 1, __ATOMIC_RELAXED);
}
static inline int ffio_unwritten_pending(void)
{
	return __builtin_expect(__atomic_load_n(&ffio_unwritten_any, __ATOMIC_RELAXED), 0);
}
/* What a message heard must undo (coherence.c), set when a call entered a
 * stack (stack.c): FFIO_LEARNT_DATA by a read (or open, advice, an
 * asynchronous read): some file may hold bytes another process can make
 * stale; FFIO_LEARNT_SIZE by a size or truncate call: some file may know a
 * size.  A message heard clears them: with DATA every file writes back and
 * drops its clean data and sizes; with SIZE alone every file forgets its
 * sizes and clean pages, and its dirty data stays (a stack only written
 * holds no bytes but its own: without .sieve a cache writes back only the
 * bytes written, and reads, setting DATA, whatever else it serves); with
 * neither, hearing costs one load. */
#define FFIO_LEARNT_DATA 1
#define FFIO_LEARNT_SIZE 2
extern int ffio_learnt;
static inline void ffio_note_learnt(int what)
{
	if (what && !ffio_thread.hearing && (__atomic_load_n(&ffio_learnt, __ATOMIC_RELAXED) & what) != what)
		__atomic_fetch_or(&ffio_learnt, what, __ATOMIC_RELAXED);
}
/* Before data leaves the process through fd (-1: through a socket, or a
 * signal): when fd is a pipe, socket, FIFO or terminal, every file's
 * writes go to the kernel; not inside ffio or a signal handler.  errno is
 * kept. */
void ffio_tell(int fd);
/* The same for a message whatever the descriptor (a socket, a signal, a
 * name made or moved in a directory). */
static inline void ffio_tell_any(void)
{
	if (ffio_unwritten_pending())
		ffio_tell(-1);
}
/* After data came in through fd: when fd is a pipe, socket, FIFO or
 * terminal (or a signalfd, inotify or fanotify descriptor; a timerfd's as
 * a short sleep), every file writes back and drops its clean data, so
 * that its next reads see what the sender wrote; not inside ffio or a
 * signal handler, only while a file is open.  errno is kept. */
void ffio_heard(int fd);
/* The same whatever the descriptor (a child waited for, a sleep ended). */
void ffio_heard_any(void);
/* fd (fds lo to hi) closed or made anew: what ffio_heard learnt of it is
 * forgotten.  Called before every close ffio sees, the C library's own
 * included (fclose, freopen, pclose, closedir). */
void ffio_fd_forget(int fd);
void ffio_fd_forget_range(unsigned lo, unsigned hi);
/* What /proc/self/fd says descriptor fd is (a path, or "anon_inode:..."
 * for the kernel's anonymous ones), NUL-terminated in name[size]: its
 * length, or -1 (fddir.c). */
ssize_t ffio_fd_link(int fd, char *name, size_t size);
/* The number of shared, writable mappings of files the process locked
 * (record locks): while it is not 0, every write goes through. */
extern int ffio_write_through_shared;
/* A shared, writable mapping of fd was made at addr (locked: the process
 * took a record lock on the file); a record lock was taken on fd. */
void ffio_shared_map_add(int fd, void *addr, size_t len, int locked);
/* mmap (posix.c), and syscall(SYS_mmap) of a managed descriptor (kernel
 * set: the map made by the kernel's call, not through the name mmap,
 * which another library may have taken over with a hook that maps with
 * syscall(SYS_mmap): UCX's, under MPICH, came back for ever).  A mapped
 * file passes through to the kernel; a shared writable map is followed. */
void *ffio_map_file(void *addr, size_t len, int prot, int flags, int fd, off_t off, int kernel);
void ffio_shared_map_locked(int fd);

/* ---- fork (fork.c) ----------------------------------------------------- */

/* The handlers installed with pthread_atfork (and called by _Fork). */
void ffio_fork_prepare(void);
void ffio_fork_parent(void);
void ffio_fork_child(void);
/* Handlers of other parts' process-wide state across fork: prepare runs
 * after the files are made safe, parent and child before the files'. */
void ffio_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* Process-wide locks held across fork, so that the child finds nothing
 * half-changed: taken after the handlers' prepare in the order of their
 * ranks (a lock is only ever taken while holding locks of lower rank, or
 * a file's), released before the handlers' parent and child. */
enum ffio_lock_rank {
	FFIO_LOCK_API,        /* api.c: stacks given to ffopen */
	FFIO_LOCK_OVERRIDE,   /* govern.c: overrides, the rank's spec */
	FFIO_LOCK_AIO,        /* aio.c: completed requests */
	FFIO_LOCK_IDLE_RINGS, /* uring.c: rings kept for reuse */
	FFIO_LOCK_SPARE,      /* bufpool.c: spare chunks of closed caches */
	FFIO_LOCK_BUFPOOL,    /* bufpool.c: freed buffers */
	FFIO_LOCK_GUARDIAN,   /* guard/client.c: the guardian's socket */
	FFIO_LOCK_LOG,        /* log.c: the log's descriptor */
	FFIO_LOCK_OWN_FDS,    /* fdtable.c: ffio's own descriptors of no file */
	FFIO_LOCK_SHARED_MAPS, /* coherence.c: shared mappings of locked files */
	FFIO_LOCK_FD_LISTS,   /* fddir.c: open listings of /proc/self/fd */
	FFIO_LOCK_RANKS
};
void ffio_atfork_hold(pthread_mutex_t *lock, enum ffio_lock_rank rank);
/* The process whose memory this is (not a vfork child sharing it). */
extern pid_t ffio_pid;
int ffio_in_vfork_child(void);

/* ---- calls to the layer below ----------------------------------------- */
/* Each finds the first layer at or below l->below that implements the call
 * (NULL slots pass through) and makes it. */
int ffio_below_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode);
int ffio_below_close(struct ffio_layer *l);
ssize_t ffio_below_pread(struct ffio_layer *l, void *buf, size_t n, off_t off);
ssize_t ffio_below_pwrite(struct ffio_layer *l, const void *buf, size_t n, off_t off);
ssize_t ffio_below_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
ssize_t ffio_below_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
int ffio_below_flush(struct ffio_layer *l);
int ffio_below_fsync(struct ffio_layer *l, int datasync);
int ffio_below_truncate(struct ffio_layer *l, off_t len);
int ffio_below_size(struct ffio_layer *l, off_t *len);
int ffio_below_invalidate(struct ffio_layer *l);
int ffio_below_advise(struct ffio_layer *l, off_t off, off_t len, int advice);
int ffio_below_submit(struct ffio_layer *l, struct ffio_req *r);
int ffio_below_commit(struct ffio_layer *l);
int ffio_below_reap(struct ffio_layer *l, unsigned min);
/* The same calls entering at layer l itself (the top: l = f->top). */
ssize_t ffio_layer_preadv(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
ssize_t ffio_layer_pwritev(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);
/* A transfer of len bytes (the iovec's) into f's stack from the top:
 * passed to the kernel where every layer passes it (struct ffio_layer). */
ssize_t ffio_stack_preadv(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off, size_t len);
ssize_t ffio_stack_pwritev(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t off, size_t len);
int ffio_layer_flush(struct ffio_layer *l);
int ffio_layer_fsync(struct ffio_layer *l, int datasync);
int ffio_layer_truncate(struct ffio_layer *l, off_t len);
int ffio_layer_size(struct ffio_layer *l, off_t *len);
int ffio_layer_invalidate(struct ffio_layer *l);
int ffio_layer_open(struct ffio_layer *l, int dirfd, const char *path, int flags, mode_t mode);
int ffio_layer_close(struct ffio_layer *l);
/* Full-transfer helpers: loop over short transfers (EINTR retried); 0 or -errno. */
int ffio_below_pread_full(struct ffio_layer *l, void *buf, size_t n, off_t off, size_t *got);
int ffio_below_pwritev_full(struct ffio_layer *l, const struct iovec *iov, int iovcnt, off_t off);

/* ---- which entry governs a path (govern.c) ----------------------------- */

/* The entry an open of path gets: an override (ffio_override_push), the
 * rank's spec, then FF_IO_OPTS; NULL when none matches.  The overrides and
 * ffio_file_set_flag are declared in ffio_ext.h. */
struct ffio_entry *ffio_entry_for(const char *path);

/* ---- the fd table ------------------------------------------------------ */

/* O(1): one load for an fd that ffio does not manage. */
extern struct ffio_ofd *_Atomic *ffio_fdtab;
extern int ffio_fdtab_size;
static inline struct ffio_ofd *ffio_fd_get(int fd)
{
	if ((unsigned)fd >= (unsigned)ffio_fdtab_size)
		return NULL;
	return ffio_fdtab[fd];
}
/* Both under the files lock (file.c). */
int ffio_fd_attach(int fd, struct ffio_ofd *o); /* refs++ */
struct ffio_ofd *ffio_fd_detach(int fd);        /* returns the description, refs unchanged */
int ffio_fdtab_init(void);
/* Move ffio's own new descriptor fd (close-on-exec) to the top of the
 * descriptor space; returns its number there, or fd where there is no room
 * above it.  errno unchanged. */
int ffio_fd_park(int fd);
/* Read the soft RLIMIT_NOFILE again: at start-up and after the program
 * sets it (rlimit.c). */
void ffio_fd_top_refresh(void);
/* Grow the kernel's descriptor table to where ffio_fd_park puts ffio's,
 * while the process has one thread (at start-up). */
void ffio_fd_table_reserve(void);
/* ffio_fd_park, and fd recorded as ffio's own descriptor of no file (a
 * ring's, the log's), so that closefrom and close_range pass over it as
 * over the files' (ffio_fd_own_next).  ffio_fd_disown before closing it. */
int ffio_fd_own(int fd);
void ffio_fd_disown(int fd);
/* fd recorded as ffio_fd_own does, where it is (not moved). */
void ffio_fd_own_record(int fd);
/* The lowest of those >= fd, or -1. */
int ffio_fd_own_next(int fd);
/* The program's call failed with EMFILE: give up one of ffio's own
 * descriptors (an idle ring's or the log's first, else a file's, which
 * then passes through to the kernel) so the call can be made again.  1
 * when one was given up, 0 when ffio holds none.  Only for the program's
 * own call, never inside ffio (a signal handler's call there would wait
 * for a lock held below it).  errno unchanged. */
int ffio_fd_pressure(void);
/* The log file's descriptor given up under pressure (1); the next message
 * opens the file again and appends (log.c). */
int ffio_log_release(void);
/* A layer's descriptors held for reuse, given up first by
 * ffio_fd_pressure: release returns 1 when it closed one. */
void ffio_fd_on_pressure(int (*release)(void));
/* One more of ffio's descriptors that can be given up (the guardian's
 * socket: guard/client.c): number says which it is (-1: none), release
 * gives it up.  A descriptor of a managed file numbered lower goes first:
 * the program gets the number the kernel alone would give it. */
void ffio_fd_on_pressure_last(int (*number)(void), int (*release)(void));
/* The program's call (made outside ffio), again while it fails with
 * EMFILE and ffio can give up a descriptor of its own: failed is its
 * failure test on r_. */
#define FFIO_FD_ROOM(call, failed)                                                 \
	__extension__({                                                            \
		__typeof__(call) r_;                                               \
		while ((r_ = (call), (failed)) && errno == EMFILE && !ffio_in_lib && \
		       ffio_fd_pressure())                                         \
			;                                                          \
		r_;                                                                \
	})

/* ---- the system, bypassing interposition: ffio_real (real.h) -------- */

#include "real.h"

/* The kernel's system call n, past the interposed syscall() (syscall.c):
 * its result, or -1 with errno set.  FFIO_SYS(n, args...) takes up to six
 * arguments, as syscall(2) does. */
long ffio_syscall(long n, long a, long b, long c, long d, long e, long f);
#define FFIO_SYS(...) FFIO_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define FFIO_SYS_(n, a, b, c, d, e, f, ...)                                                \
	ffio_syscall((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#if defined(__x86_64__) || defined(__aarch64__)
/* The same, errno untouched: the result or -errno.  For code that runs
 * beside the calling thread on its memory (a clone before its exec),
 * where a write of errno would land in that thread's. */
#define FFIO_HAVE_KERNEL_CALL 1
long ffio_kernel_call(long n, long a, long b, long c, long d, long e, long f);
#define FFIO_KERNEL(...) FFIO_KERNEL_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define FFIO_KERNEL_(n, a, b, c, d, e, f, ...)                                             \
	ffio_kernel_call((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#endif

/* ---- process-wide state ------------------------------------------------ */

/* Parse FF_IO_OPTS etc. once (idempotent); the spec in force or NULL. */
void ffio_init(void);
/* FF_IO_FLUSH_ON_SIGNAL: flush every file on SIGTERM/SIGINT (signal.c). */
void ffio_signal_init(void);
/* A file's stack is built: a forked child's flush on signals starts with
 * its first cached file (one load otherwise). */
void ffio_signal_file_opened(void);
extern struct ffio_spec *ffio_global_spec;
extern int ffio_open_diags;       /* FF_IO_OPEN_DIAGS */
extern int ffio_logformat_json;   /* FF_IO_LOGFORMAT=json */

/* ---- environment (env.c) ---------------------------------------------- */

enum ffio_env {
	FFIO_ENV_OPTS,
	FFIO_ENV_LOGFILE,
	FFIO_ENV_LOGFORMAT,
	FFIO_ENV_OPEN_DIAGS,
	FFIO_ENV_FLUSH_ON_SIGNAL,
	FFIO_ENV_GUARD,
	FFIO_ENV_GUARD_HUGE,
	FFIO_ENV_URING_DISABLE,
	FFIO_ENV_PMI_RANK, /* the launcher's rank: PMI_RANK first ... */
	FFIO_ENV_PMIX_RANK,
	FFIO_ENV_OMPI_RANK,
	FFIO_ENV_MPI_LOCALRANKID,
	FFIO_ENV_SLURM_PROCID, /* ... SLURM_PROCID last */
	FFIO_ENV_COUNT
};
/* The variable's value (secure_getenv), NULL when unset or empty. */
const char *ffio_env(enum ffio_env var);
/* Set, and neither "0" nor "no". */
int ffio_env_flag(enum ffio_env var);
/* The MPI rank from the launcher's environment (MPICH's PMI, PMIx, Open
 * MPI, Slurm), or -1. */
int ffio_env_rank(void);

/* ---- logging ----------------------------------------------------------- */

/* ffio_log and ffio_log_raw: ffio_ext.h. */
/* Like ffio_log, but only the first time for a given key. */
void ffio_log_once(int *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A close-on-exec duplicate of the log's descriptor (for the guardian, who
 * writes its messages there), or -errno. */
int ffio_log_dup(void);
/* A label for layer l: "event[1] of *.dat (above cache)". */
void ffio_layer_label(const struct ffio_layer *l, char *buf, size_t len);
/* Note what layer l decided at run time (it steps aside, say), for the
 * summaries of the event layers above it (f->lock held). */
void ffio_layer_note(struct ffio_layer *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- buffer pool ------------------------------------------------------- */

/* Memory ffio maps for itself (anonymous, read-write; flags: more MAP_*
 * flags), through the C library's mmap, never the interposed one; NULL
 * with errno set on failure. */
void *ffio_map_anon(size_t len, int flags);
/* Aligned buffers for cache pages (jemalloc private arena or mmap). */
void *ffio_buf_alloc(size_t size, size_t align);
void ffio_buf_free(void *p, size_t size);
/* memcpy with non-temporal stores (x86-64; memcpy elsewhere), fenced. */
void ffio_copy_stream(void *dst, const void *src, size_t n);
/* Chunks of FFIO_HUGE_CHUNK bytes, aligned to their size, that caches carve
 * page buffers from.  ffio_chunk_get: a spare one of a closed cache
 * (*fresh 0), else a new one advised for transparent huge pages (*fresh 1:
 * its bytes are zeros); NULL when none can be had.  ffio_chunk_put keeps k
 * for the next cache of the process (up to a limit) or frees it.
 * ffio_chunk_spare: is a spare one there now (a hint: unlocked)? */
#define FFIO_HUGE_CHUNK ((size_t)2 << 20)
struct ffio_chunk {
	struct ffio_chunk *next;
	char *mem;
};
struct ffio_chunk *ffio_chunk_get(int *fresh);
void ffio_chunk_put(struct ffio_chunk *k);
int ffio_chunk_spare(void);

/* ---- small helpers ----------------------------------------------------- */

static inline size_t ffio_iov_len(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;
	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}
uint64_t ffio_now_ns(void); /* CLOCK_MONOTONIC */

/* A position in an iovec array: entry i, skip bytes into it. */
struct ffio_iov_cursor {
	const struct iovec *iov;
	int cnt, i;
	size_t skip;
};
/* Describe in part[0..max_parts) the next bytes of the array, at most max,
 * and move the cursor past them.  Returns the entries used; *len the bytes
 * (0 at the end). */
int ffio_iov_take(struct ffio_iov_cursor *c, size_t max, struct iovec *part, int max_parts, size_t *len);

/* ---- kernel I/O of the bottom layers (kernel_io.c) -------------------- */

/* Buffered writes go to the kernel in one call up to FFIO_WRITE_WHOLE
 * bytes, longer ones in calls of at most FFIO_WRITE_PIECE bytes
 * (kernel_io.c says why), but on a file system whose writes do not go
 * through the page cache's folios (ffio_file's write_whole). */
#define FFIO_WRITE_PIECE ((size_t)512 << 10)
#define FFIO_WRITE_WHOLE ((size_t)1 << 20)
/* One transfer as the kernel makes it: one pread(v) or pwrite(v) call, or,
 * for a write not whole (buffered, on a file system that is not
 * write_whole), pieces until one is short or fails.
 * Returns the bytes moved (or -errno when none were); counts the calls
 * and bytes into st. */
ssize_t ffio_kernel_transfer(int fd, int write, int whole, const struct iovec *iov, int iovcnt, off_t off,
			     struct ffio_stats *st);
/* The whole transfer: calls until every byte is moved, EINTR retried; a
 * read stops at the end of the file; a write of nothing is -EIO.  The
 * byte count, or -errno of the first failing call. */
ssize_t ffio_kernel_transfer_full(int fd, int write, const struct iovec *iov, int iovcnt, off_t off);
/* One pread(v) or pwrite(v) call: its result, or -errno. */
ssize_t ffio_kernel_once(int fd, int write, const struct iovec *iov, int iovcnt, off_t off);
/* fsync (datasync: fdatasync), ftruncate; counted into st. */
int ffio_kernel_sync(int fd, int datasync, struct ffio_stats *st);
int ffio_kernel_truncate(int fd, off_t len, struct ffio_stats *st);
/* What ffio asks of a file for itself (its type, identity, size): the
 * kernel's answer from what it holds, without asking the file system
 * below it (a FUSE server), as fstatat (path NULL: fd itself, with
 * AT_EMPTY_PATH) would give it.  0 or -errno.  See kernel_io.c. */
int ffio_kernel_stat_at(int dirfd, const char *path, int flags, struct stat *st);
int ffio_kernel_stat(int fd, struct stat *st);
/* statx's answer as fstat would give it (the fields fstat has). */
void ffio_stat_of_statx(const struct statx *sx, struct stat *st);
/* The file's size as ffio_kernel_stat has it. */
int ffio_kernel_size(int fd, off_t *len);
/* The advise method of a bottom over the page cache: posix_fadvise on the
 * file's descriptor; -EOPNOTSUPP when the bottom opened it O_DIRECT (direct
 * is its own flag).  0 or -errno. */
int ffio_kernel_advise(const struct ffio_layer *l, int direct, off_t off, off_t len, int advice);
/* The largest position the kernel allows the file fd (on file system dev)
 * to have: the file system's largest size (s_maxbytes).  See kernel_io.c. */
off_t ffio_kernel_max_pos(int fd, dev_t dev);
/* What ffio must know of fd's file system: FFIO_FS_KERNEL_MADE, the
 * kernel makes its files as they are read (/proc, /sys, ...): never
 * cached; FFIO_FS_WRITE_WHOLE, long buffered writes go in one call
 * (FUSE).  0 when it cannot tell; errno unchanged.  See kernel_io.c. */
#define FFIO_FS_KERNEL_MADE 1
#define FFIO_FS_WRITE_WHOLE 2
int ffio_kernel_fs(int fd);
/* RLIMIT_FSIZE's soft limit as this process has it, LLONG_MAX for none:
 * read at start-up and after the program sets it (rlimit.c), which
 * updates every open file's wmax_pos (ffio_files_fsize_limit). */
extern off_t ffio_fsize_limit;
void ffio_fsize_refresh(void);
void ffio_files_fsize_limit(void);
/* An alignment to which O_DIRECT transfers on the file fd are never
 * refused for their offsets, lengths or buffers: at least what the file
 * system asks (statx's STATX_DIOALIGN), the page size where it does not
 * say.  A power of two. */
size_t ffio_kernel_dio_align(int fd);

#endif
