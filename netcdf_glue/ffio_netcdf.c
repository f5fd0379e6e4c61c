/* netcdf_glue/ffio_netcdf.c -- libffio_netcdf.so: what only serial netCDF
 * knows, told to ffio.  Preloaded after libffio.so, or linked ahead of
 * -lnetcdf, it wraps a few netCDF calls and passes each on to the real one:
 *
 *   nc_create, nc__create, nc_open, nc__open: learn ncid -> file (device,
 *       inode) and the open mode.  A file opened for writing without
 *       NC_SHARE has one writer: it is marked FFIO_FILE_SIEVE so that a
 *       cache may fill gaps.  With FFIO_NETCDF_CHUNK set, a cached file
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

#include "ffio-internal.h"

/* ---- the real netCDF calls --------------------------------------------- */

static struct {
	int (*nc_create)(const char *, int, int *);
	int (*nc__create)(const char *, int, size_t, size_t *, int *);
	int (*nc_open)(const char *, int, int *);
	int (*nc__open)(const char *, int, size_t *, int *);
	int (*nc_sync)(int);
	int (*nc_abort)(int);
	int (*nc_close)(int);
} real;

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static int real_missing;

static void *next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		real_missing = 1;
	return p;
}

static void real_resolve(void)
{
	real.nc_create = next_symbol("nc_create");
	real.nc__create = next_symbol("nc__create");
	real.nc_open = next_symbol("nc_open");
	real.nc__open = next_symbol("nc__open");
	real.nc_sync = next_symbol("nc_sync");
	real.nc_abort = next_symbol("nc_abort");
	real.nc_close = next_symbol("nc_close");
	if (real_missing)
		ffio_log("libffio_netcdf: netCDF's own calls not found (is libnetcdf loaded?)");
	ffio_real_init();
	ffio_init();
}

static int real_ready(void)
{
	pthread_once(&real_once, real_resolve);
	return !real_missing;
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

/* The ffio file behind path (device and inode from stat), or NULL. */
static struct ffio_file *file_of_path(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return NULL;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return ffio_file_find_inode(st.st_dev, st.st_ino);
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
		ffio_file_set_hint(f, FFIO_FILE_SIEVE, 1);
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
 * FFIO_NETCDF_CHUNK (bytes; suffix k or m) when set and path's stack has a
 * cache, else 0 (netCDF's default: its window is 2 x st_blksize).
 * Measured (bench/netcdf_tilerec.sh): a window of the cache page size
 * (1 MiB) made the tile + record pattern 2-3x slower than netCDF's default,
 * since netCDF then moves a whole window for every small record; 16 KiB
 * was no better than the default.  So it is off unless asked for. */
static size_t chunk_for(const char *path)
{
	const char *env = getenv("FFIO_NETCDF_CHUNK");
	struct ffio_entry *e;
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return 0;
	e = ffio_hint_match(path);
	if (!e && ffio_global_spec)
		e = ffio_spec_match(ffio_global_spec, path);
	if (!e)
		return 0;
	for (int i = 0; i < e->nlayers; i++) {
		if (e->layer[i].ops != &ffio_layer_cache)
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

int nc__create(const char *path, int cmode, size_t initialsz, size_t *chunksizehintp, int *ncidp)
{
	size_t chunk = 0;
	int ret;

	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc__create(path, cmode, initialsz, chunksizehintp, ncidp);
	if (path && !(cmode & NC_NETCDF4) && !(chunksizehintp && *chunksizehintp))
		chunk = chunk_for(path);
	depth++;
	ret = real.nc__create(path, cmode, initialsz, chunk ? &chunk : chunksizehintp, ncidp);
	depth--;
	if (ret == NC_NOERR && path)
		remember(*ncidp, path, cmode, 1);
	return ret;
}

int nc_create(const char *path, int cmode, int *ncidp)
{
	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc_create(path, cmode, ncidp);
	return nc__create(path, cmode, 0, NULL, ncidp);
}

int nc__open(const char *path, int mode, size_t *chunksizehintp, int *ncidp)
{
	size_t chunk = 0;
	int ret;

	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc__open(path, mode, chunksizehintp, ncidp);
	if (path && !(chunksizehintp && *chunksizehintp))
		chunk = chunk_for(path);
	depth++;
	ret = real.nc__open(path, mode, chunk ? &chunk : chunksizehintp, ncidp);
	depth--;
	if (ret == NC_NOERR && path)
		remember(*ncidp, path, mode, 0);
	return ret;
}

int nc_open(const char *path, int mode, int *ncidp)
{
	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc_open(path, mode, ncidp);
	return nc__open(path, mode, NULL, ncidp);
}

int nc_sync(int ncid)
{
	struct ffio_file *f;
	int ret, err, writable = 0;

	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc_sync(ncid);
	f = file_of_ncid(ncid, &writable);
	/* A reader rereads the header: it must come from the file. */
	if (f && (err = ffio_file_invalidate(f)) < 0) {
		ffio_file_put(f);
		return -err; /* netCDF reports system errors as positive errno */
	}
	depth++;
	ret = real.nc_sync(ncid);
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
	struct stat st;
	int ret, held = -1;

	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc_abort(ncid);
	n = forget(ncid);
	if (n && n->created)
		f = ffio_file_find_inode(n->dev, n->ino);
	if (f) {
		ffio_file_hold(f); /* its stack stays open across netCDF's close */
		held = 1;
	}
	depth++;
	ret = real.nc_abort(ncid);
	depth--;
	if (held >= 0) {
		/* Did netCDF delete the file?  Then nobody will read its data. */
		int gone = stat(n->path, &st) < 0 ? errno == ENOENT
			   : st.st_dev != n->dev || st.st_ino != n->ino;
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

	if (!real_ready())
		return NC_ENOTBUILT;
	if (depth > 0)
		return real.nc_close(ncid);
	depth++;
	ret = real.nc_close(ncid);
	depth--;
	ncfile_free(forget(ncid)); /* netCDF forgets it even on error */
	return ret;
}
