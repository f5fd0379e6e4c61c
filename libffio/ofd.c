/* libffio/ofd.c -- calls on open files: reads and writes at a description's
 * position or at an offset, seeking, truncating, flushing and syncing, and
 * what the kernel does on a description's own behalf: O_APPEND writes go
 * to the kernel (the end of the file is where other processes' appends
 * are), O_SYNC and O_DSYNC writes are on the file when the call returns.
 * A file that passes through (file.c) answers every call from the kernel,
 * on the description's own descriptor.  Each call takes the file's lock. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/uio.h>
#include <unistd.h>
#include "ffio-internal.h"

/* Run expr with the file's lock held; a process with one thread needs no
 * lock (two atomic operations per call, a sixth of a cache hit's cost).
 * That holds because nothing inside a call on a file starts a thread: the
 * only threads ffio starts are the signal flusher (at start-up and in a
 * forked child) and aio's notifications (after the call). */
#define LOCKED(f, expr)                                          \
	({                                                       \
		int locked_ = !__libc_single_threaded;           \
		ffio_in_lib++;                                   \
		if (locked_)                                     \
			pthread_mutex_lock(&(f)->lock);          \
		__typeof__(expr) r_ = (expr);                    \
		if (locked_)                                     \
			pthread_mutex_unlock(&(f)->lock);        \
		ffio_leave();                                    \
		r_;                                              \
	})

static inline ssize_t kernel_result(ssize_t r)
{
	return r < 0 ? -errno : r;
}

/* ---- deferred errors --------------------------------------------------- */

void ffio_file_set_error(struct ffio_file *f, int err)
{
	if (err < 0 && f->error == 0)
		f->error = err;
}

int ffio_file_take_error(struct ffio_file *f)
{
	int err = f->error;
	f->error = 0;
	return err;
}

/* ---- reads and writes --------------------------------------------------- */

static int acc(const struct ffio_ofd *o)
{
	return o->oflags & O_ACCMODE;
}

/* The kernel's limits on a transfer of len bytes at at: an end past
 * LLONG_MAX is EINVAL (rw_verify_area); a write from RLIMIT_FSIZE's limit
 * on raises SIGXFSZ (at the calling thread) and is EFBIG; from the file
 * system's largest size on (f->max_pos) a read gets nothing and a write
 * EFBIG; short of either only the bytes before it move (filemap_read,
 * generic_write_check_limits).  Returns the bytes that may move: len,
 * fewer, or -errno. */
static void raise_xfsz(struct ffio_file *f);

static ssize_t kernel_limits(struct ffio_file *f, int write, off_t at, size_t len)
{
	off_t max = write ? f->wmax_pos : f->max_pos;

	if (len > (size_t)(LLONG_MAX - at))
		return -EINVAL;
	if (at >= max) {
		if (!write)
			return 0;
		if (at >= __atomic_load_n(&ffio_fsize_limit, __ATOMIC_RELAXED))
			raise_xfsz(f);
		return -EFBIG;
	}
	return len < (size_t)(max - at) ? (ssize_t)len : (ssize_t)(max - at);
}

/* SIGXFSZ left to its default action ends the process, which loses no
 * byte it wrote before: without ffio they were with the kernel.  So what
 * ffio holds is written back first: in a process with one thread every
 * file's (no lock is held then: LOCKED), else this file's (its lock is
 * held).  Errors are moot: the process is ending. */
