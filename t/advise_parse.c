/* t/advise_parse.c -- the FF_IO_OPTS='...' line ffio-advise prints is a
 * spec ffio itself accepts: for synthetic event logs of several patterns
 * (a sieved file, cache over uring, an out_*.dat glob beside an uncached
 * file, names with blanks, parentheses and glob characters, nothing
 * advised) the printed value is given to ffio_rank_spec_set(3), and
 * ffio_path_layers(3) shows which stack each traced file would get. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffio_ext.h"
#include "tap.h"

static char dir[4096], adv[4096];

/* One event.summary line: DIRECTION over PATH (in dir). */
static void summ(FILE *f, const char *d, const char *path, long calls, long size, double sec, long seq,
		 long strided, long stride, long rnd)
{
	fprintf(f,
		"{\"event\":\"event[0] of * (above sys)\",\"layer\":\"event\",\"position\":0,\"path\":\"%s/%s\","
		"\"units\":\"bytes\",\"ops\":{\"%s\":{\"calls\":%ld,\"errors\":0,\"bytes\":%ld,\"seconds\":%.9f}},"
		"\"%s\":{\"sequential\":%ld,\"strided\":%ld,\"stride\":%ld,\"random\":%ld,\"sizes\":{\"%ld\":%ld}}}\n",
		dir, path, d, calls, calls * size, sec, d, seq, strided, stride, rnd, size, calls);
}

/* The value ffio-advise --from LOG prints as FF_IO_OPTS='VALUE' on its last
 * line, in spec; 0, or -1 after a diagnostic. */
static int advise(const char *log, char *spec, size_t len)
{
	char cmd[9000], line[8192], last[8192] = "";
	FILE *p;

	snprintf(cmd, sizeof cmd, "'%s' -q --from '%s'", adv, log);
	if (!(p = popen(cmd, "r"))) {
		tap_diag("popen %s: %s", cmd, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, p))
		snprintf(last, sizeof last, "%s", line);
	if (pclose(p) != 0) {
		tap_diag("%s failed", cmd);
		return -1;
	}
	last[strcspn(last, "\n")] = '\0';
	size_t n = strlen(last);
	if (strncmp(last, "FF_IO_OPTS='", 12) != 0 || n < 13 || last[n - 1] != '\'') {
		tap_diag("last line: %s", last);
		return -1;
	}
	snprintf(spec, len, "%.*s", (int)(n - 13), last + 12);
	return 0;
}

/* The log's advice parses; path then gets the layers want ("cache,sys"),
 * or none ("" ) for other. */
static void check(const char *name, void (*make)(FILE *), const char *path, const char *want, const char *other)
{
	char log[4200], spec[8192], err[512], got[256] = "";
	const char *names[FFIO_MAX_LAYERS];
	FILE *f;
	int n;

	snprintf(log, sizeof log, "%s/%s.json", dir, name);
	if (!(f = fopen(log, "w"))) {
		printf("Bail out! %s: %s\n", log, strerror(errno));
		exit(1);
	}
	make(f);
	if (fclose(f)) {
		printf("Bail out! %s: %s\n", log, strerror(errno));
		exit(1);
	}
	if (!tap_ok(advise(log, spec, sizeof spec) == 0, "%s: ffio-advise prints FF_IO_OPTS='...' last", name)) {
		tap_skip("no spec");
		tap_skip("no spec");
		return;
	}
	tap_diag("%s: FF_IO_OPTS='%s'", name, spec);
	err[0] = '\0';
	n = ffio_rank_spec_set(spec, "ffio-advise", err, sizeof err);
	if (!tap_ok(n == 0, "%s: the spec parses", name))
		tap_diag("  %s", err);
	n = ffio_path_layers(path, names, FFIO_MAX_LAYERS);
	for (int i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "", names[i]);
	tap_is_str(got, want, "%s: %s gets %s", name, path, *want ? want : "no stack");
	if (other) {
		n = ffio_path_layers(other, names, FFIO_MAX_LAYERS);
		tap_is(n, 0, "%s: %s gets no stack", name, other);
	}
}

static void sieved(FILE *f)
{
	summ(f, "write", "x.dat", 10000, 64, 0.01, 0, 10000, 256, 0);
}

static void uring(FILE *f)
{
	summ(f, "read", "not-made/h.dat", 10000, 4096, 2.0, 10000, 0, 0, 0);
}

static void globbed(FILE *f)
{
	summ(f, "write", "out_1.dat", 20000, 128, 0.02, 20000, 0, 0, 0);
	summ(f, "write", "out_22.dat", 20000, 128, 0.02, 20000, 0, 0, 0);
	summ(f, "read", "in.dat", 1000, 1048576, 0.5, 1000, 0, 0, 0);
}

static void odd_names(FILE *f)
{
	summ(f, "write", "my (1).dat", 20000, 128, 0.02, 20000, 0, 0, 0);
	summ(f, "write", "a*b.dat", 20000, 128, 0.02, 20000, 0, 0, 0);
	summ(f, "read", "axb.dat", 1000, 1048576, 0.5, 1000, 0, 0, 0);
}

static void nothing(FILE *f)
{
	summ(f, "read", "big.dat", 1000, 1048576, 0.5, 1000, 0, 0, 0);
}

int main(void)
{
	const char *top = getenv("top_builddir");

	snprintf(adv, sizeof adv, "%s/ffio-advise", top && *top ? top : ".");
	if (access(adv, X_OK) != 0)
		tap_skip_all("ffio-advise not built");
	tap_tmpdir(dir, sizeof dir, "advise_parse");
	tap_plan(19);
	check("sieved", sieved, "/data/x.dat", "cache,sys", "/data/y.dat");
	check("uring", uring, "h.dat", "cache,uring", NULL);
	check("globbed", globbed, "run/out_7.dat", "cache,sys", "run/in.dat");
	check("odd names", odd_names, "my (1).dat", "cache,sys", "axb.dat");
	tap_is(ffio_path_layers("a*b.dat", (const char *[FFIO_MAX_LAYERS]){0}, FFIO_MAX_LAYERS), 2,
	       "odd names: a*b.dat, its '*' escaped, gets its stack");
	check("nothing", nothing, "big.dat", "", NULL);
	/* the logs are ours: remove them */
	const char *names[] = { "sieved", "uring", "globbed", "odd names", "nothing" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char log[4200];
		snprintf(log, sizeof log, "%s/%s.json", dir, names[i]);
		unlink(log);
	}
	rmdir(dir);
	return tap_done();
}
