/* t/cache_focus.c -- focused tests of the cache layer: write-behind and the
 * flush points (ffflush, fsync, close), byte-exact write-behind (a
 * concurrent writer's bytes between our records survive), .sieve turning a
 * strided run into one request (also from reused page buffers, whose
 * gaps past the end are written as zeros without being cleared in memory),
 * .sieve reading a page of existing data only when its extents are dense,
 * loops over more pages than the cache holds keeping pages cached, a file
 * read once touching only the cache's first pages of memory (more from
 * the device when the memory is warm: spare chunks of closed caches), a file
 * written from start to end reusing the buffers of pages it completed,
 * O_APPEND at the logical end, truncation
 * shrinking and growing, threads on one descriptor and on many, and fork
 * (the child never writes the parent's data). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "ffio.h"
#include "fake_clock.h"
#include "kernel_view.h"
#include "tap.h"

static char dir[] = "/tmp/ffio-cache-focus-XXXXXX";
static char path[300];

/* Bytes of the file as the system sees it (plain calls). */
static ssize_t disk(void *buf, size_t n, off_t off)
{
	return kernel_pread(path, buf, n, off);
}

/* Writes reaching the bottom layer (sys) of fd's stack. */
static long long below_writes(int fd)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	return n > 0 ? (long long)st[n - 1].count[FFIO_STAT_WRITE] : -1;
}

/* Reads reaching the bottom layer (sys) of fd's stack. */
static long long below_reads(int fd)
{
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	return n > 0 ? (long long)st[n - 1].count[FFIO_STAT_READ] : -1;
}

static void test_flush_points(void)
{
	char buf[16];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:4k:4:1");

	tap_ok(fd >= 0, "open");
	tap_is(ffwrite(fd, "hello", 5), 5, "write into the cache");
	tap_is(disk(buf, sizeof buf, 0), 0, "write-behind: nothing reached the file yet");
	tap_is(ffseek(fd, 0, SEEK_END), 5, "SEEK_END sees the cached size");
	tap_is(ffflush(fd), 0, "ffflush");
	tap_is(disk(buf, sizeof buf, 0), 5, "after ffflush the file has the data");
	tap_ok(memcmp(buf, "hello", 5) == 0, "bytes after ffflush");
	tap_is(ffpwrite(fd, "HE", 2, 0), 2, "pwrite");
	tap_is(fffsync(fd), 0, "fsync");
	tap_is(disk(buf, sizeof buf, 0), 5, "after fsync");
	tap_ok(memcmp(buf, "HEllo", 5) == 0, "bytes after fsync");
	tap_is(ffpwrite(fd, "!", 1, 5), 1, "pwrite past the end");
	tap_is(ffclose(fd), 0, "close");
	tap_is(disk(buf, sizeof buf, 0), 6, "after close");
	tap_ok(memcmp(buf, "HEllo!", 6) == 0, "bytes after close");
}

/* Without .sieve only the application's bytes are written: a concurrent
 * writer's bytes between our records survive. */
static void test_byte_exact(void)
{
	enum { SPAN = 65536, REC = 16, STRIDE = 256 };
	static char buf[SPAN];
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), fd, ok = 1;

	memset(buf, 'A', SPAN);
	tap_is(pwrite(raw, buf, SPAN, 0), SPAN, "file filled with A");
	fd = ffopen(path, O_WRONLY, 0, "cache:4k:4:0");
	for (int i = 0; i < SPAN / STRIDE; i++)
		ok &= ffpwrite(fd, "rrrrrrrrrrrrrrrr", REC, (off_t)i * STRIDE) == REC;
	tap_ok(ok, "strided records written through the cache");
	/* another writer changes the gaps while our records are cached */
	for (int i = 0; i < SPAN / STRIDE; i++)
		ok &= pwrite(raw, "CCCCCCCCCCCCCCCC", REC, (off_t)i * STRIDE + 100) == REC;
	tap_ok(ok, "the other writer's bytes");
	tap_is(ffclose(fd), 0, "close flushes");
	close(raw);
	tap_is(disk(buf, SPAN, 0), SPAN, "size unchanged");
	int good = 1;
	for (int i = 0; i < SPAN; i++) {
		int k = i % STRIDE;
		char want = k < REC ? 'r' : (k >= 100 && k < 100 + REC) ? 'C' : 'A';
		if (buf[i] != want) {
			tap_diag("byte %d is %c, expected %c", i, buf[i], want);
			good = 0;
			break;
		}
	}
	tap_ok(good, "ours written, the other writer's bytes and the untouched bytes kept");
}