static void raise_xfsz(struct ffio_file *f)
{
	struct sigaction sa;

	if (sigaction(SIGXFSZ, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		if (__libc_single_threaded)
			(void)ffio_flush_all();
		else
			(void)ffio_layer_flush(f->top);
	}
	(void)raise(SIGXFSZ);
}

/* The transfer of the first len bytes of iov at at through the stack:
 * what the kernel's limits leave of a call. */
static ssize_t stack_rw_first(struct ffio_file *f, int write, const struct iovec *iov, int iovcnt, off_t at,
			      size_t len)
{
	struct ffio_iov_cursor cur = {.iov = iov, .cnt = iovcnt};
	struct iovec *part = malloc((size_t)iovcnt * sizeof *part);
	size_t got;
	if (!part)
		return -ENOMEM;
	int cnt = ffio_iov_take(&cur, len, part, iovcnt, &got);
	ssize_t n = write ? ffio_layer_pwritev(f->top, part, cnt, at) : ffio_layer_preadv(f->top, part, cnt, at);
	free(part);
	return n;
}

/* Might the kernel refuse some of the buffers of iov, or the array
 * itself (ffio_user_range_odd)?  Then the kernel makes the call
 * (kernel_read, kernel_write), in its own order of checks. */
FFIO_HOT static int iov_odd(const struct iovec *iov, int iovcnt)
{
	if (iovcnt <= 0)
		return 0;
	if (ffio_user_range_odd(iov, (size_t)iovcnt * sizeof *iov))
		return 1;
	for (int i = 0; i < iovcnt; i++)
		if (ffio_user_range_odd(iov[i].iov_base, iov[i].iov_len))
			return 1;
	return 0;
}

/* On a description set O_DIRECT (at open or with F_SETFL), a transfer
 * whose offset, lengths or buffers are not aligned as the file system asks
 * is the kernel's: EINVAL from most, a buffered fallback on some (btrfs,
 * ext4 with data=journal); the kernel makes such a call (kernel_read,
 * kernel_write).  The stack takes one aligned to f->dio_align, which no
 * file system refuses for its alignment.  at: the transfer's offset, -1
 * for the kernel's end (O_APPEND, which the kernel makes anyway). */
FFIO_HOT static int direct_odd(const struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t at)
{
	struct ffio_file *f = o->file;
	uintptr_t bits = at < 0 ? 0 : (uintptr_t)at;

	if (!(o->oflags & O_DIRECT))
		return 0;
	if (f->dio_align == 0)
		f->dio_align = ffio_kernel_dio_align(f->fd);
	for (int i = 0; i < iovcnt; i++)
		bits |= (uintptr_t)iov[i].iov_base | iov[i].iov_len;
	return (bits & (f->dio_align - 1)) != 0;
}

/* A read the kernel makes itself, after what the stack holds (flushed):
 * its result, errno and short count are the kernel's.  off -1: at the
 * position, which moves. */
static ssize_t kernel_read(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off)
{
	int err = ffio_layer_flush(o->file->top);
	if (err < 0)
		return err;
	ssize_t n = kernel_result(ffio_real.preadv(o->kfd, iov, iovcnt, off < 0 ? o->pos : off));
	if (n > 0 && off < 0)
		o->pos += n;
	return n;
}

/* The kernel's size of the file moved behind the stack (another process
 * grew it, or cut it unless grown_only): the stack writes back and
 * forgets its sizes and clean data; a write-back that failed is kept for
 * fsync and close.  1 when it followed. */
static int follow_kernel_size(struct ffio_file *f, off_t kernel, int grown_only)
{
	off_t mine;
	if (ffio_layer_size(f->top, &mine) < 0 || kernel == mine || (grown_only && kernel < mine))
		return 0;
	ffio_file_set_error(f, ffio_file_write_back(f, 1));
	return 1;
}

/* A read came short: has the file grown behind the stack (as a log
 * another process writes and this one tails)?  1: read again.  One fstat
 * at each end of file met: a plain one, which asks the file system (a
 * FUSE or NFS server) as the kernel's own read past its size asks;
 * elsewhere ffio asks the kernel alone (ffio_kernel_stat). */
static int grew_behind(struct ffio_file *f)
{
	struct stat st;
	return ffio_real.fstat(f->fd, &st) == 0 && follow_kernel_size(f, st.st_size, 1);
}

static ssize_t stack_read(struct ffio_file *f, const struct iovec *iov, int iovcnt, off_t at, size_t len,
			  size_t may)
{
	return may == len ? ffio_stack_preadv(f, iov, iovcnt, at, len)
	       : may > 0  ? stack_rw_first(f, 0, iov, iovcnt, at, may)
			  : 0;
}

/* off -1: at the position, which moves. */
FFIO_HOT static ssize_t do_read(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off)
{
	struct ffio_file *f = o->file;
	ssize_t n;

	if (f->through)
		return kernel_result(off < 0 ? ffio_real.readv(o->kfd, iov, iovcnt)
					     : ffio_real.preadv(o->kfd, iov, iovcnt, off));
	off_t at = off < 0 ? o->pos : off;
	if (iov_odd(iov, iovcnt) || direct_odd(o, iov, iovcnt, at))
		return kernel_read(o, iov, iovcnt, off);
	size_t len = ffio_iov_len(iov, iovcnt);
	if (acc(o) == O_WRONLY)
		return -EBADF;
	ssize_t may = kernel_limits(f, 0, at, len);
	if (may < 0)
		return may;
	n = stack_read(f, iov, iovcnt, at, len, (size_t)may);
	if (n >= 0 && n < may && grew_behind(f))
		n = stack_read(f, iov, iovcnt, at, len, (size_t)may);
	if (n > 0 && off < 0)
		o->pos += n;
	return n;
}

/* The process coordinates with others through a shared mapping of a file
 * it locks (coherence.c): each write reaches the kernel before it returns. */
static int writes_through(void)
{
	return __builtin_expect(__atomic_load_n(&ffio_write_through_shared, __ATOMIC_RELAXED) != 0, 0);
}

/* After the write of a description opened O_SYNC or O_DSYNC (or given
 * RWF_SYNC, RWF_DSYNC): the data, and with full sync the metadata, are on
 * the file before the call returns. */
static int sync_written(struct ffio_file *f, int full)
{
	int err = ffio_layer_flush(f->top);
	if (err < 0)
		return err;
	return (full ? ffio_real.fsync(f->fd) : ffio_real.fdatasync(f->fd)) < 0 ? -errno : 0;
}

/* After a write into the stack: synced for O_SYNC and O_DSYNC (dsync,
 * full), written back when the process writes through or the write is a
 * signal handler's (a fatal signal's handler writes its report, then the
 * process dies); else nothing. */
static int write_back_now(struct ffio_file *f, int dsync, int full)
{
	if (dsync)
		return sync_written(f, full);
	return writes_through() || ffio_in_handler ? ffio_layer_flush(f->top) : 0;
}

/* A write the kernel makes itself, after what the stack holds, which was
 * written before it; the stack then forgets the bytes and the size that
 * changed under it.  Appending (another process may have appended since),
 * at the kernel's end and position; otherwise at off, or at the position
 * (off -1), which moves: for buffers the kernel may refuse (iov_odd)
 * and unaligned O_DIRECT transfers (direct_odd), its result, errno and
 * short count are the kernel's. */
static ssize_t kernel_write(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off, int rwf,
			    int appending)
{
	struct ffio_file *f = o->file;
	off_t at = off < 0 && !appending ? o->pos : off;
	int err = ffio_layer_flush(f->top);
	ssize_t n;

	if (err < 0)
		return err;
	if (rwf)
		n = ffio_real.pwritev2(o->kfd, iov, iovcnt, at, rwf);
	else if (at < 0)
		n = ffio_real.writev(o->kfd, iov, iovcnt);
	else
		n = ffio_real.pwritev(o->kfd, iov, iovcnt, at); /* O_APPEND: at the end */
	n = kernel_result(n);
	err = ffio_layer_invalidate(f->top);
	if (n >= 0 && off < 0 && appending) {
		off_t k = ffio_real.lseek(o->kfd, 0, SEEK_CUR);
		if (k >= 0)
			o->pos = k;
	} else if (n > 0 && off < 0) {
		o->pos += n;
	}
	return n < 0 ? n : err < 0 ? err : n;
}

/* A write: report a deferred error first; one raised while writing is
 * reported by this call (the data was taken, a retry rewrites the same
 * bytes).  off -1: at the position.  rwf: pwritev2's flags. */
FFIO_HOT static ssize_t do_write(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off, int rwf)
{
	struct ffio_file *f = o->file;
	ssize_t n;

	if (f->through) {
		if (rwf)
			return kernel_result(ffio_real.pwritev2(o->kfd, iov, iovcnt, off, rwf));
		return kernel_result(off < 0 ? ffio_real.writev(o->kfd, iov, iovcnt)
					     : ffio_real.pwritev(o->kfd, iov, iovcnt, off));
	}
	int appending = ((o->oflags & O_APPEND) && !(rwf & RWF_NOAPPEND)) || (rwf & RWF_APPEND);
	off_t at = off < 0 ? o->pos : off;
	if (iov_odd(iov, iovcnt) || direct_odd(o, iov, iovcnt, appending ? -1 : at))
		return kernel_write(o, iov, iovcnt, off, rwf, appending);
	size_t len = ffio_iov_len(iov, iovcnt);
	if (acc(o) == O_RDONLY)
		return -EBADF;
	if (f->error)
		return ffio_file_take_error(f);
	if (len == 0)
		return 0; /* the kernel moves nothing, not even for O_APPEND */
	if (appending)
		return kernel_write(o, iov, iovcnt, off, rwf, 1);
	ssize_t may = kernel_limits(f, 1, at, len);
	if (may < 0)
		return may;
	ffio_note_unwritten(f);
	n = (size_t)may == len ? ffio_stack_pwritev(f, iov, iovcnt, at, len)
			       : stack_rw_first(f, 1, iov, iovcnt, at, (size_t)may);
	if (n >= 0 && f->error)
		return ffio_file_take_error(f);
	if (n > 0 && off < 0)
		o->pos += n;
	if (n > 0) {
		int err = write_back_now(f, (o->oflags & O_DSYNC) || (rwf & (RWF_DSYNC | RWF_SYNC)),
					 (o->oflags & O_SYNC) == O_SYNC || (rwf & RWF_SYNC));
		if (err < 0)
			return err;
	}
	return n;
}

FFIO_HOT ssize_t ffio_ofd_preadv(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return LOCKED(o->file, do_read(o, iov, iovcnt, off));
}

FFIO_HOT ssize_t ffio_ofd_readv(struct ffio_ofd *o, const struct iovec *iov, int iovcnt)
{
	return LOCKED(o->file, do_read(o, iov, iovcnt, -1));
}

FFIO_HOT ssize_t ffio_ofd_pwritev(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return LOCKED(o->file, do_write(o, iov, iovcnt, off, 0));
}

FFIO_HOT ssize_t ffio_ofd_writev(struct ffio_ofd *o, const struct iovec *iov, int iovcnt)
{
	return LOCKED(o->file, do_write(o, iov, iovcnt, -1, 0));
}

FFIO_HOT ssize_t ffio_ofd_pwritev2(struct ffio_ofd *o, const struct iovec *iov, int iovcnt, off_t off, int rwf)
{
	if (off < -1)
		return -EINVAL;
	return LOCKED(o->file, do_write(o, iov, iovcnt, off, rwf));
}

/* ---- position, flags, size ---------------------------------------------- */

static off_t do_seek(struct ffio_ofd *o, off_t off, int whence)
{
	struct ffio_file *f = o->file;
	off_t base, r;
	int err;

	if (f->through)
		return kernel_result(ffio_real.lseek(o->kfd, off, whence));
	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = o->pos;
		break;
	case SEEK_END:
		if ((err = ffio_layer_size(f->top, &base)) < 0)
			return err;
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		/* Only the file system knows its holes: write everything first. */
		if ((err = ffio_layer_flush(f->top)) < 0)
			return err;
		r = ffio_real.lseek(o->kfd, off, whence);
		if (r < 0)
			return -errno;
		return o->pos = r;
	default:
		return -EINVAL;
	}
	if ((off > 0 && base > LLONG_MAX - off) || base + off < 0)
		return off > 0 ? -EOVERFLOW : -EINVAL;
	if (base + off > f->max_pos && !(whence == SEEK_CUR && off == 0))
		return -EINVAL; /* past the file system's largest size (vfs_setpos) */
	return o->pos = base + off;
}

