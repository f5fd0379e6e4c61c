/* t/cache_hints.c -- the cache's read hints to the kernel (TAP): the
 * kernel's read-ahead off before the first page load and on again for a
 * sequential pattern; sparse strided records from a slow file hinted one
 * by one (WILLNEED) ahead of the reads; strided whole pages hinted over a
 * synchronous stack once two page loads were slow, each page once also
 * when the stride is under a page; nothing at all without AHEAD.  An event layer below the cache traces
 * every hint; a delay layer under it makes each read slow, as the device
 * would.  Every byte read is checked. */
#include "layer_common.h"

#define REC 256
#define STRIDE 65536
#define NREC 48

/* Position of the first line of log holding needle, or -1. */
static long line_at(const char *log, const char *needle)
{
	const char *p = strstr(log, needle);
	return p ? (long)(p - log) : -1;
}

static void test_sparse(const char *path)
{
	static unsigned char buf[REC];
	char needle[128];
	int fd, good = 1, once = 1, before = 1, hinted = 0;

	fd = ffopen(path, O_RDONLY, 0, "cache:64k:64:8, event.trace, delay:1ms:0, sys");
	tap_ok(fd >= 0, "sparse: ffopen over a slow file");
	for (int i = 0; i < NREC; i++)
		if (ffpread(fd, buf, REC, (off_t)i * STRIDE) != REC || !lt_bytes_ok(buf, REC, (off_t)i * STRIDE))
			good = 0;
	tap_ok(good, "sparse: %d records of %d bytes %d apart read back exactly", NREC, REC, STRIDE);
	tap_is(ffclose(fd), 0, "sparse: ffclose");
	char *log = lt_log_new();
	tap_is(lt_count(log, "trace: advise random res=0"), 1, "sparse: the kernel's read-ahead turned off once");
	tap_is(lt_count(log, "trace: advise normal"), 0, "sparse: and never on (no sequential pattern)");
	for (int i = 3; i < NREC; i++) {
		snprintf(needle, sizeof needle, "trace: willneed off=%d size=%d res=0", i * STRIDE, REC);
		int n = lt_count(log, needle);
		hinted += n > 0;
		if (n != 1)
			once = 0;
		char rd[128];
		snprintf(rd, sizeof rd, "trace: read off=%d size=%d res=%d", i * STRIDE, REC, REC);
		if (n == 1 && !(line_at(log, needle) < line_at(log, rd)))
			before = 0;
	}
	tap_is(hinted, NREC - 3, "sparse: every record after the third hinted");
	tap_ok(once, "sparse: each exactly once");
	tap_ok(before, "sparse: each hint before the record's read");
	tap_is(lt_count(log, "trace: willneed "), NREC - 3, "sparse: no hint past the end of the file or elsewhere");
	snprintf(needle, sizeof needle, "size=%d res=%d", REC, REC);
	tap_is(lt_count(log, needle), NREC - 3,
	       "sparse: the records after the first three (the stride seen twice) read alone, once each");
	free(log);
}

static void test_sequential(const char *path)
{
	static unsigned char buf[8192];
	int fd, good = 1;

	fd = ffopen(path, O_RDONLY, 0, "cache:64k:16:4, event.trace, sys");
	tap_ok(fd >= 0, "sequential: ffopen");
	for (off_t o = 0; o < 40 * 65536; o += (off_t)sizeof buf)
		if (ffpread(fd, buf, sizeof buf, o) != (ssize_t)sizeof buf || !lt_bytes_ok(buf, sizeof buf, o))
			good = 0;
	tap_ok(good, "sequential: 2.5 MiB in 8 KiB reads read back exactly");
	tap_is(ffclose(fd), 0, "sequential: ffclose");
	char *log = lt_log_new();
	long off = line_at(log, "trace: advise random res=0"), on = line_at(log, "trace: advise normal res=0");
	tap_is(lt_count(log, "trace: advise random"), 1, "sequential: the kernel's read-ahead off before the first page load");
	tap_is(lt_count(log, "trace: advise normal"), 1, "sequential: and on once the pattern is sequential");
	tap_ok(off >= 0 && off < on, "sequential: in that order");
	tap_is(lt_count(log, "trace: willneed "), 0, "sequential: no hints: the kernel reads ahead");
	free(log);
}

