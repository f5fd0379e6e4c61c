/* netcdf_glue/ffio_netcdf.c -- libffio_netcdf.so: what only serial netCDF
 * knows, told to ffio.  Preloaded after libffio.so, or linked ahead of
 * -lnetcdf, it wraps a few netCDF calls and passes each on to the real one:
 *
 *   nc_create, nc__create, nc_open, nc__open: learn ncid -> file (device,
 *       inode) and the open mode.  A file opened for writing without
 *       NC_SHARE has one writer: it is marked FFIO_FILE_SIEVE so that a
 *       cache may fill gaps.  With FF_IO_NETCDF_CHUNK set, a cached file
 *       whose caller gave no chunk size hint gets that netCDF window
 *       (off by default: measured, it does not pay; see chunk_for()).
 *   nc_sync: a flush point for that file.  Clean cached data is dropped
 *       first (an NC_SHARE reader rereads the header from the file), and
 *       the file is flushed after netCDF's own sync (its readers see the
 *       data right after).
 *   nc_abort: when netCDF deletes the file (it was being created), the
 *       data ffio still buffers is dropped instead of written.  ffio keeps
 *       the file open across the abort, looks whether netCDF removed it,
 *       and only then discards; otherwise the data is written as usual.
 *   nc_close: forgets the ncid.
 *
 * Files that match no FF_IO_OPTS entry are not affected.  netCDF is not
 * thread-safe; neither is this bookkeeping meant to be (one lock guards it
 * all the same).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netcdf.h>

#include "ffio_ext.h"

/* ---- the real netCDF calls --------------------------------------------- */

struct real_calls {
	int (*nc_create)(const char *, int, int *);
	int (*nc__create)(const char *, int, size_t, size_t *, int *);
	int (*nc_open)(const char *, int, int *);
	int (*nc__open)(const char *, int, size_t *, int *);
	int (*nc_sync)(int);
	int (*nc_abort)(int);
	int (*nc_close)(int);
};

/* Fill r from handle (RTLD_NEXT or a dlopen handle); 0 when every call was
 * found and none of them is ours. */
static int real_lookup(void *handle, struct real_calls *r)
{
	r->nc_create = (int (*)(const char *, int, int *))dlsym(handle, "nc_create");
	r->nc__create = (int (*)(const char *, int, size_t, size_t *, int *))dlsym(handle, "nc__create");
	r->nc_open = (int (*)(const char *, int, int *))dlsym(handle, "nc_open");
	r->nc__open = (int (*)(const char *, int, size_t *, int *))dlsym(handle, "nc__open");
	r->nc_sync = (int (*)(int))dlsym(handle, "nc_sync");
	r->nc_abort = (int (*)(int))dlsym(handle, "nc_abort");
	r->nc_close = (int (*)(int))dlsym(handle, "nc_close");
	if (!r->nc_create || !r->nc__create || !r->nc_open || !r->nc__open ||
	    !r->nc_sync || !r->nc_abort || !r->nc_close)
		return -1;
	return r->nc_create == nc_create ? -1 : 0;
}

/* Where the real calls are.  A program linked with -lnetcdf, or preloaded
 * with it, has libnetcdf in the global scope: RTLD_NEXT finds it, for every
 * caller.  A library loaded later with dlopen (a Python extension such as
 * netCDF4-python's, an R package, a plugin) brings its libnetcdf in its
 * own local scope, which RTLD_NEXT does not search; its calls still come
 * here (the preloaded definitions come first in every scope), and the real
 * ones are those its own scope holds: found by asking the caller's object
 * (dlsym on it searches it and its dependencies, in load order).  Those are
 * remembered per calling object, a few of them. */
static struct real_calls global_real;
static int have_global;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

#define MAX_CALLERS 16
static struct {
	const void *base; /* the calling object (dli_fbase) */
	struct real_calls r;
} callers[MAX_CALLERS];
static int ncallers;
static pthread_mutex_t callers_lock = PTHREAD_MUTEX_INITIALIZER;
static int missing_logged;

static void real_resolve(void)
{
	have_global = real_lookup(RTLD_NEXT, &global_real) == 0;
}

