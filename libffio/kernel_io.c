/* libffio/kernel_io.c -- the kernel I/O of the bottom layers, written once:
 * sys, and uring when it makes a call itself (a synchronous method, or a
 * request while it has no ring).  One transfer as the kernel makes it
 * (buffered writes in pieces), the same repeated until the whole request
 * is done, sync, truncate, size and advice; plus the iovec cursor they and
 * uring's SQE pieces share.  Each returns 0 or a byte count, or -errno.
 * And the kernel's limits on a file's calls: the file system's largest
 * size, O_DIRECT's alignment, RLIMIT_FSIZE; and what ffio must know of
 * a file's file system; and what ffio asks of a file for itself
 * (ffio_kernel_stat). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "ffio-internal.h"

/* Buffered writes longer than FFIO_WRITE_WHOLE go to the kernel in calls of
 * at most FFIO_WRITE_PIECE.  Measured on this project's machine (Linux
 * 6.18, ext4 with large folios): writing 15 MB in 1 MiB calls takes 2.6
 * ms, or, in some states of the kernel's memory, 34 ms, every time, while
 * the same bytes in 512 KiB calls take 2.6 to 3.4 ms in both states; a
 * flush writing a long run in one call would always meet the slow case.
 * A write of up to 1 MiB goes in one call, as the application would make
 * it: cut in two, it cost a second update of the file's times, 4 us, 5% of
 * an iteration of Program I (open, write 1 MiB, close, open, read, close:
 * 75 us against 79 us).  A piece ends at FFIO_WRITE_PIECE bytes or
 * PIECE_IOVS vector entries. */
#define PIECE_IOVS 256

/* One system call: the plain form for one buffer, the vector form else. */
FFIO_HOT ssize_t ffio_kernel_once(int fd, int write, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t r;

	if (iovcnt == 1)
		r = write ? ffio_real.pwrite(fd, iov[0].iov_base, iov[0].iov_len, off)
			  : ffio_real.pread(fd, iov[0].iov_base, iov[0].iov_len, off);
	else
		r = write ? ffio_real.pwritev(fd, iov, iovcnt, off) : ffio_real.preadv(fd, iov, iovcnt, off);
	return r < 0 ? -errno : r;
}

int ffio_iov_take(struct ffio_iov_cursor *c, size_t max, struct iovec *part, int max_parts, size_t *len)
{
	size_t got = 0;
	int n = 0;
	while (c->i < c->cnt && n < max_parts && got < max) {
		size_t take = c->iov[c->i].iov_len - c->skip;
		if (take > max - got)
			take = max - got;
		part[n++] = (struct iovec){(char *)c->iov[c->i].iov_base + c->skip, take};
		got += take;
		c->skip += take;
		if (c->skip == c->iov[c->i].iov_len) {
			c->i++;
			c->skip = 0;
		}
	}
	*len = got;
	return n;
}

/* A write too large for one call, in pieces.  Apart from write_pieces so
 * that the piece vector (4 KiB) is on the stack only when it is needed: a
 * signal handler on a small alternate stack writes back through here. */
static __attribute__((noinline)) ssize_t write_in_pieces(int fd, const struct iovec *iov, int iovcnt, off_t off,
							  uint64_t *calls)
{
	struct ffio_iov_cursor cur = {.iov = iov, .cnt = iovcnt};
	struct iovec part[PIECE_IOVS];
	size_t done = 0, want;
	int n;
	while ((n = ffio_iov_take(&cur, FFIO_WRITE_PIECE, part, PIECE_IOVS, &want)) > 0 && want > 0) {
		(*calls)++;
		ssize_t r = ffio_kernel_once(fd, 1, part, n, off + (off_t)done);
		if (r < 0)
			return done > 0 ? (ssize_t)done : r;
		done += (size_t)r;
		if ((size_t)r < want) /* short: the bytes written so far are the result */
			break;
	}
	return (ssize_t)done;
}

static ssize_t write_pieces(int fd, const struct iovec *iov, int iovcnt, off_t off, uint64_t *calls)
{
	if (ffio_iov_len(iov, iovcnt) > FFIO_WRITE_WHOLE)
		return write_in_pieces(fd, iov, iovcnt, off, calls);
	(*calls)++;
	return ffio_kernel_once(fd, 1, iov, iovcnt, off);
}

