/* t/spec_errors.c -- malformed FF_IO_OPTS specs: each gives -EINVAL, no spec,
 * and exactly the expected one-line message (variable, entry, column, what
 * was expected); hostile inputs (1 MB strings, deep nesting, huge numbers,
 * binary bytes, too many entries) give a bounded one-line message. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"
#include "tap.h"

#define LAYERS "(expected one of: sys, uring, cache, eie, cachea, bufa, event, fault, delay)"
#define EIE_ARGS "(expected one of: size, num, lead, share, stride, reserved, reserved2)"
#define P "FF_IO_OPTS: entry "

static const struct {
	const char *text, *msg;
} cases[] = {
	{"*.nc(sys) *.dat(cach:1m)", P "2 \"*.dat(cach:1m)\", column 17: unknown layer \"cach\" " LAYERS},
	{"*.dat", P "1 \"*.dat\", column 6: expected '(' after the pattern, found the end of the text"},
	{"*.dat sys", P "1 \"*.dat\", column 6: expected '(' after the pattern, found \" \""},
	{"a)b(sys)", P "1 \"a)\", column 2: expected '(' after the pattern, found \")\""},
	{"(sys)", P "1 \"(sys)\", column 1: expected a file name pattern before '('"},
	{"((((", P "1 \"((((\", column 1: expected a file name pattern before '('"},
	{"a((((", P "1 \"a((((\", column 3: expected a layer name, found \"(\""},
	{"a(sys", P "1 \"a(sys\", column 6: expected ',' or ')' after a layer, found the end of the text"},
	{"a(sys)x", P "1 \"a(sys)\", column 7: expected white space between entries, found \"x\""},
	{"a(sys))", P "1 \"a(sys)\", column 7: expected white space between entries, found \")\""},
	{"a(sys) b", P "2 \"b\", column 9: expected '(' after the pattern, found the end of the text"},
	{"a()", P "1 \"a()\", column 3: expected a layer name, found \")\""},
	{"a(,sys)", P "1 \"a(,sys)\", column 3: expected a layer name, found \",\""},
	{"a(sys,)", P "1 \"a(sys,)\", column 7: expected a layer name, found \")\""},
	{"a(sys, ,sys)", P "1 \"a(sys, ,sys)\", column 8: expected a layer name, found \",\""},
	{"a(sys sys)", P "1 \"a(sys sys)\", column 7: expected ',' or ')' after a layer, found \"s\""},
	{"a(eie :1)", P "1 \"a(eie :1)\", column 7: expected ',' or ')' after a layer, found \":\""},
	{"a(sys.)", P "1 \"a(sys.)\", column 7: expected a flag name after '.', found \")\""},
	{"a(event..summary)", P "1 \"a(event..summary)\", column 9: expected a flag name after '.', found \".\""},
	{"a(event.summary.foo)", P "1 \"a(event.summary.foo)\", column 17: unknown flag \"foo\" of layer \"event\" "
				 "(expected one of: summary, trace, notrace, bytes, kbytes, mbytes)"},
	{"a(eie.nodiag.foo)", P "1 \"a(eie.nodiag.foo)\", column 14: unknown flag \"foo\" of layer \"eie\" "
			      "(expected one of: direct, nodirect, mbytes, kbytes, bytes, diag, nodiag)"},
	{"a(bufa.direct)", P "1 \"a(bufa.direct)\", column 8: unknown flag \"direct\": layer \"bufa\" takes no flags"},
	{"a(sys:1)", P "1 \"a(sys:1)\", column 7: layer \"sys\" takes no arguments"},
	{"a(eie::1)", P "1 \"a(eie::1)\", column 7: expected an argument after ':'"},
	{"a(eie:)", P "1 \"a(eie:)\", column 7: expected an argument after ':'"},
	{"a(eie:size=)", P "1 \"a(eie:size=)\", column 12: expected a value for \"size\""},
	{"a(eie:=5)", P "1 \"a(eie:=5)\", column 7: expected an argument name before '='"},
	{"a(eie:bogus=2)", P "1 \"a(eie:bogus=2)\", column 7: unknown argument \"bogus\" of layer \"eie\" " EIE_ARGS},
	{"a(eie:size=1:size=2)", P "1 \"a(eie:size=1:size=2)\", column 14: argument \"size\" of layer \"eie\" given twice"},
	{"a(eie:1:size=2)", P "1 \"a(eie:1:size=2)\", column 9: argument \"size\" of layer \"eie\" given twice"},
	{"a(bufa:1:2:3)", P "1 \"a(bufa:1:2:3)\", column 12: too many arguments for layer \"bufa\" (at most 2: bs, nbufs)"},
	{"a(eie:1x)", P "1 \"a(eie:1x)\", column 8: unknown unit \"x\" in \"1x\" for \"size\" (expected k, m or g)"},
	{"a(eie:1.5)", P "1 \"a(eie:1.5)\", column 8: unknown unit \".5\" in \"1.5\" for \"size\" (expected k, m or g)"},
	{"a(eie:-)", P "1 \"a(eie:-)\", column 7: expected a number for \"size\", found \"-\""},
	{"a(eie:k)", P "1 \"a(eie:k)\", column 7: expected a number for \"size\", found \"k\""},
	{"a(eie:-1)", P "1 \"a(eie:-1)\", column 7: value \"-1\" of \"size\" is out of range (expected 1..262144)"},
	{"a(eie:4g)", P "1 \"a(eie:4g)\", column 7: value \"4g\" of \"size\" is out of range (expected 1..262144)"},
	{"a(eie:1:2:3:2)", P "1 \"a(eie:1:2:3:2)\", column 13: value \"2\" of \"share\" is out of range (expected 0..1)"},
	{"a(eie:1:2:2000)", P "1 \"a(eie:1:2:2000)\", column 3: eie: read-ahead 2000 is out of the cache's range (0..1024)"},
	{"a(bufa:0)", P "1 \"a(bufa:0)\", column 8: value \"0\" of \"bs\" is out of range (expected 1..262144)"},
	{"a(eie:9223372036854775808)", P "1 \"a(eie:9223372036854775808)\", column 7: number too large: \"9223372036854775808\""},
	{"a(eie:9223372036854775807k)", P "1 \"a(eie:9223372036854775807k)\", column 7: number too large: \"9223372036854775807k\""},
	{"a(eie:8796093022208g)", P "1 \"a(eie:8796093022208g)\", column 7: number too large: \"8796093022208g\""},
	{"a(eie:99999999999999999999999999999)", P "1 \"a(eie:99999999999999999999999999999)\", column 7: "
						 "number too large: \"99999999999999999999999999999\""},
	{"a(system.direct, event)", P "1 \"a(system.direct, event)\", column 3: bottom layer \"system\" must be the last of the stack"},
	{"a(eie, sys, event)", P "1 \"a(eie, sys, event)\", column 8: bottom layer \"sys\" must be the last of the stack"},
	{"a(uring, sys)", P "1 \"a(uring, sys)\", column 3: bottom layer \"uring\" must be the last of the stack"},
	{"a(sys\001)", P "1 \"a(sys?)\", column 6: expected ',' or ')' after a layer, found character 0x01"},
	{"a(sys)\n\nb(sys,\nfoo)", P "2 \"b(sys,?foo)\", column 16: unknown layer \"foo\" " LAYERS},
	{"verylongpattern_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa(bogus)",
	 P "1 \"verylongpattern_aaaaaaaaaaaaaaaaaaaaaaaa...\", column 74: unknown layer \"bogus\" " LAYERS},
	{"a(event,event,event,event,event,event,event,event,event,event,event,event,event,event,event,event)",
	 P "1 \"a(event,event,event,event,event,event,ev...\", column 99: too many layers (at most 16, with the \"sys\" added at the bottom)"},
	{"a(event,event,event,event,event,event,event,event,event,event,event,event,event,event,event,event,event)",
	 P "1 \"a(event,event,event,event,event,event,ev...\", column 99: too many layers (at most 16)"},
};

/* A message is one line, names FF_IO_OPTS and an entry and a column. */
static int one_line(const char *m)
{
	return strncmp(m, "FF_IO_OPTS: entry ", 18) == 0 && strstr(m, ", column ") &&
	       !strchr(m, '\n') && !strchr(m, '\r');
}