static void test_sieve(void)
{
	enum { REC = 16, STRIDE = 256, N = 256 };
	static char buf[N * STRIDE];
	int fd;
	long long plain;

	fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:1m:4:0");
	for (int i = 0; i < N; i++)
		ffpwrite(fd, "ssssssssssssssss", REC, (off_t)i * STRIDE);
	ffflush(fd);
	plain = below_writes(fd);
	tap_is(plain, N, "without .sieve: one write per record (holes stay holes)");
	ffclose(fd);

	fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache.sieve:1m:4:0");
	for (int i = 0; i < N; i++)
		ffpwrite(fd, "ssssssssssssssss", REC, (off_t)i * STRIDE);
	ffflush(fd);
	tap_is(below_writes(fd), 1, "with .sieve: the strided run is one write");
	tap_is(ffclose(fd), 0, "close");
	tap_is(disk(buf, sizeof buf, 0), (N - 1) * STRIDE + REC, "size is the end of the last record");
	int good = 1;
	for (int i = 0; i < (N - 1) * STRIDE + REC; i++)
		good &= buf[i] == (i % STRIDE < REC ? 's' : 0);
	tap_ok(good, "records, zeros between");
}

/* .sieve over existing data: a page with a few long extents (netCDF's
 * windows) is written extent by extent, never read; a page of dense
 * records is read once and written in one piece.  Either way the bytes
 * between the extents stay the file's. */
static void test_sieve_existing(int dense)
{
	enum { PAGE = 1 << 20, REC = 16, STRIDE = 4096 };
	static char want[PAGE], got[PAGE];
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), fd, ok = 1, n = 0;
	const char *what = dense ? "dense records" : "two long extents";

	for (int i = 0; i < PAGE; i++)
		want[i] = (char)('A' + i % 23);
	tap_is(pwrite(raw, want, PAGE, 0), PAGE, "%s: a page of existing data", what);
	close(raw);
	fd = ffopen(path, O_RDWR, 0, "cache.sieve:1m:4:0");
	if (dense) {
		for (off_t at = 0; at < PAGE && ok; at += STRIDE, n++) {
			ok = ffpwrite(fd, "dddddddddddddddd", REC, at) == REC;
			memset(want + at, 'd', REC);
		}
	} else {
		static char ext[200000];
		memset(ext, 'w', sizeof ext);
		ok = ffpwrite(fd, ext, sizeof ext, 1000) == (ssize_t)sizeof ext &&
		     ffpwrite(fd, ext, sizeof ext, 500000) == (ssize_t)sizeof ext;
		memset(want + 1000, 'w', sizeof ext);
		memset(want + 500000, 'w', sizeof ext);
	}
	tap_ok(ok, "%s written", what);
	tap_is(ffflush(fd), 0, "%s: flush", what);
	tap_is(below_reads(fd), dense ? 1 : 0, "%s: the page is read %s", what, dense ? "once" : "never");
	tap_is(below_writes(fd), dense ? 1 : 2, "%s: %s", what, dense ? "one write" : "one write per extent");
	tap_is(ffclose(fd), 0, "close");
	tap_is(disk(got, PAGE, 0), PAGE, "%s: size unchanged", what);
	tap_ok(memcmp(got, want, PAGE) == 0, "%s: the extents written, the file's bytes between", what);
}

/* Passes through 64 pages in the same order with a cache of 16, each page
 * read and written back changed (as netCDF writes tile after tile): under
 * LRU every page is evicted just before it comes round again, 64 loads a
 * pass.  Once the loop is seen (the second pass), victims come from the
 * recent end and most of the pages at the start of the loop stay. */
