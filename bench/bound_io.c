/* bench/bound_io.c -- a ceiling for the netCDF benchmarks, not a layer:
 * preloaded ahead of libffio, it takes the files whose name ends in one of
 * the suffixes of $FFIO_BOUND_SUFFIX (separated by ':') and serves
 * netCDF's posixio calls on them with no bookkeeping and only the system
 * calls no cache could avoid, to show how fast any user-space cache could
 * make the program on this machine.
 *   - A file created or truncated at open lives in memory touched before
 *     main ($FFIO_BOUND_MB MiB of it, 64 by default; beyond that memory is
 *     touched on demand); reads, writes and lseek are memcpy and arithmetic.
 *     With FFIO_BOUND_TOUCH=0 that memory is only marked for huge pages,
 *     not touched: the ceiling of a cache that, like any cache in a new
 *     process, first touches its memory while the program runs.
 *     At close its bytes go to the kernel in 512 KiB pwrite calls, as a
 *     cache over sys flushes them, so the output is a real file, compared
 *     byte for byte with the raw run's by the benchmark scripts.
 *   - An existing file opened read-only is read into memory touched the
 *     same way (a second arena), in 1 MiB pread calls, each piece when a
 *     read first wants a byte of it; a read is then one memcpy.  (Mapping
 *     the file instead was slower than ffio's cache here: the page faults
 *     cost more than the copies.  Asking the kernel for the whole file at
 *     open, POSIX_FADV_WILLNEED, made the seed's cold tile reads slower:
 *     six readers each waited in the advice for the whole file.  Keeping
 *     what was read for the next open of the same file, as ncrcat opens
 *     each input three times, made it slower still: each file then needs
 *     memory touched for the first time, at up to 8 ms a MiB here.)  The
 *     next file opened reuses the memory, already touched.
 *   - FFIO_BOUND_WPIECE / FFIO_BOUND_RPIECE set those call sizes in bytes;
 *     0 is the whole file in one call: over the simulated parallel file
 *     system (libffio's delay layer below), where every call costs a
 *     latency, the scripts use that.
 * Only what netCDF's posixio does is handled: open, lseek, read, write,
 * pread, pwrite, fstat, ftruncate, fsync and close on such a descriptor
 * (one memory file being written at a time, in the touched arena; up to
 * 16 read-only files open at once, the first in the other touched arena;
 * dup and fork are not followed).  Other files and calls go on to the next library
 * (libffio, or libc). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXFD 4096
#define ARENA_MAX ((size_t)4 << 30) /* address space reserved for a memory file */
#define CHUNK ((size_t)1 << 20)     /* the unit of what a read-only file has in memory */
#define NCHUNK (ARENA_MAX / CHUNK)

/* The memory of a read-only file open now; reused, already touched, by
 * the next file opened after its close. */
struct rfile {
	char *mem; /* the touched arena (the first), or a mapping of its own */
	int open;
	unsigned char in[NCHUNK / 8]; /* which CHUNKs are in memory */
};
#define NRFILE 16

struct bfile {
	char *mem;        /* the arena, or the read-only file's memory */
	size_t size;      /* the file's size as the program sees it */
	off_t pos;        /* the descriptor's offset */
	struct rfile *rf; /* a read-only file, read in on demand; NULL: a memory file */
	int fd;
};

static struct bfile *fdmap[MAXFD];
static const char *suffixes; /* "A:B:..." */
static char *arena, *rarena; /* the memory file's, the first read-only file's */
static int arena_busy;
static struct rfile rfiles[NRFILE];
static size_t wpiece = (size_t)512 << 10, rpiece = CHUNK; /* call sizes (0: whole file) */

static int (*next_open)(const char *, int, ...);
static int (*next_close)(int);
static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static ssize_t (*next_pread)(int, void *, size_t, off_t);
static ssize_t (*next_pwrite)(int, const void *, size_t, off_t);
static off_t (*next_lseek)(int, off_t, int);
static int (*next_fstat)(int, struct stat *);
static int (*next_ftruncate)(int, off_t);
static int (*next_fsync)(int);

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f) {
		fprintf(stderr, "bound_io: %s not found\n", name);
		abort();
	}
	return f;
}

static void init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	next_open = next("open");
	next_close = next("close");
	next_read = next("read");
	next_write = next("write");
	next_pread = next("pread");
	next_pwrite = next("pwrite");
	next_lseek = next("lseek");
	next_fstat = next("fstat");
	next_ftruncate = next("ftruncate");
	next_fsync = next("fsync");
	suffixes = getenv("FFIO_BOUND_SUFFIX");
	if (!suffixes || !*suffixes)
		suffixes = NULL;
	const char *w = getenv("FFIO_BOUND_WPIECE"), *r = getenv("FFIO_BOUND_RPIECE");
	if (w && *w)
		wpiece = strtoul(w, NULL, 0);
	if (r && *r)
		rpiece = strtoul(r, NULL, 0);
	if (rpiece) /* whole chunks */
		rpiece = (rpiece + CHUNK - 1) / CHUNK * CHUNK;
}

