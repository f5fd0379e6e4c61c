/* hint.c -- per-file and per-rank choices made by callers that know more
 * than FF_IO_OPTS: the MPI glue (libffio_mpi.so) tells the core "the next
 * open of this path uses this stack" (the MPI_Info hint ffio_opts), gives
 * a rank its own extra spec (FF_IO_OPTS_RANK<n>).  The open wrapper
 * consults ffio_hint_match() before ffio_spec_match().  (Write-through mode
 * for MPI atomic mode is a bit of the file itself: FFIO_FILE_WRITETHROUGH.)
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ffio-internal.h"

/* One pushed hint.  Hints are never freed: a file opened under a hint keeps
 * a pointer to its entry for its whole life.  A popped hint stays in the
 * list (inactive) and is reused when the same path and stack come again. */
struct hint {
	char *path;
	char *stack;
	int active;             /* pushes not yet popped */
	struct ffio_spec *spec; /* one entry, no pattern */
	struct hint *next;
};

static pthread_mutex_t hint_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hint *hints;
static atomic_int hints_active;             /* fast path: 0 = nothing to match */
static struct ffio_spec *rank_spec;         /* FF_IO_OPTS_RANK<n>, or NULL */

int ffio_hint_push(const char *path, const char *stack, char *err, size_t errlen)
{
	struct hint *h;
	int ret = 0;

	pthread_mutex_lock(&hint_lock);
	for (h = hints; h; h = h->next)
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
		h->next = hints;
		hints = h;
	}
	h->active++;
	atomic_fetch_add(&hints_active, 1);
out:
	pthread_mutex_unlock(&hint_lock);
	return ret;
}

void ffio_hint_pop(const char *path)
{
	pthread_mutex_lock(&hint_lock);
	for (struct hint *h = hints; h; h = h->next) {
		if (h->active > 0 && strcmp(h->path, path) == 0) {
			h->active--;
			atomic_fetch_sub(&hints_active, 1);
			break;
		}
	}
	pthread_mutex_unlock(&hint_lock);
}

int ffio_hint_set_rank_spec(const char *text, const char *source, char *err, size_t errlen)
{
	struct ffio_spec *s = NULL;
	int ret = ffio_spec_parse(text, source, &s, err, errlen);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&hint_lock);
	/* An earlier rank spec may be in use by open files: keep it. */
	rank_spec = s;
	atomic_fetch_add(&hints_active, 1);
	pthread_mutex_unlock(&hint_lock);
	return 0;
}

struct ffio_entry *ffio_hint_match(const char *path)
{
	struct ffio_entry *e = NULL;

	if (atomic_load_explicit(&hints_active, memory_order_relaxed) == 0 || !path)
		return NULL;
	pthread_mutex_lock(&hint_lock);
	for (struct hint *h = hints; h; h = h->next) {
		if (h->active > 0 && strcmp(h->path, path) == 0) {
			e = &h->spec->entry[0];
			break;
		}
	}
	if (!e && rank_spec)
		e = ffio_spec_match(rank_spec, path);
	pthread_mutex_unlock(&hint_lock);
	return e;
}