off_t ffio_ofd_seek(struct ffio_ofd *o, off_t off, int whence)
{
	return LOCKED(o->file, do_seek(o, off, whence));
}

static off_t get_pos(struct ffio_ofd *o)
{
	if (o->file->through)
		return kernel_result(ffio_real.lseek(o->kfd, 0, SEEK_CUR));
	return o->pos;
}

off_t ffio_ofd_pos(struct ffio_ofd *o)
{
	return LOCKED(o->file, get_pos(o));
}

void ffio_ofd_hits(struct ffio_ofd *o)
{
	const struct ffio_file *f = o->file;
	struct ffio_layer *t = o->is_private || f->through ? NULL : f->top;
	int acc = o->oflags & O_ACCMODE;

	o->hit_layer = t;
	o->read_hit = t && acc != O_WRONLY && !(o->oflags & O_DIRECT) ? t->ops->read_hit : NULL;
	o->write_hit = t && acc != O_RDONLY && !(o->oflags & (O_APPEND | O_DSYNC | O_DIRECT))
			       ? t->ops->write_hit
			       : NULL;
}

static int set_flags(struct ffio_ofd *o, int flags)
{
	o->oflags = (o->oflags & O_ACCMODE) | (flags & ~O_ACCMODE);
	ffio_ofd_hits(o);
	return 0;
}