static char *reserve(void)
{
	char *m = mmap(NULL, ARENA_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		perror("bound_io: mmap");
		abort();
	}
	return m;
}

/* The arenas: reserved once, the first FFIO_BOUND_MB MiB of each touched
 * now (unless FFIO_BOUND_TOUCH=0), so that the timed runs do not pay for
 * memory touched the first time. */
__attribute__((constructor)) static void bound_init(void)
{
	init();
	if (!suffixes)
		return;
	arena = reserve();
	rarena = reserve();
	const char *mb = getenv("FFIO_BOUND_MB");
	size_t touch = (size_t)(mb ? strtoul(mb, NULL, 0) : 64) << 20;
	if (touch > ARENA_MAX)
		touch = ARENA_MAX;
	(void)madvise(arena, touch, MADV_HUGEPAGE);
	(void)madvise(rarena, touch, MADV_HUGEPAGE);
	const char *t = getenv("FFIO_BOUND_TOUCH");
	if (!t || strcmp(t, "0") != 0) {
		memset(arena, 0, touch);
		memset(rarena, 0, touch);
	}
}

static int matches(const char *path)
{
	size_t n;
	if (!suffixes || !path)
		return 0;
	n = strlen(path);
	for (const char *s = suffixes; *s;) {
		size_t len = strcspn(s, ":");
		if (len && n >= len && strncmp(path + n - len, s, len) == 0)
			return 1;
		s += len;
		if (*s == ':')
			s++;
	}
	return 0;
}

static struct bfile *bf(int fd)
{
	return fd >= 0 && fd < MAXFD ? fdmap[fd] : NULL;
}

/* Memory for a read-only file being opened: a slot not open now, whose
 * memory was touched already if there is one (the first slot's is the
 * touched arena), else a new one; NULL when all are open. */
static struct rfile *rfile_get(void)
{
	struct rfile *r, *fresh = NULL;
	for (r = rfiles; r < rfiles + NRFILE; r++) {
		if (r->open)
			continue;
		if (r->mem)
			break;
		if (!fresh)
			fresh = r;
	}
	if (r == rfiles + NRFILE) {
		if (!(r = fresh))
			return NULL;
		r->mem = r == rfiles ? rarena : reserve();
	}
	memset(r->in, 0, sizeof r->in);
	r->open = 1;
	return r;
}

/* Take fd (just opened by the next library) when path is ours. */
static int adopt(int fd, const char *path, int flags)
{
	struct stat st;
	struct bfile *b;

	if (fd < 0 || fd >= MAXFD || !matches(path))
		return fd;
	if (next_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fd;
	int rdonly = (flags & O_ACCMODE) == O_RDONLY;
	if (rdonly && st.st_size == 0)
		return fd; /* nothing to map: plain calls */
	if (!rdonly && !(flags & O_TRUNC) && st.st_size > 0) {
		errno = ENOTSUP; /* an existing file opened for writing: not a case of the ceiling */
		goto fail;
	}
	if (!rdonly && arena_busy) {
		errno = EMFILE;
		goto fail;
	}
	if (rdonly && (size_t)st.st_size > ARENA_MAX)
		return fd; /* too large to be ours: plain calls */
	if (!(b = calloc(1, sizeof *b)))
		goto fail;
	b->fd = fd;
	if (rdonly) {
		if (!(b->rf = rfile_get())) {
			free(b);
			return fd; /* every slot open: plain calls */
		}
		b->mem = b->rf->mem;
		b->size = (size_t)st.st_size;
	} else {
		b->mem = arena;
		arena_busy = 1;
	}
	fdmap[fd] = b;
	return fd;
fail:;
	int e = errno;
	next_close(fd);
	errno = e;
	return -1;
}

static int open_mode(const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	init();
	return adopt(next_open(path, flags, mode), path, flags);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = open_mode(path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = open_mode(path, flags, ap);
	va_end(ap);
	return fd;
}

int __open_2(const char *path, int flags)
{
	init();
	return adopt(next_open(path, flags), path, flags);
}

int __open64_2(const char *path, int flags)
{
	return __open_2(path, flags);
}

/* A memory file's bytes to the kernel, as one flush of a cache would. */
static int write_out(int fd, const struct bfile *b)
{
	for (size_t at = 0; at < b->size;) {
		size_t n = b->size - at;
		if (wpiece && n > wpiece)
			n = wpiece;
		ssize_t w = next_pwrite(fd, b->mem + at, n, (off_t)at);
		if (w < 0)
			return -1;
		at += (size_t)w;
	}
	return next_ftruncate(fd, (off_t)b->size);
}

int close(int fd)
{
	struct bfile *b;
	int ret = 0, e = 0;

	init();
	if (!(b = bf(fd)))
		return next_close(fd);
	fdmap[fd] = NULL;
	if (b->rf) {
		b->rf->open = 0; /* its memory serves the next file */
	} else {
		if (write_out(fd, b) < 0) {
			ret = -1;
			e = errno;
		}
		arena_busy = 0;
	}
	free(b);
	if (next_close(fd) < 0 && ret == 0) {
		ret = -1;
		e = errno;
	}
	errno = e;
	return ret;
}

/* A read-only file's bytes [off, off + n) into memory: the CHUNKs not yet
 * there, in calls of rpiece bytes (0: the rest of the file) from the first
 * one missing. */
static int bring_in(struct bfile *b, size_t off, size_t n)
{
	for (size_t c = off / CHUNK; c * CHUNK < off + n; c++) {
		if (b->rf->in[c / 8] & (1u << (c % 8)))
			continue;
		size_t at = c * CHUNK, len = b->size - at;
		if (rpiece && len > rpiece)
			len = rpiece;
		for (size_t got = 0; got < len;) {
			ssize_t r = next_pread(b->fd, b->mem + at + got, len - got, (off_t)(at + got));
			if (r < 0)
				return -1;
			if (r == 0) { /* the file shrank under us: zeros */
				memset(b->mem + at + got, 0, len - got);
				break;
			}
			got += (size_t)r;
		}
		for (size_t k = c; k * CHUNK < at + len; k++)
			b->rf->in[k / 8] |= (unsigned char)(1u << (k % 8));
	}
	return 0;
}

static ssize_t b_read(struct bfile *b, void *buf, size_t n, off_t off)
{
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)off >= b->size)
		return 0;
	if (n > b->size - (size_t)off)
		n = b->size - (size_t)off;
	if (b->rf && bring_in(b, (size_t)off, n) < 0)
		return -1;
	memcpy(buf, b->mem + off, n);
	return (ssize_t)n;
}

