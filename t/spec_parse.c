/* t/spec_parse.c -- the FF_IO_OPTS parser on well-formed specs: every form of
 * the brief, SGI and Cray examples, positional = named arguments, aliases,
 * flag groups, defaults, the sys appended at the bottom, bare stacks, and
 * the eie/cachea/bufa mapping onto cache. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ffio-internal.h"
#include "tap.h"

static char err[1024];

/* text with control characters shown as '?' (one TAP line). */
static const char *shown(const char *text)
{
	static char buf[200];
	size_t i;

	for (i = 0; text[i] && i + 1 < sizeof buf; i++)
		buf[i] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	buf[i] = '\0';
	return buf;
}

/* Parse text, expecting success; NULL (with a failed test) otherwise. */
static struct ffio_spec *parse(const char *text)
{
	struct ffio_spec *s = NULL;
	int rc = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);

	if (!tap_ok(rc == 0 && s != NULL, "parses: %s", shown(text))) {
		tap_diag("  rc %d: %s", rc, err);
		return NULL;
	}
	return s;
}

/* The names of the layers of entry e, joined by ',' (as run). */
static const char *stack_of(const struct ffio_entry *e)
{
	static char buf[256];

	buf[0] = '\0';
	for (int i = 0; i < e->nlayers; i++) {
		if (i)
			strcat(buf, ",");
		strcat(buf, e->layer[i].ops->name);
	}
	return buf;
}

static unsigned flag_bit(const struct ffio_layer_ops *ops, const char *name)
{
	for (int i = 0; ops->flags && ops->flags[i].name; i++)
		if (strcmp(ops->flags[i].name, name) == 0)
			return ops->flags[i].bit;
	return 0;
}

static int has_params(const struct ffio_layer_ops *ops, int n)
{
	int k = 0;
	while (ops->params && ops->params[k].name)
		k++;
	return k >= n;
}

/* The brief's example, SGI's eie. */
static void brief_example(void)
{
	const char *text = "*.nc(event.summary.mbytes, cache:1m:64:4, uring:64) "
			   "/scratch/*.dat(eie.direct.mbytes:4096:128:6:1:1:0)";
	struct ffio_spec *s;

	if (!has_params(&ffio_layer_cache, 3)) {
		for (int i = 0; i < 12; i++)
			tap_skip("the cache layer does not declare its parameters yet");
		return;
	}
	s = parse(text);
	if (!s) {
		for (int i = 0; i < 11; i++)
			tap_ok(0, "(not parsed)");
		return;
	}
	tap_is(s->nentries, 2, "two entries");
	tap_is_str(s->entry[0].pattern, "*.nc", "first pattern");
	tap_is(s->entry[0].has_slash, 0, "*.nc has no slash");
	tap_is_str(stack_of(&s->entry[0]),
		   ffio_layer_uring.unavailable ? "event,cache,sys" : "event,cache,uring",
		   "first stack (bottom given; sys where uring is not built)");
	tap_is(s->entry[0].layer[1].arg[FFIO_CACHE_PAGE], 1 << 20, "cache page 1m");
	tap_is(s->entry[0].layer[1].arg[FFIO_CACHE_PAGES], 64, "cache pages 64");
	tap_is(s->entry[0].layer[1].arg[FFIO_CACHE_AHEAD], 4, "cache ahead 4");
	tap_is_str(s->entry[1].pattern, "/scratch/*.dat", "second pattern");
	tap_is(s->entry[1].has_slash, 1, "/scratch/*.dat has a slash");
	tap_is_str(stack_of(&s->entry[1]), "cache,sys", "eie runs as cache, sys appended");
	tap_is(s->entry[1].layer[0].flags, FFIO_CACHE_DIRECT | FFIO_CACHE_SHARED,
	       "eie.direct with SHARE 1 -> cache .direct .shared");
	ffio_spec_free(s);
}

/* Mapping of eie / cachea / bufa: values checked whether or not the cache
 * declares its parameters yet (the mapping uses only the FFIO_CACHE_* slots). */