void ffio_ofd_set_flags(struct ffio_ofd *o, int flags)
{
	(void)LOCKED(o->file, set_flags(o, flags));
}

/* A truncation after what the stack holds: data written, then cut, has
 * still made the file system allocate it (SEEK_HOLE tells). */
static int truncate_stack(struct ffio_file *f, off_t len)
{
	int err = ffio_layer_flush(f->top);
	return err < 0 ? err : ffio_layer_truncate(f->top, len);
}

static int do_truncate(struct ffio_ofd *o, off_t len)
{
	if (o->file->through)
		return ffio_real.ftruncate(o->kfd, len) < 0 ? -errno : 0;
	if (len < 0 || acc(o) == O_RDONLY)
		return -EINVAL;
	return truncate_stack(o->file, len);
}

int ffio_ofd_truncate(struct ffio_ofd *o, off_t len)
{
	return LOCKED(o->file, do_truncate(o, len));
}

/* ---- calls on a whole file --------------------------------------------- */

/* A file that passes through holds nothing: the calls below have nothing
 * to do on it (its descriptors' own calls reach the kernel). */
#define STACK(f, expr, none) ((f)->top ? (expr) : (none))

static ssize_t file_pread(struct ffio_file *f, void *buf, size_t n, off_t off)
{
	struct iovec iov = {buf, n};
	if (off < 0)
		return -EINVAL;
	return STACK(f, ffio_layer_preadv(f->top, &iov, 1, off), -EBADF);
}

