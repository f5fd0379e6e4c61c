/* ffio.h -- the direct API of ffio, the layered I/O runtime.
 *
 * For programs that want layers without preloading, in the spirit of
 * Cray's ffopen(3): open a file with a stack of layers given as a spec
 * ("cache:1m:64:4, uring:64") and use the returned descriptor with these
 * calls (or, when libffio is preloaded or linked ahead of libc, with the
 * ordinary POSIX calls).  Return conventions follow POSIX: -1 and errno.
 * See ffio(7) for the spec grammar and the layers.
 */
#ifndef FFIO_H
#define FFIO_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The names libffio.so exports; everything else in it is its own. */
#ifndef FFIO_API
#define FFIO_API __attribute__((visibility("default")))
#endif

/* Open path with the layers of spec (a stack without pattern, e.g.
 * "event.summary, cache:1m:64:4, sys").  spec NULL: use the FF_IO_OPTS
 * entry matching path, or a plain sys stack when none matches.  Returns a
 * descriptor or -1 (errno EINVAL for a malformed spec, with a message). */
FFIO_API int ffopen(const char *path, int flags, mode_t mode, const char *spec);
FFIO_API ssize_t ffread(int fd, void *buf, size_t n);
FFIO_API ssize_t ffwrite(int fd, const void *buf, size_t n);
FFIO_API ssize_t ffpread(int fd, void *buf, size_t n, off_t off);
FFIO_API ssize_t ffpwrite(int fd, const void *buf, size_t n, off_t off);
FFIO_API off_t ffseek(int fd, off_t off, int whence);
/* Push buffered writes to the file system (no kernel sync). */
FFIO_API int ffflush(int fd);
/* ffflush, the kernel's fsync, and drop clean cached data. */
FFIO_API int fffsync(int fd);
FFIO_API int ffclose(int fd);

/* Statistics of one layer of a file's stack. */
enum ffio_stat_op {
	FFIO_STAT_READ, FFIO_STAT_WRITE, FFIO_STAT_SYNC, FFIO_STAT_TRUNCATE,
	FFIO_STAT_SEEK, FFIO_STAT_OPEN, FFIO_STAT_CLOSE, FFIO_STAT_NOPS
};
struct ffio_stats {
	char layer[16];                    /* layer name */
	int position;                      /* 0 = top of the stack */
	uint64_t count[FFIO_STAT_NOPS];    /* calls (or requests issued, for bottoms) */
	uint64_t bytes[FFIO_STAT_NOPS];
	uint64_t nsec[FFIO_STAT_NOPS];     /* time spent in and below the layer */
	/* cache layers: */
	uint64_t hits, misses, readahead_used, readahead_wasted, evictions;
};
/* Fill up to max entries (one per layer that keeps statistics, top first);
 * returns the number filled, or -1 with errno EBADF when fd is not an ffio
 * file. */
FFIO_API int ffgetstats(int fd, struct ffio_stats *st, int max);

/* Is fd managed by ffio (1) or not (0)? */
FFIO_API int ffio_is_managed(int fd);

#ifdef __cplusplus
}
#endif
#endif