static void test_strided_pages(const char *path)
{
	static unsigned char buf[32768];
	char needle[128];
	int fd, good = 1, hinted = 0;

	/* 32 KiB records 128 KiB apart over 64 KiB pages: whole pages along a
	 * stride, not sparse records */
	fd = ffopen(path, O_RDONLY, 0, "cache:64k:32:4, event.trace, delay:1ms:0, sys");
	tap_ok(fd >= 0, "strided pages: ffopen");
	for (int i = 0; i < 16; i++)
		if (ffpread(fd, buf, sizeof buf, (off_t)i * 131072) != (ssize_t)sizeof buf ||
		    !lt_bytes_ok(buf, sizeof buf, (off_t)i * 131072))
			good = 0;
	tap_ok(good, "strided pages: 16 records of 32 KiB read back exactly");
	tap_is(ffclose(fd), 0, "strided pages: ffclose");
	char *log = lt_log_new();
	tap_is(lt_count(log, "trace: advise normal"), 0, "strided pages: the kernel's read-ahead stays off");
	int total = 0, once = 1;
	for (int i = 3; i < NREC / 2; i++) {
		snprintf(needle, sizeof needle, "trace: willneed off=%d size=65536 res=0", i * 131072);
		int n = lt_count(log, needle);
		hinted += i < 16 && n == 1;
		once &= n <= 1;
		total += n;
	}
	tap_is(hinted, 13, "strided pages: each page read after the third was hinted");
	tap_ok(once, "strided pages: no page hinted twice");
	tap_is(lt_count(log, "trace: willneed "), total, "strided pages: every hint along the stride");
	tap_ok(total <= 13 + 4, "strided pages: at most AHEAD pages hinted past the last read (%d hints)", total);
	free(log);
}

/* 256 B records 4 KiB apart over 64 KiB pages: a stride under a page.
 * Each page ahead is hinted once, not once per record. */
static void test_dense_stride(const char *path)
{
	static unsigned char buf[REC];
	char needle[128];
	int fd, good = 1, once = 1;
	int nrec = NREC * STRIDE / 4096;

	fd = ffopen(path, O_RDONLY, 0, "cache:64k:16:2, event.trace, delay:1ms:0, sys");
	tap_ok(fd >= 0, "dense stride: ffopen");
	for (int i = 0; i < nrec; i++)
		if (ffpread(fd, buf, REC, (off_t)i * 4096) != REC || !lt_bytes_ok(buf, REC, (off_t)i * 4096))
			good = 0;
	tap_ok(good, "dense stride: %d records of %d bytes 4 KiB apart read back exactly", nrec, REC);
	tap_is(ffclose(fd), 0, "dense stride: ffclose");
	char *log = lt_log_new();
	for (int pg = 0; pg < NREC; pg++) {
		snprintf(needle, sizeof needle, "trace: willneed off=%d ", pg * STRIDE);
		once &= lt_count(log, needle) <= 1;
	}
	int hints = lt_count(log, "trace: willneed ");
	tap_ok(once, "dense stride: no page hinted twice");
	tap_ok(hints > 0 && hints <= NREC, "dense stride: %d hints for %d pages", hints, NREC);
	free(log);
}

static void test_no_ahead(const char *path)
{
	static unsigned char buf[REC];
	int fd, good = 1;

	fd = ffopen(path, O_RDONLY, 0, "cache:64k:64:0, event.trace, delay:1ms:0, sys");
	tap_ok(fd >= 0, "no read-ahead: ffopen");
	for (int i = 0; i < 8; i++)
		if (ffpread(fd, buf, REC, (off_t)i * STRIDE) != REC || !lt_bytes_ok(buf, REC, (off_t)i * STRIDE))
			good = 0;
	tap_ok(good, "no read-ahead: 8 records read back exactly");
	tap_is(ffclose(fd), 0, "no read-ahead: ffclose");
	char *log = lt_log_new();
	tap_is(lt_count(log, "trace: advise "), 0, "no read-ahead: the kernel's read-ahead left alone");
	tap_is(lt_count(log, "trace: willneed "), 0, "no read-ahead: no hints");
	free(log);
}

int main(void)
{
	lt_setup("cache-hints");
	const char *path = lt_path("records.dat");
	lt_make_file(path, (off_t)NREC * STRIDE);
	free(lt_log_new());
	test_sparse(path);
	test_sequential(path);
	test_strided_pages(path);
	test_dense_stride(path);
	test_no_ahead(path);
	return tap_done();
}
