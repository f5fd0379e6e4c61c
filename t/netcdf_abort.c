/* t/netcdf_abort.c -- nc_abort through libffio_netcdf (relinked).
 * 1. A file being created (still in its first define mode): netCDF deletes
 *    it; the data ffio buffered for it is dropped, not written.  A hard
 *    link made before the abort shows what reached the file: raw netCDF
 *    writes its header there (40 bytes); through a cache with a discard
 *    method nothing.
 * 2. A file past its first nc_enddef: nc_abort keeps it, and every byte
 *    the program wrote is there, identical to the same file closed with
 *    nc_close outside ffio.
 */
#include <errno.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"

#define SPEC "*.nc(cache:1m:16:0)"
enum { N = 50000 };

static char dir[200];

/* Define a file with one int variable; write it unless define_only. */
static int build(const char *path, int define_only, int do_abort, const char *link_to)
{
	int ncid, dim, varid, ret;
	static int v[N];

	if ((ret = nc_create(path, NC_CLOBBER, &ncid)) != NC_NOERR)
		return ret;
	nc_def_dim(ncid, "n", N, &dim);
	nc_def_var(ncid, "v", NC_INT, 1, &dim, &varid);
	if (!define_only) {
		for (int i = 0; i < N; i++)
			v[i] = i * 3;
		if ((ret = nc_enddef(ncid)) != NC_NOERR || (ret = nc_put_var_int(ncid, varid, v)) != NC_NOERR)
			return ret;
	}
	/* A raw system call: ffio's link writes every file back first (a name
	 * made may be a sign to another process), which would write what the
	 * abort is to drop. */
	if (link_to && syscall(SYS_linkat, AT_FDCWD, path, AT_FDCWD, link_to, 0) < 0)
		return NC_EIO;
	return do_abort ? nc_abort(ncid) : nc_close(ncid);
}

static int same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

int main(int argc, char **argv)
{
	char path[300], keep[300], ref[300];
	struct stat st;

	if (!getenv("FF_IO_OPTS")) {
		setenv("FF_IO_OPTS", SPEC, 1);
		execv(tap_self(), argv);
		tap_skip_all("cannot re-execute with FF_IO_OPTS set");
	}
	(void)argc;
	snprintf(dir, sizeof dir, "%s/ffio-ncabort-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (mkdir(dir, 0755) < 0)
		tap_skip_all("cannot make a scratch directory");
	tap_plan(6);

	/* 1: created and aborted in define mode. */
	snprintf(path, sizeof path, "%s/new.nc", dir);
	snprintf(keep, sizeof keep, "%s/new.keep", dir);
	tap_is(build(path, 1, 1, keep), NC_NOERR, "create, define, link, nc_abort");
	tap_ok(access(path, F_OK) < 0 && errno == ENOENT, "netCDF deleted the file");
	if (stat(keep, &st) < 0)
		tap_ok(0, "stat of the hard link: %s", strerror(errno));
	else
		tap_ok(st.st_size == 0, "its buffered data was dropped, not written (size %lld)",
		       (long long)st.st_size);

	/* 2: aborted after enddef: kept, complete.  The reference (*.ref)
	 * matches no FF_IO_OPTS entry: plain I/O. */
	snprintf(path, sizeof path, "%s/old.nc", dir);
	snprintf(ref, sizeof ref, "%s/old.ref", dir);
	tap_is(build(path, 0, 1, NULL), NC_NOERR, "create, enddef, write, nc_abort");
	tap_is(build(ref, 0, 0, NULL), NC_NOERR, "the same written raw and closed");
	tap_ok(same_bytes(path, ref), "the aborted file is kept, byte-identical to the closed one");

	unlink(path);
	unlink(ref);
	unlink(keep);
	rmdir(dir);
	return tap_done();
}