static void expect_error(const char *what, const char *text, const char *phrase)
{
	struct ffio_spec *s = (struct ffio_spec *)1;
	char err[512];
	int rc = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);

	if (!tap_ok(rc == -EINVAL && s == NULL && one_line(err) && strlen(err) < 400 &&
			    strstr(err, phrase),
		    "%s: one bounded line with \"%s\"", what, phrase))
		tap_diag("  rc %d: %.300s", rc, err);
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * times + tl + 1), *p = s;

	if (!s)
		exit(99);
	memcpy(p, head, hl);
	p += hl;
	for (size_t i = 0; i < times; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

static void hostile(void)
{
	const size_t MB = 1 << 20;
	char *t;

	t = repeat("", "a", MB, "(sys)");
	struct ffio_spec *s = NULL;
	char err[256];
	tap_ok(ffio_spec_parse(t, "FF_IO_OPTS", &s, err, sizeof err) == 0 && s &&
		       strlen(s->entry[0].pattern) == MB,
	       "1 MB pattern is accepted and kept whole");
	ffio_spec_free(s);
	free(t);

	t = repeat("", "(", MB, "");
	expect_error("1 MB of '('", t, "column 1: expected a file name pattern before '('");
	free(t);
	t = repeat("a", "(", MB, "");
	expect_error("deep nesting a((((...", t, "column 3: expected a layer name, found \"(\"");
	free(t);
	t = repeat("a(", "event,", MB / 6, "sys)");
	expect_error("1 MB layer list", t, "column 99: too many layers (at most 16)");
	free(t);
	t = repeat("a(eie:", "9", MB, ")");
	expect_error("1 MB number", t, "column 7: number too large");
	free(t);
	t = repeat("a(eie.", "x", MB, ")");
	expect_error("1 MB flag name", t, "column 7: unknown flag \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
	free(t);
	t = repeat("a(", "z", MB, ")");
	expect_error("1 MB layer name", t, "column 3: unknown layer \"zzzz");
	free(t);
	t = repeat("", "a(sys) ", 1025, "");
	expect_error("1025 entries", t, "entry 1025 \"a(sys)\", column 7169: too many entries (at most 1024)");
	free(t);
	t = repeat("", " ", MB, "a(sys, ,)");
	expect_error("1 MB of blanks first", t, "column 1048584: expected a layer name");
	free(t);

	/* Every byte value (but NUL) as a layer name, and as a whole spec. */
	char one[8];
	int bad = 0;
	for (int c = 1; c < 256; c++) {
		snprintf(one, sizeof one, "a(%c)", c);
		s = NULL;
		int rc = ffio_spec_parse(one, "FF_IO_OPTS", &s, err, sizeof err);
		if (rc != -EINVAL || s || !one_line(err))
			bad++;
		ffio_spec_free(s);
	}
	tap_is(bad, 0, "a(<any byte>): one-line error for each of the 255 bytes");

	/* A tiny err buffer is truncated, not overrun; no buffer at all is fine. */
	char tiny[8];
	memset(tiny, 'X', sizeof tiny);
	s = NULL;
	tap_ok(ffio_spec_parse("a(bogus)", "FF_IO_OPTS", &s, tiny, 5) == -EINVAL &&
		       strcmp(tiny, "FF_I") == 0 && tiny[5] == 'X',
	       "error truncated to errlen");
	tap_ok(ffio_spec_parse("a(bogus)", "FF_IO_OPTS", &s, NULL, 0) == -EINVAL && s == NULL,
	       "no err buffer");
}

int main(void)
{
	const int n = (int)(sizeof cases / sizeof cases[0]);

	for (int i = 0; i < n; i++) {
		struct ffio_spec *s = (struct ffio_spec *)1;
		char err[1024];
		int rc = ffio_spec_parse(cases[i].text, "FF_IO_OPTS", &s, err, sizeof err);
		tap_ok(rc == -EINVAL && s == NULL, "rejected: case %d", i + 1);
		tap_is_str(err, cases[i].msg, "message of case %d", i + 1);
	}
	hostile();
	return tap_done();
}