static void test_loops(void)
{
	enum { PAGE = 4096, NPG = 64, LEN = 100, PASSES = 5 };
	static char want[NPG * PAGE], got[NPG * PAGE];
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), fd, ok = 1;
	long long loads[PASSES];

	for (int i = 0; i < NPG * PAGE; i++)
		want[i] = (char)('a' + i % 26);
	tap_is(pwrite(raw, want, sizeof want, 0), (ssize_t)sizeof want, "loops: 64 pages of existing data");
	close(raw);
	fd = ffopen(path, O_RDWR, 0, "cache:4k:16:0");
	for (int k = 0; k < PASSES; k++) {
		long long before = below_reads(fd);
		for (int p = 0; p < NPG && ok; p++) {
			char win[LEN];
			off_t at = (off_t)p * PAGE + 8;
			ok = ffpread(fd, win, LEN, at) == LEN && memcmp(win, want + at, LEN) == 0;
			win[k] = (char)('A' + k);
			want[at + k] = win[k];
			ok = ok && ffpwrite(fd, win, LEN, at) == LEN;
		}
		loads[k] = below_reads(fd) - before;
	}
	tap_ok(ok, "loops: every window read back as written, %d passes", PASSES);
	tap_is(loads[0], NPG, "loops: the first pass loads every page");
	int kept = 1;
	for (int k = 2; k < PASSES; k++) {
		if (loads[k] > NPG - 12) {
			tap_diag("pass %d loaded %lld pages", k, loads[k]);
			kept = 0;
		}
	}
	tap_ok(kept, "loops: from the third pass on, at least 12 of the 16 pages are found again");
	tap_is(ffclose(fd), 0, "close");
	tap_is(disk(got, sizeof got, 0), (ssize_t)sizeof got, "loops: size unchanged");
	tap_ok(memcmp(got, want, sizeof want) == 0, "loops: the file holds every change");
}

/* Resident memory of the process, in bytes. */
static long long resident(void)
{
	long long pages = -1, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%lld %lld", &pages, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

/* A file read once, 32 MiB through a cache of 32 pages of 1 MiB: the cache
 * reuses its first pages (2, and the pages read ahead) instead of touching
 * 32 MiB of fresh memory.  Read again, its pages come back and the cache
 * takes more; every byte is right either way. */
static void test_grow(void)
{
	enum { MIB = 1 << 20, NPG = 32, CHUNK = 65536 };
	static char buf[CHUNK], want[CHUNK];
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), fd, ok = 1;

	for (int i = 0; i < NPG * MIB / CHUNK && ok; i++) {
		memset(buf, 'a' + i % 26, CHUNK);
		ok = pwrite(raw, buf, CHUNK, (off_t)i * CHUNK) == CHUNK;
	}
	close(raw);
	tap_ok(ok, "grow: a file of 32 MiB");
	fd = ffopen(path, O_RDONLY, 0, "cache:1m:32:2");
	long long before = resident();
	for (int pass = 0; pass < 3 && ok; pass++) {
		for (int i = 0; i < NPG * MIB / CHUNK && ok; i++) {
			memset(want, 'a' + i % 26, CHUNK);
			ok = ffpread(fd, buf, CHUNK, (off_t)i * CHUNK) == CHUNK && memcmp(buf, want, CHUNK) == 0;
		}
		if (pass == 0) {
			long long grew = resident() - before;
			tap_ok(before > 0 && grew < 16LL * MIB, "grow: read once, %lld KiB more resident (under 16 MiB)",
			       grew >> 10);
		}
	}
	tap_ok(ok, "grow: three passes read back exactly");
	tap_is(ffclose(fd), 0, "close");
}

/* In a child, with no spare chunks: (spares) first 4 chunks touched and
 * kept as spares (no cache's timing decides how many); then 8 pages of the file
 * read twice through cache:1m:16:0, from the device (a delay layer
 * below: every load slow) or from memory (ffio's clock made fast, so that
 * no load looks slow by chance).  Its evictions and reads below, through
 * the pipe. */