static void compat_mapping(void)
{
	struct ffio_spec *s;
	struct ffio_layer_spec *ls;

	s = parse("test*(eie.direct.mbytes:4096:60:6:1:1:0, event.summary.mbytes.notrace)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_is_str(stack_of(&s->entry[0]), "cache,event,sys", "SGI example: eie first");
		tap_ok(ls->ops == &ffio_layer_cache, "eie -> cache");
		tap_is(ls->arg[FFIO_CACHE_PAGE], 4096LL * 4096, "SIZE 4096 blocks = 16 MiB pages");
		tap_is(ls->arg[FFIO_CACHE_PAGES], 60, "NUM 60");
		tap_is(ls->arg[FFIO_CACHE_AHEAD], 6, "LEAD 6");
		tap_is(ls->flags, FFIO_CACHE_DIRECT | FFIO_CACHE_SHARED, ".direct, SHARE 1");
		tap_is_str(ls->text, "eie.direct.mbytes:4096:60:6:1:1:0", "label as written");
		unsigned notrace = flag_bit(&ffio_layer_event, "notrace");
		unsigned mbytes = flag_bit(&ffio_layer_event, "mbytes");
		tap_is(s->entry[0].layer[1].flags, notrace | mbytes,
		       "event.summary.mbytes.notrace: notrace replaced summary");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 8; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(eie.nodirect.kbytes.diag:16:4:0:0)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_is(ls->flags, FFIO_CACHE_DIAG, "eie.nodirect.diag SHARE 0 -> .diag only");
		tap_is(ls->arg[FFIO_CACHE_PAGE], 16 * 4096, "16 blocks = 64 KiB");
		tap_is(ls->arg[FFIO_CACHE_PAGES], 4, "4 pages");
		tap_is(ls->arg[FFIO_CACHE_AHEAD], 0, "no read-ahead");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 4; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(eie.direct.nodirect.diag.nodiag:size=2:num=3:lead=1)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_is(ls->flags, 0, "later flags of a group replace earlier ones");
		tap_is(ls->arg[FFIO_CACHE_PAGE], 2 * 4096, "named size");
		tap_is(ls->arg[FFIO_CACHE_PAGES], 3, "named num");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 3; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*.nc(bufa:336:2)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_is_str(stack_of(&s->entry[0]), "cache,sys", "bufa -> cache, sys");
		tap_is(ls->arg[FFIO_CACHE_PAGE], 336LL * 4096, "netCDF's bufa:336:2 page");
		tap_is(ls->arg[FFIO_CACHE_PAGES], 2, "2 buffers");
		tap_is(ls->arg[FFIO_CACHE_AHEAD], 1, "one buffer ahead");
		tap_is(ls->flags, 0, "no flags");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 5; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(cachea:256:8:2:1)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_ok(ls->ops == &ffio_layer_cache, "cachea -> cache");
		tap_is(ls->arg[FFIO_CACHE_PAGE], 1 << 20, "256 blocks = 1 MiB");
		tap_is(ls->arg[FFIO_CACHE_PAGES], 8, "8 buffers");
		tap_is(ls->arg[FFIO_CACHE_AHEAD], 2, "lead 2");
		tap_is(ls->flags, FFIO_CACHE_SHARED, "SHARE 1 -> .shared");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 5; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(cachea:bs=8:nbufs=4)");
	if (s) {
		ls = &s->entry[0].layer[0];
		tap_is(ls->arg[FFIO_CACHE_PAGE], 8 * 4096, "cachea named bs");
		tap_is(ls->given & 3u, 3, "page and pages marked given");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 2; i++)
			tap_ok(0, "(not parsed)");
	}
}