ssize_t ffio_kernel_transfer(int fd, int write, int whole, const struct iovec *iov, int iovcnt, off_t off,
			     struct ffio_stats *st)
{
	int op = write ? FFIO_STAT_WRITE : FFIO_STAT_READ;
	ssize_t r;

	if (write && !whole) {
		r = write_pieces(fd, iov, iovcnt, off, &st->count[op]);
	} else {
		r = ffio_kernel_once(fd, write, iov, iovcnt, off);
		if (r >= 0)
			st->count[op]++;
	}
	if (r > 0)
		st->bytes[op] += (uint64_t)r;
	return r;
}

/* Move c past n bytes. */
static void iov_skip(struct ffio_iov_cursor *c, size_t n)
{
	while (n > 0 && c->i < c->cnt) {
		size_t left = c->iov[c->i].iov_len - c->skip;
		if (n < left) {
			c->skip += n;
			return;
		}
		n -= left;
		c->i++;
		c->skip = 0;
	}
}

ssize_t ffio_kernel_transfer_full(int fd, int write, const struct iovec *iov, int iovcnt, off_t off)
{
	struct ffio_iov_cursor cur = {.iov = iov, .cnt = iovcnt};
	struct iovec part[PIECE_IOVS];
	size_t done = 0, want;

	for (;;) {
		struct ffio_iov_cursor at = cur;
		int n = ffio_iov_take(&at, (size_t)SSIZE_MAX, part, PIECE_IOVS, &want);
		if (n == 0 || want == 0)
			break;
		ssize_t r = ffio_kernel_once(fd, write, part, n, off + (off_t)done);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		if (r == 0) {
			if (write)
				return -EIO;
			break; /* the end of the file */
		}
		done += (size_t)r;
		iov_skip(&cur, (size_t)r);
	}
	return (ssize_t)done;
}

int ffio_kernel_sync(int fd, int datasync, struct ffio_stats *st)
{
	int r = datasync ? ffio_real.fdatasync(fd) : ffio_real.fsync(fd);
	st->count[FFIO_STAT_SYNC]++;
	return r < 0 ? -errno : 0;
}

int ffio_kernel_truncate(int fd, off_t len, struct ffio_stats *st)
{
	st->count[FFIO_STAT_TRUNCATE]++;
	return ffio_real.ftruncate(fd, len) < 0 ? -errno : 0;
}

/* What ffio asks of a file for itself, the kernel answers from what it
 * holds, without asking the file system below (AT_STATX_DONT_SYNC).  On a
 * local file system that is fstat's answer.  On FUSE, a plain stat after a
 * write asks the server, and the server's size replaces the kernel's; a
 * client that caches writes (GlusterFS's write-behind) can answer a size
 * that leaves out writes it has acknowledged, and the kernel then ends
 * this process's reads there.  A program that makes no stat call never
 * meets that, so ffio must not cause it.  (NFS flushes the file's dirty
 * pages for a plain stat: not needed here either.)  A read that meets
 * the end of the file asks with a plain fstat, as the kernel's own read
 * past its size asks (ofd.c).  fstatat where statx is missing or
 * refused. */
int ffio_kernel_stat_at(int dirfd, const char *path, int flags, struct stat *st)
{
	struct statx sx;
	const char *name = path ? path : "";
	if (ffio_real.statx &&
	    ffio_real.statx(dirfd, name, flags | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &sx) == 0) {
		ffio_stat_of_statx(&sx, st);
		return 0;
	}
	int err = ffio_real.statx ? errno : ENOSYS;
	/* statx missing, refused (a seccomp filter) or not knowing a flag */
	if ((err != ENOSYS && err != EPERM && err != EINVAL) || !ffio_real.fstatat)
		return -err;
	return ffio_real.fstatat(dirfd, name, st, flags) < 0 ? -errno : 0;
}

