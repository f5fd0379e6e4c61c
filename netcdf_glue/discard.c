/* netcdf_glue/discard.c -- ffio_file_discard(): drop a file's buffered data
 * without writing it, for a file that is being deleted (nc_abort of a file
 * netCDF is creating).  Each layer that buffers data says how in its
 * optional discard method (the cache: invalidate without flushing).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "ffio-internal.h"

int ffio_file_discard(struct ffio_file *f)
{
	int err = -ENOTSUP;

	pthread_mutex_lock(&f->lock);
	ffio_in_lib++;
	for (struct ffio_layer *l = f->top; l; l = l->below) {
		if (!l->ops->discard)
			continue;
		int e = l->ops->discard(l);
		if (err == -ENOTSUP || (err == 0 && e < 0))
			err = e;
	}
	/* The data is gone on purpose: a write-behind error of it is moot. */
	if (err == 0)
		(void)ffio_file_take_error(f);
	ffio_in_lib--;
	pthread_mutex_unlock(&f->lock);
	return err;
}
