/* t/cache_around_ra.c -- a large read around the cache gets the kernel's
 * read-ahead (TAP).  A cache that reads ahead turns the kernel's read-ahead
 * off before its first load (POSIX_FADV_RANDOM); a read of a page or more
 * that then goes around the cache is read by the kernel with read-ahead on
 * (POSIX_FADV_NORMAL just before it) and off again just after, so that the
 * loads that follow are as before.  A file whose first read is large pays
 * no advice.  An event layer below the cache traces every advice and read;
 * the bytes are checked. */
#include "layer_common.h"

#define PAGE 262144
#define FILE_LEN (4 << 20)
#define BIG (1 << 20)

static unsigned char buf[BIG];

/* The first needle from from on, or NULL (also when from is NULL). */
static const char *after(const char *from, const char *needle)
{
	return from ? strstr(from, needle) : NULL;
}

int main(void)
{
	lt_setup("cache-around-ra");
	const char *path = lt_path("data");
	lt_make_file(path, FILE_LEN);
	tap_plan(14);

	/* a page loaded, then a large read elsewhere, then a page loaded again */
	int fd = ffopen(path, O_RDONLY, 0, "cache:256k:8:2, event.trace, sys");
	tap_ok(fd >= 0, "ffopen");
	(void)lt_log_new();
	tap_ok(ffpread(fd, buf, 4096, 0) == 4096 && lt_bytes_ok(buf, 4096, 0), "a small read: its page loaded");
	off_t big_at = (off_t)BIG + 4096;
	tap_ok(ffpread(fd, buf, BIG, big_at) == BIG && lt_bytes_ok(buf, BIG, big_at), "then a read of 1 MiB, exact");
	off_t late = 3 * (off_t)BIG;
	tap_ok(ffpread(fd, buf, 4096, late) == 4096 && lt_bytes_ok(buf, 4096, late), "then a small read again, exact");
	tap_is(ffclose(fd), 0, "ffclose");
	char *log = lt_log_new();
	char read_big[96], read_late[96];
	snprintf(read_big, sizeof read_big, "trace: read off=%lld size=%d ", (long long)big_at, BIG);
	snprintf(read_late, sizeof read_late, "trace: read off=%lld size=%d ", (long long)late, PAGE);
	const char *off1 = strstr(log, "trace: advise random res=0");
	const char *load1 = strstr(log, "trace: read off=0 size=262144 ");
	tap_ok(off1 && load1 && off1 < load1, "the kernel's read-ahead off before the first load");
	const char *on = after(load1, "trace: advise normal res=0");
	const char *big = after(on, read_big);
	tap_ok(on && big, "on again just before the large read, which goes around the cache");
	const char *off2 = after(big, "trace: advise random res=0");
	const char *load2 = after(off2, read_late);
	tap_ok(off2 && load2, "off again after it, before the next load");
	tap_is(lt_count(log, "trace: advise "), 3, "three pieces of advice, no more");
	tap_is(lt_count(log, "trace: read "), 3, "three reads below: page, large read, page");
	free(log);

	/* the first read large: nothing to lift, no advice around it */
	fd = ffopen(path, O_RDONLY, 0, "cache:256k:8:2, event.trace, sys");
	tap_ok(fd >= 0 && ffpread(fd, buf, BIG, big_at) == BIG && lt_bytes_ok(buf, BIG, big_at),
	       "a file read large first: exact");
	tap_is(ffclose(fd), 0, "ffclose");
	log = lt_log_new();
	tap_is(lt_count(log, "trace: advise "), 0, "no advice");
	tap_is(lt_count(log, "trace: read "), 1, "one read below");
	free(log);
	return tap_done();
}
