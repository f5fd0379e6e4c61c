/* t/spec_match.c -- which entry a path gets: a pattern without '/' is
 * matched against the last component, one with '/' against the path as
 * given (where '*' also matches '/', so a directory prefix covers its
 * whole tree); the first matching entry wins; no
 * match gives NULL. */
#include "config.h"
#include <string.h>
#include "ffio-internal.h"
#include "tap.h"

static struct ffio_spec *spec;

/* The index of the entry path matches, 0 for none. */
static int match(const char *path)
{
	struct ffio_entry *e = ffio_spec_match(spec, path);
	return e ? e->index : 0;
}

int main(void)
{
	static const struct {
		const char *path;
		int entry;
	} cases[] = {
		{"x.nc", 1},
		{"/data/run/x.nc", 1},          /* last component */
		{"./x.nc", 1},
		{"x.nc.bak", 0},
		{"/scratch/a.dat", 2},
		{"/scratch/deep/er/a.dat", 2},  /* '*' crosses '/' */
		{"scratch/a.dat", 0},           /* relative path: as given */
		{"/other/a.dat", 0},
		{"/home/u/notes.txt", 3},
		{"/home/u/v/w/notes.txt", 3},   /* '*' crosses '/' */
		{"home/u/notes.txt", 0},
		{"test1", 4},
		{"/tmp/test42", 4},
		{"atest", 0},
		{".hidden.nc", 1},              /* no FNM_PERIOD */
		{"/tmp/dir/", 0},               /* empty last component */
		{"data.nc", 1},                 /* first match wins over entry 5 */
		{"data.h5", 5},
		{"", 0},
		{"data/x.h4", 6},               /* relative pattern, as given */
		{"./data/x.h4", 7},             /* only the leading-* form */
	};
	char err[512];
	int n = (int)(sizeof cases / sizeof cases[0]);

	tap_plan(n + 5);
	int rc = ffio_spec_parse("*.nc(event) /scratch/*.dat(event) /home/*/notes.txt(event) "
				 "test*(sys) data.*(event.trace) data/*.h4(sys) *data/*.h4(sys)",
				 "FF_IO_OPTS", &spec, err, sizeof err);
	if (!tap_ok(rc == 0, "spec parses")) {
		tap_diag("%s", err);
		return tap_done();
	}
	for (int i = 0; i < n; i++)
		tap_is(match(cases[i].path), cases[i].entry, "\"%s\" -> entry %d", cases[i].path,
		       cases[i].entry);
	tap_ok(ffio_spec_match(NULL, "x.nc") == NULL, "no spec: no match");
	tap_ok(ffio_spec_match(spec, NULL) == NULL, "no path: no match");
	ffio_spec_free(spec);

	rc = ffio_spec_parse("", "FF_IO_OPTS", &spec, err, sizeof err);
	tap_ok(rc == 0 && ffio_spec_match(spec, "x.nc") == NULL, "empty spec matches nothing");
	ffio_spec_free(spec);

	rc = ffio_spec_parse("*(sys)", "FF_IO_OPTS", &spec, err, sizeof err);
	tap_ok(rc == 0 && match("/any/where/at/all") == 1 && match("") == 1, "* matches everything");
	ffio_spec_free(spec);
	return tap_done();
}