/* cache:1m:64:4 == cache:page=1m:pages=64:ahead=4 (and mixtures). */
static void positional_named(void)
{
	static const char *const forms[] = {
		"*(cache:1m:64:4)", "*(cache:page=1m:pages=64:ahead=4)",
		"*(cache:ahead=4:pages=64:page=1m)", "*(cache:1024k:pages=64:ahead=4)",
		"*(cache:1048576:64:4)",
	};
	struct ffio_spec *first = NULL;

	if (!has_params(&ffio_layer_cache, 3)) {
		for (int i = 0; i < 5; i++)
			tap_skip("the cache layer does not declare its parameters yet");
		return;
	}
	for (int i = 0; i < 5; i++) {
		struct ffio_spec *s = NULL;
		int rc = ffio_spec_parse(forms[i], "FF_IO_OPTS", &s, err, sizeof err);
		if (rc) {
			tap_ok(0, "%s: %s", forms[i], err);
			continue;
		}
		if (!first) {
			first = s;
			tap_ok(s->entry[0].layer[0].arg[0] == 1 << 20 &&
				       s->entry[0].layer[0].arg[1] == 64 &&
				       s->entry[0].layer[0].arg[2] == 4 &&
				       s->entry[0].layer[0].given == 7,
			       "%s: 1m, 64, 4, all given", forms[i]);
			continue;
		}
		tap_ok(memcmp(s->entry[0].layer[0].arg, first->entry[0].layer[0].arg,
			      sizeof s->entry[0].layer[0].arg) == 0 &&
			       s->entry[0].layer[0].given == first->entry[0].layer[0].given,
		       "%s == %s", forms[i], forms[0]);
		ffio_spec_free(s);
	}
	ffio_spec_free(first);
}

/* Defaults and given bits (uring declares depth, default 64). */
static void defaults(void)
{
	struct ffio_spec *s = parse("*(uring)");
	if (s) {
		struct ffio_layer_spec *ls = &s->entry[0].layer[0];
		if (ffio_layer_uring.unavailable) {
			tap_ok(ls->ops == &ffio_layer_sys, "uring unavailable here: sys instead");
			tap_is(ls->given, 0, "nothing given");
		} else {
			tap_is(ls->arg[0], ffio_layer_uring.params[0].def, "uring depth default");
			tap_is(ls->given, 0, "nothing given");
		}
		tap_is(s->entry[0].nlayers, 1, "uring is a bottom: nothing appended");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 3; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(uring.direct:depth=8)");
	if (s) {
		struct ffio_layer_spec *ls = &s->entry[0].layer[0];
		tap_is(ls->flags, flag_bit(ls->ops, "direct"), ".direct kept (also on fallback)");
		if (!ffio_layer_uring.unavailable) {
			tap_is(ls->arg[0], 8, "depth=8");
			tap_is(ls->given, 1, "depth given");
		} else {
			tap_skip("uring not available here");
			tap_skip("uring not available here");
		}
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 3; i++)
			tap_ok(0, "(not parsed)");
	}
}