ssize_t ffio_file_pread(struct ffio_file *f, void *buf, size_t n, off_t off)
{
	return LOCKED(f, file_pread(f, buf, n, off));
}

static ssize_t file_pwrite(struct ffio_file *f, const void *buf, size_t n, off_t off)
{
	struct iovec iov = {(void *)buf, n};
	if (off < 0)
		return -EINVAL;
	if (!f->top)
		return -EBADF;
	if (f->error)
		return ffio_file_take_error(f);
	ffio_note_unwritten(f);
	ssize_t r = ffio_stack_pwritev(f, &iov, 1, off, n);
	if (r >= 0 && f->error)
		return ffio_file_take_error(f);
	int err = r > 0 ? write_back_now(f, 0, 0) : 0;
	return err < 0 ? err : r;
}

ssize_t ffio_file_pwrite(struct ffio_file *f, const void *buf, size_t n, off_t off)
{
	return LOCKED(f, file_pwrite(f, buf, n, off));
}

static int do_flush(struct ffio_file *f)
{
	int err = STACK(f, ffio_layer_flush(f->top), 0);
	int deferred = ffio_file_take_error(f);
	return err < 0 ? err : deferred;
}

int ffio_file_flush(struct ffio_file *f)
{
	return LOCKED(f, do_flush(f));
}

static int do_fsync(struct ffio_file *f, int datasync)
{
	int err = STACK(f, ffio_layer_fsync(f->top, datasync), 0);
	int deferred = ffio_file_take_error(f);
	return err < 0 ? err : deferred;
}

int ffio_file_fsync(struct ffio_file *f, int datasync)
{
	return LOCKED(f, do_fsync(f, datasync));
}

int ffio_file_truncate(struct ffio_file *f, off_t len)
{
	if (len < 0)
		return -EINVAL;
	return LOCKED(f, STACK(f, truncate_stack(f, len), -ENOSYS));
}

/* truncate(2) by path is the kernel's own call, as the program made it:
 * the kernel checks the path's permissions, which ffio's descriptor of the
 * file does not have (it is read only when the program holds the file
 * only for reading).  What the stack holds goes first, as the writes came
 * before; then the stack forgets its clean data and sizes, as for a file
 * another process cut or grew. */
static int truncate_path(struct ffio_file *f, const char *path, off_t len)
{
	int err = STACK(f, ffio_layer_flush(f->top), 0);
	if (err < 0)
		return err;
	if (ffio_real.truncate(path, len) < 0)
		return -errno;
	ffio_file_set_error(f, ffio_file_write_back(f, 1));
	return 0;
}

