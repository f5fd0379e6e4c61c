/* ffio_ext.h -- the extension API of ffio: what a library that sits above
 * the POSIX calls and knows more than FF_IO_OPTS (the MPI-IO and netCDF
 * glue), or a program that drives a stack's asynchronous requests itself
 * (the uring benchmarks), may ask of ffio.  Nothing else of the core is
 * reachable from outside libffio.so.
 *
 * Conventions, as liburing's: a function returns 0 (or a count) on success
 * and a negative errno value on failure; none of them sets errno.  See
 * ffio_ext(3).
 */
#ifndef FFIO_EXT_H
#define FFIO_EXT_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ffio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FFIO_MAX_LAYERS 16 /* layers in one stack */

/* ---- which stack governs a path ----------------------------------------- */

/* Opens of path use stack (a spec without pattern, "cache:1m:64:4") until
 * the matching ffio_override_pop: the MPI_Info key ffio_opts.  0, or
 * -EINVAL with a message in err, or -ENOMEM. */
FFIO_API int ffio_override_push(const char *path, const char *stack, char *err, size_t errlen);
FFIO_API void ffio_override_pop(const char *path);
/* A spec consulted before FF_IO_OPTS for every path (FF_IO_OPTS_RANK<n>);
 * source names it in messages. */
FFIO_API int ffio_rank_spec_set(const char *text, const char *source, char *err, size_t errlen);
/* The layers of the stack an open of path would get now (an override, the
 * rank's spec, then FF_IO_OPTS), top first: up to max names ("cache",
 * "sys") into names.  Returns the number of layers, 0 when no entry
 * governs path. */
FFIO_API int ffio_path_layers(const char *path, const char **names, int max);

/* ---- an open file ------------------------------------------------------- */

/* One file (inode) open through ffio in this process, whatever descriptors
 * the program holds on it. */
struct ffio_file;

/* The open file of an inode, held (give it back with ffio_file_put), or
 * NULL when ffio manages no descriptor of it. */
FFIO_API struct ffio_file *ffio_file_find_inode(dev_t dev, ino_t ino);
FFIO_API void ffio_file_put(struct ffio_file *f);
/* The device and inode path names, from the kernel's stat: the program's
 * stat would first write back a file ffio holds there (its times).  0 or
 * -errno. */
FFIO_API int ffio_path_inode(const char *path, dev_t *dev, ino_t *ino);

/* Push buffered writes down the stack (no kernel sync). */
FFIO_API int ffio_file_flush(struct ffio_file *f);
/* Flush, then fsync (datasync: fdatasync) below. */
FFIO_API int ffio_file_fsync(struct ffio_file *f, int datasync);
/* Flush, then drop clean cached data: the next reads see other writers. */
FFIO_API int ffio_file_invalidate(struct ffio_file *f);
/* Drop buffered data, dirty or clean, without writing it: the file is
 * being deleted (nc_abort of a file in creation).  -ENOTSUP when no layer
 * of the stack can (the data is then written as usual). */
FFIO_API int ffio_file_discard(struct ffio_file *f);

/* Keep f's stack open after the program's last close (netCDF closes before
 * it deletes); ffio_file_unhold closes it when nothing else holds it, and
 * returns that close's result. */
FFIO_API void ffio_file_hold(struct ffio_file *f);
FFIO_API int ffio_file_unhold(struct ffio_file *f);

/* Facts a glue library knows about a file and the spec cannot say. */
#define FFIO_FILE_SIEVE 0x1u        /* one writer: a cache may fill gaps (.sieve) */
#define FFIO_FILE_WRITETHROUGH 0x2u /* MPI atomic mode: a cache writes through (.wt) */
#define FFIO_FILE_SHARED 0x4u       /* written by several processes at once (an MPI file
				       of more ranks than one): a cache takes small
				       writes in once they merge */
FFIO_API void ffio_file_set_flag(struct ffio_file *f, unsigned flag, int on);

/* Statistics of f's layers, as ffgetstats(3). */
FFIO_API int ffio_file_stats(struct ffio_file *f, struct ffio_stats *st, int max);

/* ---- asynchronous requests at the top of a descriptor's stack ----------- */

enum ffio_op { FFIO_OP_READ, FFIO_OP_WRITE, FFIO_OP_FSYNC, FFIO_OP_FDATASYNC };

/* An asynchronous request (queue/commit/reap, as fio's ioengines).  The
 * submitter owns the request and the buffers until done() has been called.
 * res is the byte count or -errno.  A synchronous stack performs the
 * request in submit and calls done() before returning. */
struct ffio_req {
	enum ffio_op op;
	const struct iovec *iov;
	int iovcnt;
	off_t off;
	ssize_t res;
	void (*done)(struct ffio_req *r);
	void *data;            /* the submitter's */
	struct ffio_req *next; /* the owning layer's while in flight */
};

/* Queue r on the stack of fd (ffopen'ed or managed); -EBADF otherwise. */
FFIO_API int ffio_submit(int fd, struct ffio_req *r);
/* Send what is queued. */
FFIO_API int ffio_commit(int fd);
/* Wait until at least min requests have completed (their done() called). */
FFIO_API int ffio_reap(int fd, unsigned min);

/* Buffers aligned for O_DIRECT, from ffio's own pool (never the program's
 * malloc); free with the size given to alloc. */
FFIO_API void *ffio_buf_alloc(size_t size, size_t align);
FFIO_API void ffio_buf_free(void *p, size_t size);
/* The copy ffio uses for data the processor will not read again
 * (non-temporal stores for large copies). */
FFIO_API void ffio_copy_stream(void *dst, const void *src, size_t n);

/* ---- messages between processes ----------------------------------------- */

/* For messages ffio cannot see (an MPI library's, through shared memory):
 * ffio_order_tell before this process tells another one something: every
 * file's writes go to the kernel (one load when nothing was written since
 * the last time).  ffio_order_heard after it heard from another one: every
 * file writes back and drops its clean data, so that its next reads see
 * what the other process wrote before it spoke (one load when nothing
 * was read into a stack since the last one; files marked FFIO_FILE_SIEVE,
 * one writer, are left alone).  0, or the first file's
 * error as -errno; each file keeps its own error too and returns it at
 * its next write, fsync or close.  Nothing is done inside ffio or in a
 * signal handler. */
FFIO_API int ffio_order_tell(void);
FFIO_API int ffio_order_heard(void);

/* ---- the guardian ------------------------------------------------------------ */

/* The process ID of this process's guardian, the process that writes its
 * cached data back if it dies (see ffio-reliability(7)), or 0 when none
 * runs: nothing guarded yet, FF_IO_GUARD=0, or it could not start or has
 * ended.  A forked child has a guardian of its own. */
FFIO_API pid_t ffio_guardian_pid(void);

/* ---- messages to the log ---------------------------------------------------- */

/* One line (no trailing newline needed) to ffio's log (stderr, or
 * FF_IO_LOGFILE), prefixed "ffio: ". */
FFIO_API void ffio_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Text as it is (summaries, traces, JSON), no prefix. */
FFIO_API void ffio_log_raw(const char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
