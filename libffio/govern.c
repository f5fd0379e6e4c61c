/* govern.c -- which entry governs a path: the one answer used by the open
 * wrappers, ffopen without a stack and the glue (ffio_entry_for).  In
 * order: an override pushed by a caller that knows more than FF_IO_OPTS
 * (the MPI glue: the MPI_Info key ffio_opts on MPI_File_open), the rank's
 * own spec (FF_IO_OPTS_RANK<n>), then FF_IO_OPTS.  (Write-through for MPI
 * atomic mode is a flag of the open file itself: FFIO_FILE_WRITETHROUGH.)
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ffio-internal.h"

/* One pushed override.  Overrides are never freed: a file opened under
 * one keeps a pointer to its entry for its whole life.  A popped override
 * stays in the list (inactive) and is reused when the same path and stack
 * come again. */
struct override {
	char *path;
	char *stack;
	int active;             /* pushes not yet popped */
	struct ffio_spec *spec; /* one entry, no pattern */
	struct override *next;
};

static pthread_mutex_t override_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void override_fork_safe(void)
{
	ffio_atfork_hold(&override_lock, FFIO_LOCK_OVERRIDE);
}
static struct override *overrides;
static atomic_int overrides_active;         /* fast path: 0 = nothing to match */
static struct ffio_spec *rank_spec;         /* FF_IO_OPTS_RANK<n>, or NULL */

int ffio_override_push(const char *path, const char *stack, char *err, size_t errlen)
{
	struct override *h;
	int ret = 0;

	pthread_mutex_lock(&override_lock);
	for (h = overrides; h; h = h->next)
		if (strcmp(h->path, path) == 0 && strcmp(h->stack, stack) == 0)
			break;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h) {
			ret = -ENOMEM;
			goto out;
		}
		ret = ffio_spec_parse_stack(stack, "ffio_opts", &h->spec, err, errlen);
		if (ret == 0 && (!h->spec || h->spec->nentries != 1))
			ret = -EINVAL;
		if (ret == 0) {
			h->path = strdup(path);
			h->stack = strdup(stack);
			if (!h->path || !h->stack)
				ret = -ENOMEM;
		}
		if (ret < 0) {
			if (h->spec)
				ffio_spec_free(h->spec);
			free(h->path);
			free(h->stack);
			free(h);
			goto out;
		}
		h->next = overrides;
		overrides = h;
	}
	h->active++;
	atomic_fetch_add(&overrides_active, 1);
out:
	pthread_mutex_unlock(&override_lock);
	return ret;
}

void ffio_override_pop(const char *path)
{
	pthread_mutex_lock(&override_lock);
	for (struct override *h = overrides; h; h = h->next) {
		if (h->active > 0 && strcmp(h->path, path) == 0) {
			h->active--;
			atomic_fetch_sub(&overrides_active, 1);
			break;
		}
	}
	pthread_mutex_unlock(&override_lock);
}

int ffio_rank_spec_set(const char *text, const char *source, char *err, size_t errlen)
{
	struct ffio_spec *s = NULL;
	int ret = ffio_spec_parse(text, source, &s, err, errlen);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&override_lock);
	/* An earlier rank spec may be in use by open files: keep it. */
	rank_spec = s;
	atomic_fetch_add(&overrides_active, 1);
	pthread_mutex_unlock(&override_lock);
	return 0;
}

struct ffio_entry *ffio_entry_for(const char *path)
{
	struct ffio_entry *e = NULL;

	if (!path)
		return NULL;
	if (atomic_load_explicit(&overrides_active, memory_order_relaxed) == 0)
		return ffio_global_spec ? ffio_spec_match(ffio_global_spec, path) : NULL;
	pthread_mutex_lock(&override_lock);
	for (struct override *h = overrides; h; h = h->next) {
		if (h->active > 0 && strcmp(h->path, path) == 0) {
			e = &h->spec->entry[0];
			break;
		}
	}
	if (!e && rank_spec)
		e = ffio_spec_match(rank_spec, path);
	pthread_mutex_unlock(&override_lock);
	if (!e && ffio_global_spec)
		e = ffio_spec_match(ffio_global_spec, path);
	return e;
}
