/* t/cache_of.h -- the cache layer of a managed descriptor's stack, for
 * tests linked with the core that look inside it (-I layers/cache): the
 * first layer from the top that is a cache, or NULL. */
#ifndef FFIO_TEST_CACHE_OF_H
#define FFIO_TEST_CACHE_OF_H

#include "ffio-internal.h"
#include "cache.h"

static inline struct cache *cache_of(int fd)
{
	struct ffio_ofd *o = ffio_fd_get(fd);
	for (struct ffio_layer *t = o && o->file ? o->file->top : NULL; t; t = t->below)
		if (t->ops == &ffio_layer_cache)
			return CACHE(t);
	return NULL;
}

#endif