/* Aliases, white space, several entries, appended sys, bare stacks. */
static void forms(void)
{
	struct ffio_spec *s;

	s = parse("  *.a(system)\t*.b(syscall.direct)\n*.c( event , sys )  ");
	if (s) {
		tap_is(s->nentries, 3, "three entries, any white space between");
		tap_ok(s->entry[0].layer[0].ops == &ffio_layer_sys, "system = sys");
		tap_ok(s->entry[1].layer[0].ops == &ffio_layer_sys, "syscall = sys");
		tap_is(s->entry[1].layer[0].flags, flag_bit(&ffio_layer_sys, "direct"), "sys.direct");
		tap_is_str(stack_of(&s->entry[2]), "event,sys", "spaces around layers");
		tap_is(s->entry[2].index, 3, "entry index 1-based");
		tap_is_str(s->entry[0].layer[0].text, "system", "text as written");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 7; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("*(event, event.trace)");
	if (s) {
		tap_is_str(stack_of(&s->entry[0]), "event,event,sys", "sys appended under two events");
		tap_is_str(s->entry[0].layer[2].text, "sys", "appended sys labelled sys");
		ffio_spec_free(s);
	} else {
		for (int i = 0; i < 2; i++)
			tap_ok(0, "(not parsed)");
	}

	s = parse("");
	tap_ok(s && s->nentries == 0, "empty spec: no entries");
	ffio_spec_free(s);
	s = parse(" \t\n ");
	tap_ok(s && s->nentries == 0, "blank spec: no entries");
	ffio_spec_free(s);

	/* 15 layers + sys = 16 (the maximum). */
	s = parse("*(event,event,event,event,event,event,event,event,event,event,event,event,event,event,event)");
	tap_ok(s && s->entry[0].nlayers == FFIO_MAX_LAYERS, "15 layers + sys = %d", FFIO_MAX_LAYERS);
	ffio_spec_free(s);

	s = NULL;
	int rc = ffio_spec_parse_stack("event.summary, bufa:336:2", "ffio_opts", &s, err, sizeof err);
	tap_ok(rc == 0 && s && s->nentries == 1 && strcmp(stack_of(&s->entry[0]), "event,cache,sys") == 0,
	       "parse_stack: event, bufa -> event,cache,sys");
	tap_ok(rc == 0 && s && strcmp(s->entry[0].pattern, "*") == 0, "parse_stack pattern *");
	ffio_spec_free(s);
	s = NULL;
	rc = ffio_spec_parse_stack("event, nope", "ffio_opts", &s, err, sizeof err);
	tap_is_str(err, "ffio_opts: entry 1 \"event, nope\", column 8: unknown layer \"nope\" "
			"(expected one of: sys, uring, cache, eie, cachea, bufa, event, fault, delay)",
		   "parse_stack error names its source");
	tap_ok(rc == -EINVAL && s == NULL, "parse_stack error: -EINVAL, no spec");
}

/* fault:OP:ERRNO:AFTER = fault:op=OP:errno=ERRNO:after=N; delay's time units. */
static void fault_delay(void)
{
	struct ffio_spec *a = NULL, *b = NULL;
	char e2[256];

	if (!has_params(&ffio_layer_fault, 3) || !has_params(&ffio_layer_delay, 1)) {
		for (int i = 0; i < 4; i++)
			tap_skip("fault/delay do not declare their parameters yet");
		return;
	}
	int ra = ffio_spec_parse("*(fault:write:ENOSPC:3)", "FF_IO_OPTS", &a, err, sizeof err);
	int rb = ffio_spec_parse("*(fault:after=3:errno=28:op=write)", "FF_IO_OPTS", &b, e2, sizeof e2);
	tap_ok(ra == 0 && rb == 0 &&
		       memcmp(a->entry[0].layer[0].arg, b->entry[0].layer[0].arg,
			      sizeof a->entry[0].layer[0].arg) == 0,
	       "fault:write:ENOSPC:3 == fault:after=3:errno=28:op=write");
	tap_ok(ra == 0 && a->entry[0].layer[0].arg[1] == ENOSPC && a->entry[0].layer[0].arg[2] == 3,
	       "errno name ENOSPC, after 3");
	ffio_spec_free(a);
	ffio_spec_free(b);
	a = parse("*(delay:10ms, sys)");
	tap_ok(a && a->entry[0].layer[0].arg[0] == 10000000, "delay:10ms = 10^7 ns");
	ffio_spec_free(a);
}

/* Where uring is not built: one message for all the uring layers parsed. */
static char logpath[] = "/tmp/ffio-spec-parse-XXXXXX";

static void fallback_log_start(void)
{
	int fd = mkstemp(logpath);

	if (fd < 0)
		exit(99);
	close(fd);
	setenv("FF_IO_LOGFILE", logpath, 1); /* the log opens at its first message */
}

static void fallback_log_check(void)
{
	char buf[4096];
	FILE *f = fopen(logpath, "r");
	int lines = 0, fallbacks = 0;

	while (f && fgets(buf, sizeof buf, f)) {
		lines++;
		if (strstr(buf, "ffio: layer 'uring' is not available here (") &&
		    strstr(buf, "); using 'sys'"))
			fallbacks++;
	}
	if (f)
		fclose(f);
	unlink(logpath);
	if (ffio_layer_uring.unavailable) {
		tap_is(fallbacks, 1, "one fallback message for every uring parsed");
		tap_is(lines, 1, "and nothing else logged");
	} else {
		tap_skip("uring is available here: no fallback");
		tap_skip("uring is available here: no fallback");
	}
}

int main(void)
{
	fallback_log_start();
	brief_example();
	fault_delay();
	compat_mapping();
	positional_named();
	defaults();
	forms();
	fallback_log_check();
	return tap_done();
}
