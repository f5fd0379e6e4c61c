/* t/cache_model.c -- model-based random test of the cache layer: random
 * sequences of write/pwrite/read/pread/lseek/ftruncate/fsync/flush/dup/
 * close-reopen/size, runs of preads a stride apart (which the cache
 * follows) and loops of read-and-write-back over more blocks than the
 * cache holds (in which it evicts from the recent end), on several files through the direct API, checked byte
 * for byte against a shadow model after every step (reads compared; the
 * file's content read back with plain system calls after every flush point),
 * over a matrix of cache shapes and many seeds.
 *
 * Stacks: the arguments, else FFIO_MODEL_SPECS (separated by ';'), else the
 * built-in matrix.  FFIO_MODEL_SEEDS: seeds per stack (default 4);
 * FFIO_MODEL_STEPS: steps per seed (default 300); FFIO_SOAK_SECONDS: keep
 * running new seeds for that long (one TAP line per stack);
 * FFIO_MODEL_SCALE: files, offsets and the longest writes that many times
 * larger (default 1; at 16, writes reach 1.1 MB and flushed runs several
 * MiB, so that requests below are cut into pieces).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "tap.h"

#define NFILES 3
static size_t scale = 1;      /* FFIO_MODEL_SCALE */
#define MAXSIZE (scale * 256 * 1024) /* model capacity */
#define OFFRANGE (scale * 96 * 1024) /* where the writes go */
#define MAXLEN (scale * 80000)       /* the longest read or write */
#define MAXFD 3               /* descriptors per file (dup) */

static const char *const default_specs[] = {
	"cache:512:4:1",
	"cache.sieve:512:4:1",
	"cache:4k:1:0",
	"cache:1m:4:2",
	"cache.sieve:4k:8:2",
	"cache.wt:4k:4:1",
	"cache:1k:16:4",
	"cache.sieve:64k:2:1",
	"cache.direct:4k:8:2",
	"cache.direct.sieve:8k:3:1",
	"cache.shared:2k:6:2",
	"cache.shared.sieve:1k:5:3",
	NULL,
};

struct mfile {
	char path[256];
	int fd[MAXFD];
	int nfd;
	int append;
	off_t pos;
	size_t size;
	unsigned char *data;
};

static uint64_t rng;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

static char failure[512];
static int trace; /* FFIO_MODEL_TRACE: each step to stderr */
#define FAIL(...) (snprintf(failure, sizeof failure, __VA_ARGS__), -1)

static size_t rnd_len(void)
{
	switch (rnd(10)) {
	case 0:
		return 1 + rnd((unsigned)(scale * 70000));
	case 1:
	case 2:
		return 1 + rnd(9000);
	default:
		return 1 + rnd(300);
	}
}

static int open_file(struct mfile *m, const char *spec, int flags)
{
	int fd = ffopen(m->path, O_RDWR | flags | (m->append ? O_APPEND : 0), 0644, spec);
	if (fd < 0)
		return FAIL("ffopen %s: %s", m->path, strerror(errno));
	m->fd[0] = fd;
	m->nfd = 1;
	m->pos = 0;
	return 0;
}

/* The file as the system sees it equals the model. */
static int check_disk(struct mfile *m, const char *when)
{
	static unsigned char *buf;
	int fd = open(m->path, O_RDONLY);
	ssize_t n;
	if (!buf && !(buf = malloc(MAXSIZE + 1)))
		return FAIL("out of memory");
	if (fd < 0)
		return FAIL("open %s: %s", m->path, strerror(errno));
	n = pread(fd, buf, MAXSIZE + 1, 0);
	close(fd);
	if (n != (ssize_t)m->size)
		return FAIL("%s: file size %zd, model %zu", when, n, m->size);
	for (size_t i = 0; i < m->size; i++)
		if (buf[i] != m->data[i])
			return FAIL("%s: byte %zu is %u, model %u", when, i, buf[i], m->data[i]);
	return 0;
}

static void model_write(struct mfile *m, const unsigned char *src, size_t n, off_t off)
{
	if (off + n > m->size) {
		if ((size_t)off > m->size)
			memset(m->data + m->size, 0, (size_t)off - m->size);
		m->size = (size_t)off + n;
	}
	memcpy(m->data + off, src, n);
}