int ffio_file_truncate_path(struct ffio_file *f, const char *path, off_t len)
{
	return LOCKED(f, truncate_path(f, path, len));
}

int ffio_file_size(struct ffio_file *f, off_t *len)
{
	return LOCKED(f, STACK(f, ffio_layer_size(f->top, len), -ENOSYS));
}

/* A stat's size, given the kernel's (after ffio_file_stat_sync): with
 * nothing unwritten in the stack, the kernel's, which another process
 * may have moved (a file it grows or cuts: the stack then forgets its
 * sizes and clean data); else the stack's. */
static int do_stat_size(struct ffio_file *f, off_t kernel, off_t *len)
{
	if (!f->top)
		return -ENOSYS;
	if (f->unwritten || f->error)
		return ffio_layer_size(f->top, len);
	(void)follow_kernel_size(f, kernel, 0);
	*len = kernel;
	return 0;
}

int ffio_file_stat_size(struct ffio_file *f, off_t kernel, off_t *len)
{
	return LOCKED(f, do_stat_size(f, kernel, len));
}

int ffio_file_invalidate(struct ffio_file *f)
{
	return LOCKED(f, ffio_file_write_back(f, 1));
}

static int do_sync_kernel(struct ffio_file *f)
{
	int err = STACK(f, ffio_layer_flush(f->top), 0);
	if (err < 0 || f->through)
		return err;
	return ffio_file_give_offsets(f);
}

int ffio_file_sync_kernel(struct ffio_file *f)
{
	return LOCKED(f, do_sync_kernel(f));
}

static int do_stat_sync(struct ffio_file *f)
{
	if (!f->unwritten || f->through)
		return 0;
	f->unwritten = 0;
	ffio_file_set_error(f, STACK(f, ffio_layer_flush(f->top), 0));
	return 1;
}

int ffio_file_stat_sync(struct ffio_file *f)
{
	if (!__atomic_load_n(&f->unwritten, __ATOMIC_RELAXED))
		return 0;
	return LOCKED(f, do_stat_sync(f));
}

/* Drop buffered data without writing it (a file being deleted): every
 * layer's discard method, top first; -ENOTSUP when no layer has one (the
 * data will then be written as usual). */
static int do_discard(struct ffio_file *f)
{
	int err = -ENOTSUP;

	f->stack_calls++; /* see stack.c's entered() */
	for (struct ffio_layer *l = f->top; l; l = l->below) {
		if (!l->ops->discard)
			continue;
		int e = l->ops->discard(l);
		if (err == -ENOTSUP || (err == 0 && e < 0))
			err = e;
	}
	/* The data is gone on purpose: a write-behind error of it is moot. */
	if (err == 0)
		(void)ffio_file_take_error(f);
	return err;
}

int ffio_file_discard(struct ffio_file *f)
{
	return LOCKED(f, do_discard(f));
}

static int do_stats(struct ffio_file *f, struct ffio_stats *st, int max)
{
	int n = 0;
	f->stack_calls++; /* see stack.c's entered() */
	for (struct ffio_layer *l = f->top; l && n < max; l = l->below) {
		if (!l->ops->stats)
			continue;
		memset(&st[n], 0, sizeof st[n]);
		snprintf(st[n].layer, sizeof st[n].layer, "%s", l->ops->name);
		st[n].position = l->index;
		if (l->ops->stats(l, &st[n]) == 0)
			n++;
	}
	return n;
}

int ffio_file_stats(struct ffio_file *f, struct ffio_stats *st, int max)
{
	return LOCKED(f, do_stats(f, st, max));
}

/* The layers above the bottom set their passes (struct ffio_layer) under
 * the flags they saw: cleared here, set again at their next call. */
static int do_set_flag(struct ffio_file *f, unsigned flag, int on)
{
	if (on)
		f->glue_flags |= flag;
	else
		f->glue_flags &= ~flag;
	for (struct ffio_layer *l = f->top; l && l->below; l = l->below)
		l->passes = 0;
	return 0;
}

void ffio_file_set_flag(struct ffio_file *f, unsigned flag, int on)
{
	(void)LOCKED(f, do_set_flag(f, flag, on));
}