static void grow_warm_child(int spares, int device, int out)
{
	enum { MIB = 1 << 20 };
	static char buf[4096];
	long long res[2] = {-1, -1};
	int ok = 1;

	for (int fresh = 0; !fresh;) { /* none left from the tests before (held, never given back) */
		struct ffio_chunk *k = ffio_chunk_get(&fresh);
		if (!k)
			_exit(1);
	}
	if (spares) { /* 4 chunks (8 pages) touched and kept as spares, as a closed cache leaves them */
		struct ffio_chunk *k[4];
		for (int i = 0; i < 4 && ok; i++) {
			int fresh;
			ok = (k[i] = ffio_chunk_get(&fresh)) != NULL;
			if (ok)
				memset(k[i]->mem, 1, FFIO_HUGE_CHUNK);
		}
		for (int i = 0; i < 4 && ok; i++)
			ffio_chunk_put(k[i]);
	}
	fake_clock = !device;
	int fd = ffopen(path, O_RDONLY, 0, device ? "cache:1m:16:0, delay:1ms:0, sys" : "cache:1m:16:0, sys");
	for (int pass = 0; pass < 2 && fd >= 0 && ok; pass++)
		for (int i = 0; i < 8 && ok; i++)
			ok = ffpread(fd, buf, sizeof buf, (off_t)i * MIB) == (ssize_t)sizeof buf && buf[0] == 'a' + i;
	struct ffio_stats st[8];
	int n = fd >= 0 ? ffgetstats(fd, st, 8) : -1;
	if (ok && n > 1)
		res[0] = (long long)st[0].evictions, res[1] = (long long)st[n - 1].count[FFIO_STAT_READ];
	ok = write(out, res, sizeof res) == (ssize_t)sizeof res;
	_exit(ok ? 0 : 1);
}

/* A file read through a cache that starts with 2 pages (test_grow), the
 * first pass evicting clean pages the second wants again.  From the
 * device, a new page whose memory comes from a spare chunk of a closed
 * cache (touched before) is taken instead of a clean page reused: 8 pages
 * read twice are 8 reads below and no eviction.  Without spares (fresh
 * memory), and from memory (a reused page is warm in the processor's
 * caches too, a load cheap), clean pages are reused and read again. */
static void test_grow_warm(void)
{
	enum { MIB = 1 << 20 };
	static char page[MIB];
	static const char *const what[] = {
		"from the device, in a new process (no spare chunk)",
		"from the device, with spare chunks",
		"from memory, with spare chunks",
	};
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), ok = raw >= 0;
	for (int i = 0; i < 8 && ok; i++) {
		memset(page, 'a' + i, MIB);
		ok = pwrite(raw, page, MIB, (off_t)i * MIB) == MIB;
	}
	if (raw >= 0)
		close(raw);
	tap_ok(ok, "grow warm: a file of 8 MiB");
	for (int c = 0; c < 3; c++) {
		long long res[2] = {-1, -1};
		int p[2], st = -1;
		if (pipe(p) < 0) {
			tap_ok(0, "grow warm: pipe: %s", strerror(errno));
			continue;
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			grow_warm_child(c > 0, c < 2, p[1]);
		}
		close(p[1]);
		ok = pid > 0 && read(p[0], res, sizeof res) == (ssize_t)sizeof res;
		close(p[0]);
		ok &= pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		int kept = c == 1;
		tap_ok(ok && (kept ? res[0] == 0 && res[1] == 8 : res[0] > 0 && res[1] > 8),
		       "grow warm: %s, 8 pages read twice: %lld evictions, %lld reads below (%s)", what[c], res[0],
		       res[1], kept ? "none, 8" : "some, more than 8");
	}
}

/* A file written from start to end, 8 MiB in 64 KiB pieces through a
 * cache of 64 pages of 1 MiB over sys: each page the program completed
 * goes below as one 1 MiB write when the cache wants a page, and its
 * buffer is reused (the cache does not fill 8 MiB of memory); a page
 * still being written stays.  The file is exact at close. */
