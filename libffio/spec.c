/* libffio/spec.c -- the FF_IO_OPTS parser (placeholder). */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include "ffio-internal.h"

int ffio_spec_parse(const char *text, const char *source, struct ffio_spec **out, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: parser not written yet", source);
	*out = NULL;
	return -ENOSYS;
}
int ffio_spec_parse_stack(const char *text, const char *source, struct ffio_spec **out, char *err, size_t errlen)
{
	return ffio_spec_parse(text, source, out, err, errlen);
}
void ffio_spec_free(struct ffio_spec *s) { (void)s; }
struct ffio_entry *ffio_spec_match(const struct ffio_spec *s, const char *path) { return NULL; }