/* pread n bytes at off and compare with the model. */
static int check_pread(struct mfile *m, int fd, unsigned char *got, size_t n, off_t off)
{
	ssize_t r = ffpread(fd, got, n, off);
	if (trace)
		fprintf(stderr, "  pread %zu at %lld: %zd\n", n, (long long)off, r);
	size_t want = (size_t)off >= m->size ? 0 : (m->size - (size_t)off < n ? m->size - (size_t)off : n);
	if (r != (ssize_t)want)
		return FAIL("pread %zu at %lld: %zd, model %zu (%s)", n, (long long)off, r, want,
			    r < 0 ? strerror(errno) : "");
	if (want && memcmp(got, m->data + off, want) != 0)
		return FAIL("pread %zu at %lld: data differs", n, (long long)off);
	return 0;
}

/* Runs, as netCDF reads a tile: a few runs of sequential reads, a stride
 * apart, every read checked; now and then a write into the runs ahead or
 * the gaps between them, and a last read of a run a little longer. */
static int read_runs(struct mfile *m, int fd, unsigned char *buf, unsigned char *got)
{
	size_t len = rnd(3) ? 1 + rnd(300) : 1 + rnd(4000);
	int nreads = 2 + (int)rnd(3), nruns = 3 + (int)rnd(5);
	off_t stride = (off_t)(len * (size_t)nreads * (2 + rnd(4)) + rnd(100)), off = rnd(OFFRANGE);

	if (trace)
		fprintf(stderr, "  runs: %d of %d reads of %zu, stride %lld, from %lld\n", nruns, nreads, len,
			(long long)stride, (long long)off);
	for (int k = 0; k < nruns; k++) {
		for (int i = 0; i < nreads; i++) {
			size_t n = i == nreads - 1 && rnd(4) == 0 ? len + rnd((unsigned)len) : len;
			if (check_pread(m, fd, got, n, off + (off_t)k * stride + (off_t)(i * len)) < 0)
				return -1;
		}
		if (!m->append && rnd(4) == 0) {
			size_t n = 1 + rnd((unsigned)(2 * len));
			off_t w = off + (off_t)k * stride + (off_t)rnd((unsigned)(2 * stride));
			if ((size_t)w + n > OFFRANGE + MAXLEN)
				continue;
			for (size_t i = 0; i < n; i++)
				buf[i] = (unsigned char)rnd(256);
			if (ffpwrite(fd, buf, n, w) != (ssize_t)n)
				return FAIL("write %zu at %lld amid runs: %s", n, (long long)w, strerror(errno));
			model_write(m, buf, n, w);
			if (trace)
				fprintf(stderr, "  pwrite %zu at %lld\n", n, (long long)w);
		}
	}
	return 0;
}

/* Loops, as netCDF writes tile after tile: passes through the same
 * blocks a stride apart, more than the cache holds, each block read and
 * written back changed (the whole window), in the same order every pass,
 * so that the cache takes its victims from the recent end (loop_victim). */
static int write_loops(struct mfile *m, int fd, unsigned char *buf, unsigned char *got)
{
	off_t stride = (off_t)(500 + rnd(4000)), off = rnd(2000);
	size_t len = 1 + rnd(stride < 600 ? (unsigned)stride : 600);
	int blocks = (int)((OFFRANGE - (size_t)off) / (size_t)stride), passes = 3 + (int)rnd(3);

	if (m->append)
		return 0;
	if (trace)
		fprintf(stderr, "  loops: %d passes over %d blocks of %zu, stride %lld, from %lld\n", passes,
			blocks, len, (long long)stride, (long long)off);
	for (int k = 0; k < passes; k++) {
		for (int b = 0; b < blocks; b++) {
			off_t at = off + (off_t)b * stride;
			if (check_pread(m, fd, got, len, at) < 0)
				return -1;
			memcpy(buf, m->data + at, len); /* the window as it is, a few bytes changed */
			for (int i = 0; i < 4; i++)
				buf[rnd((unsigned)len)] = (unsigned char)rnd(256);
			if (ffpwrite(fd, buf, len, at) != (ssize_t)len)
				return FAIL("write %zu at %lld in a loop: %s", len, (long long)at, strerror(errno));
			model_write(m, buf, len, at);
		}
	}
	return 0;
}

