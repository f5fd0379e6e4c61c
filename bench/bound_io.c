/* bench/bound_io.c -- a ceiling for the netCDF benchmarks, not a layer:
 * preloaded ahead of libffio, it takes the files whose name ends in
 * $FFIO_BOUND_SUFFIX and serves netCDF's posixio calls on them with no
 * system call and no bookkeeping, to show how fast any user-space cache
 * could make the program on this machine.
 *   - A file created or truncated at open lives in memory touched before
 *     main ($FFIO_BOUND_MB MiB of it, 64 by default; beyond that memory is
 *     touched on demand); reads, writes and lseek are memcpy and arithmetic.
 *     With FFIO_BOUND_TOUCH=0 that memory is only marked for huge pages,
 *     not touched: the ceiling of a cache that, like any cache in a new
 *     process, first touches its memory while the program runs.
 *     At close its bytes go to the kernel in 512 KiB pwrite calls, as a
 *     cache over sys flushes them, so the output is a real file, compared
 *     byte for byte with the raw run's by the benchmark scripts.
 *   - An existing file opened read-only is mapped (the page cache itself,
 *     no copy into a cache): a read is one memcpy from the mapping.
 * Only what netCDF's posixio does is handled: open, lseek, read, write,
 * pread, pwrite, fstat, ftruncate, fsync and close on such a descriptor
 * (one memory file open at a time; dup and fork are not followed).  Other
 * files and calls go on to the next library (libffio, or libc). */
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
#define PIECE ((size_t)512 << 10)   /* write-out call size */

struct bfile {
	char *mem;    /* arena (memory file) or mapping (mapped file) */
	size_t size;  /* the file's size as the program sees it */
	off_t pos;    /* the descriptor's offset */
	int mapped;   /* mapped read-only file, else memory file */
};

static struct bfile *fdmap[MAXFD];
static const char *suffix;
static char *arena;
static int arena_busy;

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
	suffix = getenv("FFIO_BOUND_SUFFIX");
	if (!suffix || !*suffix)
		suffix = NULL;
}

/* The arena: reserved once, its first FFIO_BOUND_MB MiB touched now (unless
 * FFIO_BOUND_TOUCH=0), so that the timed runs do not pay for memory touched
 * the first time. */
__attribute__((constructor)) static void bound_init(void)
{
	init();
	if (!suffix)
		return;
	arena = mmap(NULL, ARENA_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED) {
		perror("bound_io: mmap");
		abort();
	}
	const char *mb = getenv("FFIO_BOUND_MB");
	size_t touch = (size_t)(mb ? strtoul(mb, NULL, 0) : 64) << 20;
	if (touch > ARENA_MAX)
		touch = ARENA_MAX;
	(void)madvise(arena, touch, MADV_HUGEPAGE);
	const char *t = getenv("FFIO_BOUND_TOUCH");
	if (!t || strcmp(t, "0") != 0)
		memset(arena, 0, touch);
}

static int matches(const char *path)
{
	size_t n, s;
	if (!suffix || !path)
		return 0;
	n = strlen(path);
	s = strlen(suffix);
	return n >= s && strcmp(path + n - s, suffix) == 0;
}

static struct bfile *bf(int fd)
{
	return fd >= 0 && fd < MAXFD ? fdmap[fd] : NULL;
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
	if (!(b = calloc(1, sizeof *b)))
		goto fail;
	if (rdonly) {
		b->mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (b->mem == MAP_FAILED) {
			free(b);
			goto fail;
		}
		b->mapped = 1;
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
		size_t n = b->size - at < PIECE ? b->size - at : PIECE;
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
	if (b->mapped) {
		munmap(b->mem, b->size);
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
	memcpy(buf, b->mem + off, n);
	return (ssize_t)n;
}

static ssize_t b_write(struct bfile *b, const void *buf, size_t n, off_t off)
{
	if (b->mapped) {
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
	if (b->mapped) {
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
	if (b && !b->mapped && write_out(fd, b) < 0)
		return -1;
	return next_fsync(fd);
}
