/* t/rel_bigspec.c -- specs of any length: a 1 MiB FF_IO_OPTS (1000
 * entries of 1 KiB patterns; the parser takes at most 1024 entries) parses,
 * matches its first and last entries, one broken byte at its end gives one
 * bounded message naming the entry, 1025 entries give one clear message;
 * a 1 MiB single
 * pattern and a 1 MiB layer argument are rejected or accepted without
 * harm.  (The environment itself cannot carry more than 128 KiB in one
 * variable; rel_security.sh runs that size preloaded.)
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ffio-internal.h"
#include "tap.h"

#define NENT 1000
#define PLEN 1024

int main(void)
{
	size_t cap = 2u << 20, len = 0;
	char *text = malloc(cap), err[1024];
	struct ffio_spec *s = NULL;
	int r;

	if (!text)
		tap_skip_all("out of memory");
	char pad[PLEN + 1], path[PLEN + 64];
	memset(pad, 'p', PLEN);
	pad[PLEN] = '\0';
	for (int i = 0; i < NENT; i++)
		len += (size_t)snprintf(text + len, cap - len, "d/%s%05d.dat(cache:4k:2:0)  ", pad, i);
	len += (size_t)snprintf(text + len, cap - len, "*(event.summary)");
	tap_ok(len > 1000000, "a spec of %zu bytes", len);
	r = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);
	tap_is(r, 0, "it parses");
	if (r == 0) {
		tap_is(s->nentries, NENT + 1, "every entry is kept");
		snprintf(path, sizeof path, "d/%s%05d.dat", pad, 0);
		struct ffio_entry *e = ffio_spec_match(s, path);
		tap_ok(e && e->index == 1, "the first entry matches its file");
		snprintf(path, sizeof path, "d/%s%05d.dat", pad, NENT - 1);
		e = ffio_spec_match(s, path);
		tap_ok(e && e->index == NENT, "the last named entry matches its file");
		e = ffio_spec_match(s, "/y/other");
		tap_ok(e && e->index == NENT + 1, "the catch-all matches the rest");
		ffio_spec_free(s);
	} else {
		tap_diag("%s", err);
	}
	/* one broken byte at the very end */
	text[len - 1] = '(';
	err[0] = '\0';
	s = NULL;
	r = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);
	tap_ok(r < 0 && strlen(err) > 0 && strlen(err) < sizeof err && strchr(err, '\n') == NULL,
	       "a broken last entry: one message of %zu bytes", strlen(err));
	tap_ok(strstr(err, "entry 1001") != NULL, "it names the entry (1001): %.120s", err);
	/* more entries than the parser takes: one clear message */
	len = 0;
	for (int i = 0; i < 1025; i++)
		len += (size_t)snprintf(text + len, cap - len, "f%d(cache) ", i);
	s = NULL;
	r = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);
	tap_ok(r < 0 && strstr(err, "entry 1025") != NULL, "1025 entries: one message: %.120s", err);
	/* a 1 MiB pattern, a 1 MiB argument */
	memset(text, 'a', 1u << 20);
	memcpy(text + (1u << 20), "(cache)", 8);
	s = NULL;
	r = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);
	tap_ok(r == 0 || strlen(err) < sizeof err, "a 1 MiB pattern: %s", r == 0 ? "accepted" : "rejected with a message");
	if (r == 0 && s) {
		tap_ok(ffio_spec_match(s, "b") == NULL, "it matches nothing else");
		ffio_spec_free(s);
	} else {
		tap_ok(1, "nothing to match");
	}
	memcpy(text, "*.dat(cache:", 12);
	memset(text + 12, '9', 1u << 20);
	memcpy(text + 12 + (1u << 20), ")", 2);
	s = NULL;
	r = ffio_spec_parse(text, "FF_IO_OPTS", &s, err, sizeof err);
	tap_ok(r < 0 && strlen(err) < sizeof err, "a 1 MiB number as an argument: rejected with a message");
	if (r == 0)
		ffio_spec_free(s);
	free(text);
	return tap_done();
}