static int step(struct mfile *files, const char *spec, int *opcount)
{
	static unsigned char *buf, *got;
	struct mfile *m = &files[rnd(NFILES)];
	int fd = m->fd[rnd((unsigned)m->nfd)];
	struct ffio_file *ff = ffio_fd_file(fd);
	unsigned op = rnd(100);
	size_t n;
	off_t off;
	ssize_t r;

	if ((!buf && !(buf = malloc(MAXLEN))) || (!got && !(got = malloc(MAXLEN))))
		return FAIL("out of memory");
	(*opcount)++;
	int seek_back = 0;
	if (m->append && m->size > MAXSIZE - MAXLEN)
		op = 80; /* the appended file has grown enough: truncate it */
	else if (m->pos > (off_t)(MAXSIZE - MAXLEN))
		op = 77, seek_back = 1; /* writes at the position walked far: seek back */
	if (trace)
		fprintf(stderr, "step %d: file %d fd %d op %u\n", *opcount, (int)(m - files), fd, op);
	if (!ff)
		return FAIL("fd %d not managed", fd);
	if (op < 30) { /* pwrite (write for O_APPEND files) */
		n = rnd_len();
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)rnd(256);
		if (m->append) {
			r = ffwrite(fd, buf, n);
			off = (off_t)m->size;
			m->pos = off + (off_t)n;
		} else {
			off = rnd(OFFRANGE);
			r = ffpwrite(fd, buf, n, off);
		}
		if (r != (ssize_t)n)
			return FAIL("write %zu at %lld: %zd (%s)", n, (long long)off, r, strerror(errno));
		model_write(m, buf, n, off);
		if (trace)
			fprintf(stderr, "  pwrite %zu at %lld\n", n, (long long)off);
	} else if (op < 40) { /* write at the position */
		n = rnd_len();
		memset(buf, (int)rnd(256), n);
		off = m->append ? (off_t)m->size : m->pos;
		r = ffwrite(fd, buf, n);
		if (r != (ssize_t)n)
			return FAIL("write %zu at pos %lld: %zd (%s)", n, (long long)off, r, strerror(errno));
		model_write(m, buf, n, off);
		m->pos = off + (off_t)n;
		if (trace)
			fprintf(stderr, "  write %zu at %lld\n", n, (long long)off);
	} else if (op < 65) { /* pread, or runs of them */
		if (rnd(5) == 0)
			return read_runs(m, fd, buf, got);
		if (rnd(12) == 0)
			return write_loops(m, fd, buf, got);
		n = rnd_len();
		off = rnd(OFFRANGE + 10000);
		if (check_pread(m, fd, got, n, off) < 0)
			return -1;
	} else if (op < 72) { /* read at the position */
		n = rnd_len();
		off = m->pos;
		r = ffread(fd, got, n);
		if (trace)
			fprintf(stderr, "  read %zu at %lld: %zd\n", n, (long long)off, r);
		size_t want = (size_t)off >= m->size ? 0 : (m->size - (size_t)off < n ? m->size - (size_t)off : n);
		if (r != (ssize_t)want)
			return FAIL("read %zu at %lld: %zd, model %zu", n, (long long)off, r, want);
		if (want && memcmp(got, m->data + off, want) != 0)
			return FAIL("read %zu at %lld: data differs", n, (long long)off);
		m->pos += (off_t)want;
	} else if (op < 78) { /* lseek */
		int how = seek_back ? SEEK_SET : (int)rnd(3);
		off_t arg = how == SEEK_SET ? (off_t)rnd(OFFRANGE) : (off_t)rnd(2000) - 1000;
		off_t base = how == SEEK_SET ? 0 : how == SEEK_CUR ? m->pos : (off_t)m->size;
		off_t want = base + arg < 0 ? -1 : base + arg;
		off = ffseek(fd, arg, how);
		if (off != want)
			return FAIL("lseek %lld whence %d: %lld, model %lld", (long long)arg, how, (long long)off,
				    (long long)want);
		if (want >= 0)
			m->pos = want;
	} else if (op < 83) { /* ftruncate */
		off_t len = rnd(4) == 0 ? (off_t)m->size + rnd(5000) : (off_t)rnd(OFFRANGE);
		if ((size_t)len > MAXSIZE - MAXLEN)
			len = rnd(OFFRANGE);
		int e = ffio_file_truncate(ff, len);
		if (trace)
			fprintf(stderr, "  truncate %lld (size %zu)\n", (long long)len, m->size);
		if (e < 0)
			return FAIL("ftruncate %lld: %s", (long long)len, strerror(-e));
		if ((size_t)len > m->size)
			memset(m->data + m->size, 0, (size_t)len - m->size);
		m->size = (size_t)len;
	} else if (op < 88) { /* size (fstat) */
		off_t sz = -1;
		int e = ffio_file_size(ff, &sz);
		if (e < 0 || sz != (off_t)m->size)
			return FAIL("size: %lld (%d), model %zu", (long long)sz, e, m->size);
	} else if (op < 91) { /* fsync: the file holds the model */
		if (fffsync(fd) < 0)
			return FAIL("fsync: %s", strerror(errno));
		return check_disk(m, "after fsync");
	} else if (op < 93) { /* flush */
		if (ffflush(fd) < 0)
			return FAIL("ffflush: %s", strerror(errno));
		return check_disk(m, "after ffflush");
	} else if (op < 96) { /* dup, or close one of the dups */
		if (m->nfd < MAXFD && rnd(2)) {
			int nfd = dup(fd);
			/* dup is interposed when libffio comes before libc */
			if (nfd < 0 || (!ffio_is_managed(nfd) && ffio_fd_dup(fd, nfd) < 0))
				return FAIL("dup: %s", strerror(errno));
			m->fd[m->nfd++] = nfd;
		} else if (m->nfd > 1) {
			int i = (int)rnd((unsigned)m->nfd);
			if (ffclose(m->fd[i]) < 0)
				return FAIL("close of a dup: %s", strerror(errno));
			m->fd[i] = m->fd[--m->nfd];
		}
	} else { /* close every descriptor, check, reopen */
		for (int i = 0; i < m->nfd; i++)
			if (ffclose(m->fd[i]) < 0)
				return FAIL("close: %s", strerror(errno));
		m->nfd = 0;
		if (check_disk(m, "after close") < 0)
			return -1;
		return open_file(m, spec, 0);
	}
	return 0;
}

