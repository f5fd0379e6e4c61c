/* libffio/ext.c -- the functions of the extension API (ffio_ext.h) that are
 * not simply the core's own: the layers governing a path, and asynchronous
 * requests at the top of a descriptor's stack.  The rest of ffio_ext.h is
 * implemented where its objects live (file.c, ofd.c, govern.c, bufpool.c,
 * log.c). */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "ffio-internal.h"

int ffio_path_layers(const char *path, const char **names, int max)
{
	ffio_init();
	const struct ffio_entry *e = ffio_entry_for(path);
	if (!e)
		return 0;
	for (int i = 0; i < e->nlayers && i < max; i++)
		names[i] = e->layer[i].ops->name;
	return e->nlayers;
}

enum top_call { TOP_SUBMIT, TOP_COMMIT, TOP_REAP };

/* One asynchronous call on a stand-in for the layer above the top of fd's
 * stack, with the file's lock held as when a layer calls down (a done()
 * callback must therefore not call ffio on the same file).  -EBADF: fd is
 * not managed, or its file passes through (it has no stack any more). */
static int at_top(int fd, enum top_call call, struct ffio_req *r, unsigned min)
{
	struct ffio_file *f = ffio_fd_file(fd);
	int ret = -EBADF;

	if (!f)
		return ret;
	ffio_in_lib++;
	pthread_mutex_lock(&f->lock);
	struct ffio_layer above = {.below = f->top, .file = f};
	if (f->top) {
		switch (call) {
		case TOP_SUBMIT:
			ret = ffio_below_submit(&above, r);
			break;
		case TOP_COMMIT:
			ret = ffio_below_commit(&above);
			break;
		case TOP_REAP:
			ret = ffio_below_reap(&above, min);
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	ffio_leave();
	return ret;
}

int ffio_submit(int fd, struct ffio_req *r)
{
	return at_top(fd, TOP_SUBMIT, r, 0);
}

int ffio_commit(int fd)
{
	return at_top(fd, TOP_COMMIT, NULL, 0);
}

int ffio_reap(int fd, unsigned min)
{
	return at_top(fd, TOP_REAP, NULL, min);
}