/* The real calls for a wrapper called from address caller, or NULL. */
static const struct real_calls *real_for(const void *caller)
{
	const struct real_calls *found = NULL;
	struct real_calls r;
	Dl_info info;
	void *h;

	pthread_once(&real_once, real_resolve);
	if (have_global)
		return &global_real;
	if (!dladdr(caller, &info) || !info.dli_fbase)
		goto missing;
	pthread_mutex_lock(&callers_lock);
	for (int i = 0; i < ncallers && !found; i++)
		if (callers[i].base == info.dli_fbase)
			found = &callers[i].r;
	if (!found && info.dli_fname && *info.dli_fname &&
	    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
		/* The reference is kept: the calls must stay where they are. */
		if (real_lookup(h, &r) != 0) {
			dlclose(h);
		} else if (ncallers < MAX_CALLERS) {
			callers[ncallers].base = info.dli_fbase;
			callers[ncallers].r = r;
			found = &callers[ncallers++].r;
		} else { /* too many callers to remember: looked up each time */
			static _Thread_local struct real_calls spare;
			spare = r;
			found = &spare;
		}
	}
	pthread_mutex_unlock(&callers_lock);
	if (found)
		return found;
missing:
	if (!__atomic_exchange_n(&missing_logged, 1, __ATOMIC_RELAXED))
		ffio_log("libffio_netcdf: netCDF's own calls not found (is libnetcdf loaded?)");
	return NULL;
}

/* netCDF calls its public functions from inside itself (nc_create calls
 * nc__create); only the outermost call is the application's. */
static _Thread_local int depth;

/* ---- ncid -> file -------------------------------------------------------- */

struct ncfile {
	int ncid;
	int mode;     /* as given to create/open */
	int created;
	int writable;
	dev_t dev;
	ino_t ino;
	char *path;
	struct ncfile *next;
};

static pthread_mutex_t ncfiles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncfile *ncfiles;

/* The ffio file behind path (device and inode from the kernel), or NULL. */
static struct ffio_file *file_of_path(const char *path, dev_t *dev, ino_t *ino)
{
	if (ffio_path_inode(path, dev, ino) < 0)
		return NULL;
	return ffio_file_find_inode(*dev, *ino);
}

/* Remember a file netCDF opened; mark it for the cache. */
static void remember(int ncid, const char *path, int mode, int created)
{
	struct ncfile *n = calloc(1, sizeof *n);
	struct ffio_file *f;

	if (!n)
		return; /* only an optimisation is lost */
	n->ncid = ncid;
	n->mode = mode;
	n->created = created;
	n->writable = created || (mode & NC_WRITE);
	n->path = strdup(path);
	if (!n->path) {
		free(n);
		return;
	}
	f = file_of_path(path, &n->dev, &n->ino);
	if (f && n->writable && !(mode & NC_SHARE)) {
		ffio_file_set_flag(f, FFIO_FILE_SIEVE, 1);
	}
	ffio_file_put(f);
	pthread_mutex_lock(&ncfiles_lock);
	n->next = ncfiles;
	ncfiles = n;
	pthread_mutex_unlock(&ncfiles_lock);
}

/* Take ncid's record out of the list (the caller frees it), or NULL. */
static struct ncfile *forget(int ncid)
{
	struct ncfile **p, *n = NULL;

	pthread_mutex_lock(&ncfiles_lock);
	for (p = &ncfiles; *p; p = &(*p)->next) {
		if ((*p)->ncid == ncid) {
			n = *p;
			*p = n->next;
			break;
		}
	}
	pthread_mutex_unlock(&ncfiles_lock);
	return n;
}

static struct ffio_file *file_of_ncid(int ncid, int *writable)
{
	struct ffio_file *f = NULL;

	pthread_mutex_lock(&ncfiles_lock);
	for (struct ncfile *n = ncfiles; n; n = n->next) {
		if (n->ncid == ncid) {
			f = ffio_file_find_inode(n->dev, n->ino);
			*writable = n->writable;
			break;
		}
	}
	pthread_mutex_unlock(&ncfiles_lock);
	return f;
}

static void ncfile_free(struct ncfile *n)
{
	if (n) {
		free(n->path);
		free(n);
	}
}

/* ---- netCDF's window ----------------------------------------------------- */

/* The chunk size hint to give netCDF for path when its caller gave none:
 * FF_IO_NETCDF_CHUNK (bytes; suffix k or m) when set and path's stack has a
 * cache, else 0 (netCDF's default: its window is 2 x st_blksize).
 * Measured (bench/netcdf_tilerec.sh): a window of the cache page size
 * (1 MiB) made the tile + record pattern 2-3x slower than netCDF's default,
 * since netCDF then moves a whole window for every small record; 16 KiB
 * was no better than the default.  So it is off unless asked for. */
static size_t chunk_for(const char *path)
{
	const char *env = secure_getenv("FF_IO_NETCDF_CHUNK");
	const char *layer[FFIO_MAX_LAYERS];
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return 0;
	int n = ffio_path_layers(path, layer, FFIO_MAX_LAYERS);
	for (int i = 0; i < n && i < FFIO_MAX_LAYERS; i++) {
		if (strcmp(layer[i], "cache") != 0)
			continue;
		v = strtoull(env, &end, 0);
		if (*end == 'k' || *end == 'K')
			v <<= 10;
		else if (*end == 'm' || *end == 'M')
			v <<= 20;
		return (size_t)v;
	}
	return 0;
}