static void test_write_reuse(void)
{
	enum { MIB = 1 << 20, NPG = 8, PIECE = 65536 };
	static char piece[PIECE], got[PIECE];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:1m:64:0");
	int ok = fd >= 0;

	for (int i = 0; i < NPG * MIB / PIECE && ok; i++) {
		memset(piece, 'a' + i % 26, PIECE);
		ok = ffwrite(fd, piece, PIECE) == PIECE;
	}
	tap_ok(ok, "write reuse: 8 MiB written in 64 KiB pieces");
	struct ffio_stats st[8];
	int n = ffgetstats(fd, st, 8);
	/* two pages held (the one being written and one spare): the six
	 * completed before them went below, one request each */
	tap_ok(n > 0 && st[n - 1].count[FFIO_STAT_WRITE] == 6 && st[n - 1].bytes[FFIO_STAT_WRITE] == 6ULL * MIB,
	       "write reuse: 6 completed pages went below as 6 writes of 1 MiB (%llu, %llu bytes)",
	       n > 0 ? (unsigned long long)st[n - 1].count[FFIO_STAT_WRITE] : 0ULL,
	       n > 0 ? (unsigned long long)st[n - 1].bytes[FFIO_STAT_WRITE] : 0ULL);
	tap_is(ffclose(fd), 0, "close");
	for (int i = 0; i < NPG * MIB / PIECE && ok; i++) {
		memset(piece, 'a' + i % 26, PIECE);
		ok = disk(got, PIECE, (off_t)i * PIECE) == PIECE && memcmp(got, piece, PIECE) == 0;
	}
	tap_ok(ok, "write reuse: the file holds every byte");
}

/* .diag says how many pages the cache held at most: the writer above, in
 * a child logging to a file, held 2 of its 64 pages. */
static void test_memory_line(void)
{
	enum { MIB = 1 << 20, PIECE = 65536 };
	char log[320], text[4096];
	snprintf(log, sizeof log, "%s/diag.log", dir);
	pid_t pid = fork();
	if (pid == 0) {
		static char piece[PIECE];
		setenv("FF_IO_LOGFILE", log, 1);
		int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache.diag:1m:64:0");
		for (int i = 0; fd >= 0 && i < 8 * MIB / PIECE; i++)
			if (ffwrite(fd, piece, PIECE) != PIECE)
				_exit(1);
		_exit(fd >= 0 && ffclose(fd) == 0 ? 0 : 1);
	}
	int st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "memory line: a child wrote 8 MiB with .diag");
	FILE *f = fopen(log, "r");
	size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	tap_ok(strstr(text, "memory: at most 2 of 64 pages held (2048 KiB of page buffers)") != NULL,
	       "memory line: .diag reports 2 of 64 pages held");
	unlink(log);
}

/* .sieve over a cache much smaller than the span, so that page buffers are
 * reused: a reused page past the end of the file below is not cleared;
 * its gaps go below as zeros (records at least 2 KiB apart), or it is
 * cleared as the records come (denser).  The file first holds OLD bytes of 'A' (the
 * gaps there keep them), and a read of a gap before any flush sees the
 * right bytes. */