void ffio_stat_of_statx(const struct statx *sx, struct stat *st)
{
	*st = (struct stat){
		.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor),
		.st_ino = sx->stx_ino,
		.st_mode = sx->stx_mode,
		.st_nlink = sx->stx_nlink,
		.st_uid = sx->stx_uid,
		.st_gid = sx->stx_gid,
		.st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor),
		.st_size = (off_t)sx->stx_size,
		.st_blksize = (blksize_t)sx->stx_blksize,
		.st_blocks = (blkcnt_t)sx->stx_blocks,
		.st_atim = {sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec},
		.st_mtim = {sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec},
		.st_ctim = {sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec},
	};
}

int ffio_kernel_stat(int fd, struct stat *st)
{
	return ffio_kernel_stat_at(fd, NULL, AT_EMPTY_PATH, st);
}

int ffio_kernel_size(int fd, off_t *len)
{
	struct stat st;
	int err = ffio_kernel_stat(fd, &st);
	if (err == 0)
		*len = st.st_size;
	return err;
}

int ffio_kernel_advise(const struct ffio_layer *l, int direct, off_t off, off_t len, int advice)
{
	if (direct)
		return -EOPNOTSUPP; /* the page cache is not used */
	return -ffio_real.posix_fadvise(l->file->fd, off, len, advice);
}

/* File systems whose largest size is known: a few, filled as they are met
 * (a slot's dev is published after its max, so a reader that sees the dev
 * sees the max; two threads probing the same one store the same). */
#define MAX_POS_FS 16
static struct {
	dev_t dev;
	off_t max;
} max_pos_fs[MAX_POS_FS];
static int max_pos_n;

static int pos_ok(int fd, off_t pos)
{
	return ffio_real.lseek(fd, pos, SEEK_SET) == pos;
}

/* The kernel gives EINVAL for lseek past the file system's largest size
 * (s_maxbytes) and EFBIG for a write at it: LLONG_MAX on most file systems,
 * 16 TiB - 4 KiB for ext4 with 4 KiB blocks.  Found with lseek on fd (ffio's
 * own descriptor, whose position is put back), by bisection where it is not
 * LLONG_MAX, once per file system: ext4's smaller limit for files without
 * extents (made by ext3) is not worth 63 calls at every open.  A descriptor
 * that cannot seek has no limit.  errno is left as it was: the calls that
 * fail are ffio's, inside an open that succeeds. */
off_t ffio_kernel_max_pos(int fd, dev_t dev)
{
	int n = __atomic_load_n(&max_pos_n, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < MAX_POS_FS; i++)
		if (__atomic_load_n(&max_pos_fs[i].dev, __ATOMIC_ACQUIRE) == dev && max_pos_fs[i].max > 0)
			return max_pos_fs[i].max;
	int saved_errno = errno;
	off_t was = ffio_real.lseek(fd, 0, SEEK_CUR), lo = 0, hi = LLONG_MAX;
	if (was < 0) {
		errno = saved_errno;
		return LLONG_MAX;
	}
	if (!pos_ok(fd, hi)) {
		while (hi - lo > 1) { /* lo is allowed, hi not */
			off_t mid = lo + (hi - lo) / 2;
			if (pos_ok(fd, mid))
				lo = mid;
			else
				hi = mid;
		}
		hi = lo;
	}
	(void)ffio_real.lseek(fd, was, SEEK_SET);
	errno = saved_errno;
	int slot = __atomic_fetch_add(&max_pos_n, 1, __ATOMIC_ACQ_REL);
	if (slot < MAX_POS_FS) {
		max_pos_fs[slot].max = hi;
		__atomic_store_n(&max_pos_fs[slot].dev, dev, __ATOMIC_RELEASE);
	}
	return hi;
}

size_t ffio_kernel_dio_align(int fd)
{
	struct statx stx;
	long page = sysconf(_SC_PAGESIZE);
	size_t a = page > 0 ? (size_t)page : 4096;
	int saved_errno = errno;

	if (ffio_real.statx && ffio_real.statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_mem_align && stx.stx_dio_offset_align)
		a = stx.stx_dio_mem_align > stx.stx_dio_offset_align ? stx.stx_dio_mem_align
								     : stx.stx_dio_offset_align;
	errno = saved_errno;
	while (a & (a - 1)) /* not a power of two: the next one */
		a = (a | (a - 1)) + 1;
	return a;
}