/* ---- the wrapped calls --------------------------------------------------- */

/* Each wrapper finds the real calls of its caller (real_for), so that a
 * call behaves as it would without the glue; nc_create and nc_open share
 * the work of nc__create and nc__open (netCDF's own nc_create is
 * nc__create with no size hints). */
#define REAL_OR_FAIL(real)                                                 \
	const struct real_calls *real = real_for(__builtin_return_address(0)); \
	if (!real)                                                             \
		return NC_ENOTBUILT

static int create(const struct real_calls *real, const char *path, int cmode, size_t initialsz,
		  size_t *chunksizehintp, int *ncidp)
{
	size_t chunk = 0;
	int ret;

	if (path && !(cmode & NC_NETCDF4) && !(chunksizehintp && *chunksizehintp))
		chunk = chunk_for(path);
	depth++;
	ret = real->nc__create(path, cmode, initialsz, chunk ? &chunk : chunksizehintp, ncidp);
	depth--;
	if (ret == NC_NOERR && path)
		remember(*ncidp, path, cmode, 1);
	return ret;
}

int nc__create(const char *path, int cmode, size_t initialsz, size_t *chunksizehintp, int *ncidp)
{
	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc__create(path, cmode, initialsz, chunksizehintp, ncidp);
	return create(real, path, cmode, initialsz, chunksizehintp, ncidp);
}

int nc_create(const char *path, int cmode, int *ncidp)
{
	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc_create(path, cmode, ncidp);
	return create(real, path, cmode, 0, NULL, ncidp);
}

static int open_(const struct real_calls *real, const char *path, int mode, size_t *chunksizehintp, int *ncidp)
{
	size_t chunk = 0;
	int ret;

	if (path && !(chunksizehintp && *chunksizehintp))
		chunk = chunk_for(path);
	depth++;
	ret = real->nc__open(path, mode, chunk ? &chunk : chunksizehintp, ncidp);
	depth--;
	if (ret == NC_NOERR && path)
		remember(*ncidp, path, mode, 0);
	return ret;
}

int nc__open(const char *path, int mode, size_t *chunksizehintp, int *ncidp)
{
	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc__open(path, mode, chunksizehintp, ncidp);
	return open_(real, path, mode, chunksizehintp, ncidp);
}

int nc_open(const char *path, int mode, int *ncidp)
{
	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc_open(path, mode, ncidp);
	return open_(real, path, mode, NULL, ncidp);
}

int nc_sync(int ncid)
{
	struct ffio_file *f;
	int ret, err, writable = 0;

	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc_sync(ncid);
	f = file_of_ncid(ncid, &writable);
	/* A reader rereads the header: it must come from the file. */
	if (f && (err = ffio_file_invalidate(f)) < 0) {
		ffio_file_put(f);
		return -err; /* netCDF reports system errors as positive errno */
	}
	depth++;
	ret = real->nc_sync(ncid);
	depth--;
	if (ret == NC_NOERR && f && writable && (err = ffio_file_flush(f)) < 0)
		ret = -err;
	ffio_file_put(f);
	return ret;
}

int nc_abort(int ncid)
{
	struct ncfile *n;
	struct ffio_file *f = NULL;
	int ret, held = -1;

	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc_abort(ncid);
	n = forget(ncid);
	if (n && n->created)
		f = ffio_file_find_inode(n->dev, n->ino);
	if (f) {
		ffio_file_hold(f); /* its stack stays open across netCDF's close */
		held = 1;
	}
	depth++;
	ret = real->nc_abort(ncid);
	depth--;
	if (held >= 0) {
		/* Did netCDF delete the file?  Then nobody will read its data. */
		dev_t dev;
		ino_t ino;
		int err = ffio_path_inode(n->path, &dev, &ino);
		int gone = err < 0 ? err == -ENOENT : dev != n->dev || ino != n->ino;
		if (gone)
			(void)ffio_file_discard(f); /* -ENOTSUP: written as usual */
		(void)ffio_file_unhold(f);
	}
	ffio_file_put(f);
	ncfile_free(n);
	return ret;
}

int nc_close(int ncid)
{
	int ret;

	REAL_OR_FAIL(real);
	if (depth > 0)
		return real->nc_close(ncid);
	depth++;
	ret = real->nc_close(ncid);
	depth--;
	ncfile_free(forget(ncid)); /* netCDF forgets it even on error */
	return ret;
}