static void test_sieve_reused(int stride)
{
	enum { PAGE = 65536, REC = 16, SPAN = 16 * PAGE, OLD = 100000 };
	static char want[SPAN], got[SPAN];
	int raw = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), fd, ok = 1;

	memset(want, 'A', OLD);
	memset(want + OLD, 0, SPAN - OLD);
	tap_is(pwrite(raw, want, OLD, 0), OLD, "file holds %d bytes of A", OLD);
	close(raw);
	fd = ffopen(path, O_RDWR, 0, "cache.sieve:64k:2:0");
	/* dirty the first three pages past the end, leaving their gaps */
	for (off_t at = 4 * PAGE; at < 7 * PAGE && ok; at += stride)
		ok = ffpwrite(fd, "gggggggggggggggg", REC, at) == REC;
	for (off_t at = 4 * PAGE; at < 7 * PAGE; at += stride)
		memcpy(want + at, "gggggggggggggggg", REC);
	/* the last of them is cached: a read across its records and gaps */
	ok = ok && ffpread(fd, got, 3 * stride, 6 * PAGE + 8) == 3 * stride &&
	     memcmp(got, want + 6 * PAGE + 8, 3 * stride) == 0;
	tap_ok(ok, "stride %d: a read of a page past the end sees records and zeros", stride);
	for (int i = 0; i < SPAN / stride && ok; i++) {
		char rec[REC];
		memset(rec, 'a' + i % 26, REC);
		memcpy(want + (size_t)i * stride, rec, REC);
		ok = ffpwrite(fd, rec, REC, (off_t)i * stride) == REC;
	}
	tap_ok(ok, "stride %d: %d records over 16 pages through a cache of 2", stride, SPAN / stride);
	/* two pages cached: one write per page evicted, 1 in the first pass
	 * (page 4, for page 6), 16 in the second (pages 5 and 6, then 0..13) */
	tap_is(below_writes(fd), 17, "one write per page evicted");
	tap_is(ffclose(fd), 0, "close");
	size_t end = SPAN - stride + REC;
	tap_is(disk(got, SPAN, 0), (ssize_t)end, "size is the end of the last record");
	tap_ok(memcmp(got, want, end) == 0, "stride %d: records; A below the old end; zeros past it", stride);

	/* shrink, then write past the new end into the buffers that held the
	 * cut pages: the file gets zeros there, not the old bytes */
	fd = ffopen(path, O_RDWR, 0, "cache.sieve:64k:2:0");
	/* the cache's two buffers hold the last two pages, records and all */
	tap_is(ffpread(fd, got, 2 * PAGE, SPAN - 2 * PAGE), (ssize_t)(end - (SPAN - 2 * PAGE)),
	       "read the last two pages");
	tap_is(ffio_file_truncate(ffio_fd_file(fd), 2 * PAGE), 0, "truncate to two pages");
	memset(want + 2 * PAGE, 0, SPAN - 2 * PAGE);
	for (off_t at = 3 * PAGE; at < SPAN && ok; at += 4 * stride) {
		ok = ffpwrite(fd, "tttttttttttttttt", REC, at + 5) == REC;
		memcpy(want + at + 5, "tttttttttttttttt", REC);
	}
	tap_ok(ok, "records past the new end");
	tap_is(ffclose(fd), 0, "close");
	end = (size_t)(SPAN - 4 * stride) + 5 + REC;
	tap_is(disk(got, SPAN, 0), (ssize_t)end, "size is the end of the last record");
	tap_ok(memcmp(got, want, end) == 0, "stride %d: zeros where the truncated bytes were", stride);
}

static void test_append_truncate(void)
{
	char buf[64];
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644, "cache:16:2:0");
	struct ffio_file *f = ffio_fd_file(fd);
	off_t sz = -1;

	tap_ok(f != NULL, "managed");
	tap_is(ffwrite(fd, "0123456789", 10), 10, "append");
	tap_is(ffseek(fd, 0, SEEK_SET), 0, "seek to 0");
	tap_is(ffwrite(fd, "abcdefghij", 10), 10, "append again (position ignored)");
	tap_is(ffseek(fd, 0, SEEK_CUR), 20, "position at the logical end");
	tap_is(ffpread(fd, buf, 64, 0), 20, "read-your-writes");
	tap_ok(memcmp(buf, "0123456789abcdefghij", 20) == 0, "bytes");
	tap_is(ffio_file_truncate(f, 5), 0, "truncate to 5");
	tap_is(ffio_file_truncate(f, 12), 0, "grow to 12");
	tap_is(ffio_file_size(f, &sz), 0, "size");
	tap_is(sz, 12, "size is 12");
	tap_is(ffpread(fd, buf, 64, 0), 12, "read after truncations");
	tap_ok(memcmp(buf, "01234\0\0\0\0\0\0\0", 12) == 0, "cut bytes read as zeros");
	tap_is(ffwrite(fd, "Z", 1), 1, "append after truncate");
	tap_is(ffclose(fd), 0, "close");
	tap_is(disk(buf, 64, 0), 13, "file size");
	tap_ok(memcmp(buf, "01234\0\0\0\0\0\0\0Z", 13) == 0, "file bytes");
}