/* One seed over one stack: 0, or -1 with failure set. */
static int run(const char *spec, uint64_t seed, int steps, const char *dir)
{
	struct mfile files[NFILES];
	int ops = 0, err = 0;

	rng = seed * 2654435761u + 88172645463325252ull;
	memset(files, 0, sizeof files);
	for (int i = 0; i < NFILES; i++) {
		struct mfile *m = &files[i];
		snprintf(m->path, sizeof m->path, "%s/f%d", dir, i);
		m->append = i == NFILES - 1;
		m->data = calloc(1, MAXSIZE);
		if (!m->data)
			return FAIL("out of memory");
		if (open_file(m, spec, O_CREAT | O_TRUNC) < 0)
			return -1;
	}
	for (int s = 0; s < steps && err == 0; s++)
		err = step(files, spec, &ops);
	for (int i = 0; i < NFILES; i++) {
		struct mfile *m = &files[i];
		for (int k = 0; k < m->nfd; k++)
			if (ffclose(m->fd[k]) < 0 && err == 0)
				err = FAIL("final close: %s", strerror(errno));
		if (err == 0)
			err = check_disk(m, "at the end");
		free(m->data);
		unlink(m->path);
	}
	if (err < 0) {
		size_t len = strlen(failure);
		snprintf(failure + len, sizeof failure - len, " (step %d)", ops);
	}
	return err;
}

int main(int argc, char **argv)
{
	const char *specs[64];
	int nspecs = 0;
	char *envspecs = getenv("FFIO_MODEL_SPECS") ? strdup(getenv("FFIO_MODEL_SPECS")) : NULL;
	int seeds = getenv("FFIO_MODEL_SEEDS") ? atoi(getenv("FFIO_MODEL_SEEDS")) : 4;
	int steps = getenv("FFIO_MODEL_STEPS") ? atoi(getenv("FFIO_MODEL_STEPS")) : 300;
	int soak = getenv("FFIO_SOAK_SECONDS") ? atoi(getenv("FFIO_SOAK_SECONDS")) : 0;
	char dir[] = "/tmp/ffio-cache-model-XXXXXX";

	trace = getenv("FFIO_MODEL_TRACE") != NULL;
	if (getenv("FFIO_MODEL_SCALE") && atoi(getenv("FFIO_MODEL_SCALE")) > 0)
		scale = (size_t)atoi(getenv("FFIO_MODEL_SCALE"));

	if (argc > 1) {
		for (int i = 1; i < argc && nspecs < 64; i++)
			specs[nspecs++] = argv[i];
	} else if (envspecs) {
		for (char *s = strtok(envspecs, ";"); s && nspecs < 64; s = strtok(NULL, ";"))
			specs[nspecs++] = s;
	} else {
		for (int i = 0; default_specs[i]; i++)
			specs[nspecs++] = default_specs[i];
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	tap_plan(nspecs);
	for (int i = 0; i < nspecs; i++) {
		time_t end = time(NULL) + soak;
		int done = 0, err = 0;
		uint64_t seed = getenv("FFIO_MODEL_FIRST_SEED") ? strtoull(getenv("FFIO_MODEL_FIRST_SEED"), NULL, 10) : 1;
		while (err == 0 && (done < seeds || (soak > 0 && time(NULL) < end))) {
			err = run(specs[i], seed, steps, dir);
			done++;
			if (err == 0)
				seed++;
		}
		tap_ok(err == 0, "%s: %d seeds of %d steps", specs[i], done, steps);
		if (err)
			tap_diag("seed %llu: %s", (unsigned long long)seed, failure);
	}
	rmdir(dir);
	free(envspecs);
	return tap_done();
}
