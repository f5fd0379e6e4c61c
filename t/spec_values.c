/* t/spec_values.c -- the value syntax of layer arguments, for every param
 * type: sizes, counts and rates with k/m/g (powers of 1024), times with
 * ns/us/ms/s (bare number = microseconds), errno names or numbers, enum
 * names; ranges, overflow after unit multiplication, negative numbers. */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "ffio-internal.h"
#include "tap.h"

/* spec.c: one value parsed exactly as a layer argument. */
int ffio_spec_parse_value(const struct ffio_param *pm, const char *text, int64_t *out,
			  char *err, size_t errlen);

static const char *const ops_names[] = {"read", "write", "sync", "any", NULL};

static const struct ffio_param p_size = {"page", FFIO_P_SIZE, 0, 0, INT64_MAX, NULL};
static const struct ffio_param p_count = {"pages", FFIO_P_COUNT, 0, -5, INT64_MAX, NULL};
static const struct ffio_param p_time = {"lat", FFIO_P_TIME, 0, 0, INT64_MAX, NULL};
static const struct ffio_param p_rate = {"bw", FFIO_P_RATE, 0, 1, INT64_MAX, NULL};
static const struct ffio_param p_errno = {"errno", FFIO_P_ERRNO, 0, 1, 4095, NULL};
static const struct ffio_param p_enum = {"op", FFIO_P_ENUM, 0, 0, 3, ops_names};
static const struct ffio_param p_small = {"depth", FFIO_P_COUNT, 64, 1, 4096, NULL};

static char err[512];

static void ok_value(const struct ffio_param *pm, const char *text, int64_t want)
{
	int64_t v = -12345;
	int rc = ffio_spec_parse_value(pm, text, &v, err, sizeof err);

	if (!tap_ok(rc == 0 && v == want, "%s \"%s\" = %lld", pm->name, text, (long long)want))
		tap_diag("  rc %d, got %lld: %s", rc, (long long)v, err);
}

static void bad_value(const struct ffio_param *pm, const char *text, const char *msg)
{
	int64_t v = 0;
	int rc = ffio_spec_parse_value(pm, text, &v, err, sizeof err);

	tap_ok(rc == -EINVAL, "%s \"%s\" rejected", pm->name, text);
	tap_is_str(err, msg, "%s \"%s\" message", pm->name, text);
}

int main(void)
{
	ok_value(&p_size, "0", 0);
	ok_value(&p_size, "4096", 4096);
	ok_value(&p_size, "1k", 1024);
	ok_value(&p_size, "1K", 1024);
	ok_value(&p_size, "1m", 1048576);
	ok_value(&p_size, "3M", 3 * 1048576);
	ok_value(&p_size, "2g", 2LL << 30);
	ok_value(&p_size, "8589934591g", 8589934591LL << 30); /* just fits */
	ok_value(&p_size, "9223372036854775807", INT64_MAX);
	ok_value(&p_size, "007", 7);
	ok_value(&p_count, "64", 64);
	ok_value(&p_count, "2k", 2048);
	ok_value(&p_count, "-5", -5);
	ok_value(&p_rate, "100m", 100LL << 20);
	ok_value(&p_time, "250", 250000);     /* bare = us */
	ok_value(&p_time, "250us", 250000);
	ok_value(&p_time, "10ns", 10);
	ok_value(&p_time, "5ms", 5000000);
	ok_value(&p_time, "2s", 2000000000);
	ok_value(&p_time, "9223372036s", 9223372036000000000LL);
	ok_value(&p_errno, "ENOSPC", ENOSPC);
	ok_value(&p_errno, "EIO", EIO);
	ok_value(&p_errno, "EDQUOT", EDQUOT);
	ok_value(&p_errno, "EFBIG", EFBIG);
	ok_value(&p_errno, "EINTR", EINTR);
	ok_value(&p_errno, "EAGAIN", EAGAIN);
	ok_value(&p_errno, "EWOULDBLOCK", EAGAIN);
	ok_value(&p_errno, "EACCES", EACCES);
	ok_value(&p_errno, "EROFS", EROFS);
	ok_value(&p_errno, "EPERM", EPERM);
	ok_value(&p_errno, "ESTALE", ESTALE);
	ok_value(&p_errno, "ENOTSUP", ENOTSUP);
	ok_value(&p_errno, "28", 28);
	ok_value(&p_enum, "read", 0);
	ok_value(&p_enum, "any", 3);
	ok_value(&p_small, "4k", 4096);

	bad_value(&p_size, "1t", "value: entry 1 \"1t\", column 2: unknown unit \"t\" in \"1t\" for \"page\" (expected k, m or g)");
	bad_value(&p_size, "1kb", "value: entry 1 \"1kb\", column 2: unknown unit \"kb\" in \"1kb\" for \"page\" (expected k, m or g)");
	bad_value(&p_size, "8589934592g", "value: entry 1 \"8589934592g\", column 1: number too large: \"8589934592g\"");
	bad_value(&p_size, "9223372036854775808", "value: entry 1 \"9223372036854775808\", column 1: number too large: \"9223372036854775808\"");
	bad_value(&p_size, "-1", "value: entry 1 \"-1\", column 1: value \"-1\" of \"page\" is out of range (expected 0..9223372036854775807)");
	bad_value(&p_size, "--1", "value: entry 1 \"--1\", column 1: expected a number for \"page\", found \"--1\"");
	bad_value(&p_size, "", "value: entry 1 \"\", column 1: expected a value for \"page\"");
	bad_value(&p_count, "-6", "value: entry 1 \"-6\", column 1: value \"-6\" of \"pages\" is out of range (expected -5..9223372036854775807)");
	bad_value(&p_time, "1m", "value: entry 1 \"1m\", column 2: unknown unit \"m\" in \"1m\" for \"lat\" (expected ns, us, ms or s; a bare number is microseconds)");
	bad_value(&p_time, "9223372037s", "value: entry 1 \"9223372037s\", column 1: number too large: \"9223372037s\"");
	bad_value(&p_time, "9223372036854775807", "value: entry 1 \"9223372036854775807\", column 1: number too large: \"9223372036854775807\"");
	bad_value(&p_rate, "0", "value: entry 1 \"0\", column 1: value \"0\" of \"bw\" is out of range (expected 1..9223372036854775807)");
	bad_value(&p_errno, "ENOSUCH", "value: entry 1 \"ENOSUCH\", column 1: unknown errno name \"ENOSUCH\" for \"errno\" (expected a name such as ENOSPC or EIO, or a number)");
	bad_value(&p_errno, "enospc", "value: entry 1 \"enospc\", column 1: unknown errno name \"enospc\" for \"errno\" (expected a name such as ENOSPC or EIO, or a number)");
	bad_value(&p_errno, "0", "value: entry 1 \"0\", column 1: value \"0\" of \"errno\" is out of range (expected 1..4095)");
	bad_value(&p_errno, "28k", "value: entry 1 \"28k\", column 3: unknown unit \"k\" in \"28k\" for \"errno\" (expected a plain number or a name)");
	bad_value(&p_enum, "Read", "value: entry 1 \"Read\", column 1: unknown value \"Read\" for \"op\" (expected one of: read, write, sync, any)");
	bad_value(&p_enum, "0", "value: entry 1 \"0\", column 1: unknown value \"0\" for \"op\" (expected one of: read, write, sync, any)");
	bad_value(&p_small, "5k", "value: entry 1 \"5k\", column 1: value \"5k\" of \"depth\" is out of range (expected 1..4096)");
	return tap_done();
}