enum { THREADS = 4, RECS = 2000, TREC = 24 };
static int shared_fd;
static int many_fd[THREADS];

static void *writer(void *arg)
{
	long t = (long)arg;
	int fd = shared_fd >= 0 ? shared_fd : many_fd[t];
	char rec[TREC];
	for (int i = 0; i < RECS; i++) {
		memset(rec, 'a' + (int)t, TREC);
		memcpy(rec, &i, sizeof i);
		if (ffpwrite(fd, rec, TREC, ((off_t)i * THREADS + t) * TREC) != TREC)
			return (void *)1;
	}
	return NULL;
}

static int check_threads_file(void)
{
	static char buf[THREADS * RECS * TREC];
	if (disk(buf, sizeof buf, 0) != (ssize_t)sizeof buf)
		return 0;
	for (int i = 0; i < RECS; i++)
		for (int t = 0; t < THREADS; t++) {
			char *rec = buf + ((size_t)i * THREADS + (size_t)t) * TREC;
			int got;
			memcpy(&got, rec, sizeof got);
			if (got != i || rec[TREC - 1] != 'a' + t)
				return 0;
		}
	return 1;
}

static void test_threads(void)
{
	pthread_t th[THREADS];
	void *res;
	int ok = 1;

	shared_fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:1k:8:1");
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	for (int t = 0; t < THREADS; t++)
		ok &= pthread_join(th[t], &res) == 0 && res == NULL;
	tap_ok(ok, "threads on one descriptor");
	tap_is(ffclose(shared_fd), 0, "close");
	tap_ok(check_threads_file(), "every record of every thread in the file");

	shared_fd = -1;
	ok = 1;
	int raw = open(path, O_RDWR | O_TRUNC);
	close(raw);
	for (int t = 0; t < THREADS; t++)
		many_fd[t] = ffopen(path, O_WRONLY, 0, "cache.shared:1k:8:1");
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	for (int t = 0; t < THREADS; t++)
		ok &= pthread_join(th[t], &res) == 0 && res == NULL;
	tap_ok(ok, "threads on one descriptor each (shared pool, disjoint bytes)");
	for (int t = 0; t < THREADS; t++)
		ok &= ffclose(many_fd[t]) == 0;
	tap_ok(ok, "close all");
	tap_ok(check_threads_file(), "every record of every thread in the file");
}

static void test_fork(void)
{
	int fd = ffopen(path, O_RDWR | O_CREAT | O_TRUNC, 0644, "cache:4k:4:0");
	int go[2], status = 0;
	char buf[8];

	tap_is(ffwrite(fd, "AAAA", 4), 4, "cached write before fork");
	if (pipe(go) < 0)
		tap_skip_all("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1) /* the parent has rewritten the bytes */
			_exit(3);
		_exit(ffclose(fd) == 0 ? 0 : 2);
	}
	close(go[0]);
	tap_is(disk(buf, 4, 0), 4, "fork flushed the parent's data");
	tap_is(ffpwrite(fd, "BBBB", 4, 0), 4, "parent rewrites");
	tap_is(ffflush(fd), 0, "parent flushes");
	tap_is(write(go[1], "x", 1), 1, "let the child close");
	close(go[1]);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child closed its copy");
	tap_is(disk(buf, 4, 0), 4, "size");
	tap_ok(memcmp(buf, "BBBB", 4) == 0, "the child did not write the parent's old data");
	tap_is(ffclose(fd), 0, "parent close");
}

int main(void)
{
	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	snprintf(path, sizeof path, "%s/f", dir);
	test_flush_points();
	test_byte_exact();
	test_sieve();
	test_loops();
	test_grow();
	test_grow_warm();
	test_write_reuse();
	test_memory_line();
	test_sieve_existing(0);
	test_sieve_existing(1);
	test_sieve_reused(256);  /* records dense: pages cleared as written */
	test_sieve_reused(4096); /* sparse: gaps written from zero_gap */
	test_append_truncate();
	test_threads();
	test_fork();
	unlink(path);
	rmdir(dir);
	return tap_done();
}
