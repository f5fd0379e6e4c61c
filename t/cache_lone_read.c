/* t/cache_lone_read.c -- a large read that follows no other goes around
 * the cache (TAP).  A read of a quarter of a page or more, not going on
 * from the read before it, into pages none of which the cache holds, is
 * read below as it is asked (one read of its bytes, no page loaded), and,
 * when no write is cached, without asking the size of the file below; a
 * read that goes on from it is served by pages as before; a large read
 * into a page the cache holds is served from it.  An event layer below
 * the cache traces every call; the bytes are checked. */
#include "layer_common.h"

#define PAGE 262144
#define FILE_LEN (4 << 20)

static unsigned char buf[PAGE];

/* The read of n bytes at off below, as the trace says it. */
static int read_below(const char *log, off_t off, size_t n)
{
	char needle[96];
	snprintf(needle, sizeof needle, "trace: read off=%lld size=%zu ", (long long)off, n);
	return lt_count(log, needle);
}

int main(void)
{
	lt_setup("cache-lone-read");
	const char *path = lt_path("data");
	lt_make_file(path, FILE_LEN);
	tap_plan(17);

	int fd = ffopen(path, O_RDONLY, 0, "cache:256k:8:2, event.trace, sys");
	tap_ok(fd >= 0, "ffopen");
	(void)lt_log_new();
	/* 100000 bytes (more than a quarter page) straddling pages 1 and 2 */
	off_t at = PAGE + PAGE - 30000;
	tap_ok(ffpread(fd, buf, 100000, at) == 100000 && lt_bytes_ok(buf, 100000, at), "a lone read of 100000 bytes: exact");
	char *log = lt_log_new();
	tap_is(read_below(log, at, 100000), 1, "read below as asked, in one read");
	tap_is(lt_count(log, "trace: read "), 1, "no page loaded");
	tap_is(lt_count(log, "trace: size"), 0, "the size below not asked");
	free(log);

	/* the read that goes on from it: pages, as before */
	off_t next = at + 100000;
	tap_ok(ffpread(fd, buf, 100000, next) == 100000 && lt_bytes_ok(buf, 100000, next), "the next read goes on from it: exact");
	log = lt_log_new();
	tap_is(read_below(log, next, 100000), 0, "not read below as asked");
	tap_ok(read_below(log, 2 * PAGE, PAGE) == 1, "its page loaded (page 2, whole)");
	free(log);

	/* a large read elsewhere into the page the cache now holds: from it */
	tap_ok(ffpread(fd, buf, 70000, 2 * PAGE + 150000) == 70000 && lt_bytes_ok(buf, 70000, 2 * PAGE + 150000),
	       "a lone read of 70000 bytes inside page 2: exact");
	log = lt_log_new();
	tap_is(lt_count(log, "trace: read "), 0, "served by the page, nothing read below");
	free(log);

	/* small lone reads are cached as before */
	tap_ok(ffpread(fd, buf, 4096, 10 * 4096) == 4096 && lt_bytes_ok(buf, 4096, 10 * 4096), "a small read: exact");
	log = lt_log_new();
	tap_is(read_below(log, 0, PAGE), 1, "its page loaded");
	free(log);
	tap_is(ffclose(fd), 0, "ffclose");

	/* with a write cached: the bytes written are the ones read */
	fd = ffopen(path, O_RDWR, 0, "cache:256k:8:2, event.trace, sys");
	static const char mark[] = "written, not yet below";
	tap_is(ffpwrite(fd, mark, sizeof mark, 3 * PAGE + 5), (ssize_t)sizeof mark, "a small write into page 3");
	(void)lt_log_new();
	/* a lone read over pages 4 and 5 (no page held) and one over 3 (held) */
	tap_ok(ffpread(fd, buf, 100000, 4 * PAGE + 1000) == 100000 && lt_bytes_ok(buf, 100000, 4 * PAGE + 1000),
	       "a lone read of pages not held, a write cached elsewhere: exact");
	int good = ffpread(fd, buf, 100000, 3 * PAGE) == 100000 && memcmp(buf + 5, mark, sizeof mark) == 0 &&
		   lt_bytes_ok(buf, 5, 3 * PAGE) && lt_bytes_ok(buf + 5 + sizeof mark, 100000 - 5 - sizeof mark, 3 * PAGE + 5 + sizeof mark);
	tap_ok(good, "a lone read over the page written: the write's bytes and the file's around them");
	tap_is(ffclose(fd), 0, "ffclose");
	return tap_done();
}