/* RLIMIT_FSIZE (ffio-internal.h; rlimit.c sees the program set it). */
off_t ffio_fsize_limit = LLONG_MAX;

void ffio_fsize_refresh(void)
{
	struct rlimit rl;
	off_t limit = LLONG_MAX;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < LLONG_MAX)
		limit = (off_t)rl.rlim_cur;
	if (limit != __atomic_load_n(&ffio_fsize_limit, __ATOMIC_RELAXED)) {
		__atomic_store_n(&ffio_fsize_limit, limit, __ATOMIC_RELAXED);
		ffio_files_fsize_limit();
	}
}

/* What ffio must know of a file's file system (ffio_kernel_fs):
 *
 * FFIO_FS_KERNEL_MADE: regular files whose bytes the kernel makes at each
 * read, whose size says nothing (0 in /proc, 4096 in /sys), or that take
 * no write(2) (hugetlbfs): the kernel alone answers for them.
 *
 * FFIO_FS_WRITE_WHOLE: FUSE, whose writes go to the server as they come
 * (not into the page cache's folios, where a long write call can meet the
 * slow case that FFIO_WRITE_PIECE avoids): a long write goes in one call.
 * Measured on the GlusterFS volume of make bench-dfs, 13.8 MB written in
 * one call took 32.1 ms, in calls of 512 KiB 35.4 ms (medians of 9); the
 * cache's write-back and ROMIO's collective writes are such writes.
 *
 * The answer is the file system's type (fstatfs), which is a request to
 * the server on a network or FUSE file system: 170 to 500 us on that
 * volume, at every open of a file the spec names.  So it is remembered by
 * the file's mount, where the kernel gives mounts IDs it never reuses
 * (statx's STATX_MNT_ID_UNIQUE, Linux 6.8): a mount's file system never
 * changes.  Each slot holds the ID shifted left twice, with the answer in
 * the low bits, in one word that is read and written whole; a full table
 * is overwritten from its start.  Older kernels ask fstatfs every time. */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#define FS_MOUNTS 16
static uint64_t fs_mount[FS_MOUNTS];
static unsigned fs_next;

static int fs_by_type(int fd, int *fs)
{
	static const unsigned long made[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC,        DEBUGFS_MAGIC,   TRACEFS_MAGIC,    SECURITYFS_MAGIC,
		SELINUX_MAGIC,    SMACK_MAGIC,        CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, RDTGROUP_SUPER_MAGIC,
		PSTOREFS_MAGIC,   EFIVARFS_MAGIC,     BPF_FS_MAGIC,    BINFMTFS_MAGIC,   NSFS_MAGIC,
		HUGETLBFS_MAGIC,  0x62656570 /* configfs */, 0x65735543 /* fusectl */,
	};
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	*fs = (unsigned long)sfs.f_type == FUSE_SUPER_MAGIC ? FFIO_FS_WRITE_WHOLE : 0;
	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
		if ((unsigned long)sfs.f_type == made[i])
			*fs = FFIO_FS_KERNEL_MADE;
	return 0;
}

int ffio_kernel_fs(int fd)
{
	struct statx stx;
	uint64_t mount = 0;
	int saved = errno, fs = 0;

	if (ffio_real.statx &&
	    ffio_real.statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE) && stx.stx_mnt_id && stx.stx_mnt_id < (UINT64_C(1) << 62))
		mount = stx.stx_mnt_id;
	for (int i = 0; mount && i < FS_MOUNTS; i++) {
		uint64_t slot = __atomic_load_n(&fs_mount[i], __ATOMIC_RELAXED);
		if (slot >> 2 == mount) {
			errno = saved;
			return (int)(slot & 3);
		}
	}
	if (fs_by_type(fd, &fs) == 0 && mount) {
		unsigned i = __atomic_fetch_add(&fs_next, 1, __ATOMIC_RELAXED) % FS_MOUNTS;
		__atomic_store_n(&fs_mount[i], mount << 2 | (uint64_t)fs, __ATOMIC_RELAXED);
	}
	errno = saved;
	return fs;
}