static ssize_t b_write(struct bfile *b, const void *buf, size_t n, off_t off)
{
	if (b->rf) {
		errno = EBADF;
		return -1;
	}
	if (off < 0 || (size_t)off > ARENA_MAX || n > ARENA_MAX - (size_t)off) {
		errno = off < 0 ? EINVAL : EFBIG;
		return -1;
	}
	if ((size_t)off > b->size) /* a hole: zeros, whatever the arena held */
		memset(b->mem + b->size, 0, (size_t)off - b->size);
	memcpy(b->mem + off, buf, n);
	if ((size_t)off + n > b->size)
		b->size = (size_t)off + n;
	return (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n)
{
	struct bfile *b = bf(fd);
	if (!b) {
		init();
		return next_read(fd, buf, n);
	}
	ssize_t r = b_read(b, buf, n, b->pos);
	if (r > 0)
		b->pos += r;
	return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	struct bfile *b = bf(fd);
	if (!b) {
		init();
		return next_write(fd, buf, n);
	}
	ssize_t r = b_write(b, buf, n, b->pos);
	if (r > 0)
		b->pos += r;
	return r;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct bfile *b = bf(fd);
	if (!b) {
		init();
		return next_pread(fd, buf, n, off);
	}
	return b_read(b, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct bfile *b = bf(fd);
	if (!b) {
		init();
		return next_pwrite(fd, buf, n, off);
	}
	return b_write(b, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return pwrite(fd, buf, n, off);
}

off_t lseek(int fd, off_t off, int whence)
{
	struct bfile *b = bf(fd);
	off_t base;
	if (!b) {
		init();
		return next_lseek(fd, off, whence);
	}
	switch (whence) {
	case SEEK_SET: base = 0; break;
	case SEEK_CUR: base = b->pos; break;
	case SEEK_END: base = (off_t)b->size; break;
	default: errno = EINVAL; return -1;
	}
	if (base + off < 0) {
		errno = EINVAL;
		return -1;
	}
	return b->pos = base + off;
}

off_t lseek64(int fd, off_t off, int whence)
{
	return lseek(fd, off, whence);
}

int fstat(int fd, struct stat *st)
{
	init();
	int r = next_fstat(fd, st);
	struct bfile *b = bf(fd);
	if (r == 0 && b)
		st->st_size = (off_t)b->size;
	return r;
}

int fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

int ftruncate(int fd, off_t len)
{
	struct bfile *b = bf(fd);
	if (!b) {
		init();
		return next_ftruncate(fd, len);
	}
	if (b->rf) {
		errno = EINVAL;
		return -1;
	}
	if (len < 0 || (size_t)len > ARENA_MAX) {
		errno = len < 0 ? EINVAL : EFBIG;
		return -1;
	}
	if ((size_t)len > b->size)
		memset(b->mem + b->size, 0, (size_t)len - b->size);
	b->size = (size_t)len;
	return 0;
}

int ftruncate64(int fd, off_t len)
{
	return ftruncate(fd, len);
}

/* fsync of a memory file: its bytes go out now, then the kernel's fsync. */
int fsync(int fd)
{
	struct bfile *b = bf(fd);
	init();
	if (b && !b->rf && write_out(fd, b) < 0)
		return -1;
	return next_fsync(fd);
}
