/* t/tap.h -- a tiny TAP producer for the C tests: plan, ok, is, skip, done.
 * Each test is a small standalone program.  tap_skip_all() skips it as a
 * whole: a "1..0 # SKIP why" plan, then exit 0.  Under Automake's TAP
 * driver (tap-driver.sh, without --ignore-exit) the plan says SKIP and any
 * non-zero exit status, 77 included, is an ERROR: 77 means "skipped" only
 * to the plain test driver.
 *
 * Each line is flushed with tap_flush (fflush_unlocked): the lines are the
 * harness's, not messages of the program under test, and ffio's own fflush
 * would take them for messages to another process (stdout is the driver's
 * pipe) and write every cache back between a test's checks. */
#ifndef FFIO_TAP_H
#define FFIO_TAP_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed, tap_planned;

static inline void tap_flush(void)
{
	fflush_unlocked(stdout);
}

static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	tap_flush();
}

/* Skip the whole program, saying why (it exits 0: see above). */
static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	tap_flush();
	exit(0);
}

static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tap_flush();
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tap_flush();
}

static inline void tap_skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_n, why);
	tap_flush();
}

#define tap_is(got, want, ...)                                                     \
	do {                                                                       \
		long long tap_g_ = (long long)(got), tap_w_ = (long long)(want);   \
		if (!tap_ok(tap_g_ == tap_w_, __VA_ARGS__))                        \
			tap_diag("  got %lld, expected %lld (%s:%d)", tap_g_, tap_w_, \
				 __FILE__, __LINE__);                              \
	} while (0)

#define tap_is_str(got, want, ...)                                                  \
	do {                                                                        \
		const char *tap_g_ = (got), *tap_w_ = (want);                       \
		if (!tap_ok(tap_g_ && tap_w_ && strcmp(tap_g_, tap_w_) == 0, __VA_ARGS__)) \
			tap_diag("  got \"%s\", expected \"%s\" (%s:%d)",           \
				 tap_g_ ? tap_g_ : "(null)", tap_w_ ? tap_w_ : "(null)", \
				 __FILE__, __LINE__);                               \
	} while (0)

/* The path of the running program, for a test that executes itself again.
 * Not "/proc/self/exe" itself: under valgrind that names valgrind's tool,
 * while reading the link gives the program's path. */
static inline const char *tap_self(void)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return "/proc/self/exe";
	self[n] = '\0';
	return self;
}

/* Exit status for the end of a test program. */
static inline int tap_done(void)
{
	if (tap_planned == 0) {
		printf("1..%d\n", tap_n);
	} else if (tap_n != tap_planned) {
		printf("# planned %d tests but ran %d\n", tap_planned, tap_n);
		return 1;
	}
	return tap_failed ? 1 : 0;
}

/* A new directory NAME-XXXXXX under $TMPDIR (else /tmp), its path in dir;
 * the test bails out when it cannot be made. */
static inline void tap_tmpdir(char *dir, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp %s: %s\n", dir, strerror(errno));
		exit(1);
	}
}

#endif
