/* bench/netcdf_tilerec.c -- the serial netCDF pattern of the cache issue:
 * a 3-D float array LON x LAT x LEV written tile by tile (TX x TY tiles, as
 * a master writes its workers' data), then NV record variables written
 * record by record, variable after variable (as a model writes its
 * history), then every tile read back.  Prints one line with the write and
 * read times; run it raw and through ffio (bench/netcdf_tilerec.sh).
 *   netcdf_tilerec PATH [LON LAT LEV TX TY NV NREC RECLEN]
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#define CHECK(call)                                                             \
	do {                                                                    \
		int e_ = (call);                                                \
		if (e_ != NC_NOERR) {                                           \
			fprintf(stderr, "%s: %s\n", #call, nc_strerror(e_));   \
			exit(1);                                                \
		}                                                               \
	} while (0)

int main(int argc, char **argv)
{
	size_t lon = 240, lat = 240, lev = 60, tx = 4, ty = 4, nv = 8, nrec = 400, reclen = 64;
	size_t *opt[] = {&lon, &lat, &lev, &tx, &ty, &nv, &nrec, &reclen};
	int ncid, dim[5], var3, *rv;
	float *buf;
	double t0, tw, tr;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH [LON LAT LEV TX TY NV NREC RECLEN]\n", argv[0]);
		return 2;
	}
	for (int i = 2; i < argc && i - 2 < 8; i++)
		*opt[i - 2] = strtoul(argv[i], NULL, 0);
	rv = calloc(nv, sizeof *rv);
	buf = malloc(sizeof(float) * (lon * lat * lev / (tx * ty) + reclen + lon));
	if (!rv || !buf)
		return 1;

	t0 = bench_now();
	CHECK(nc_create(argv[1], NC_CLOBBER | NC_64BIT_OFFSET, &ncid));
	CHECK(nc_set_fill(ncid, NC_NOFILL, NULL));
	CHECK(nc_def_dim(ncid, "time", NC_UNLIMITED, &dim[0]));
	CHECK(nc_def_dim(ncid, "lev", lev, &dim[1]));
	CHECK(nc_def_dim(ncid, "lat", lat, &dim[2]));
	CHECK(nc_def_dim(ncid, "lon", lon, &dim[3]));
	CHECK(nc_def_dim(ncid, "n", reclen, &dim[4]));
	CHECK(nc_def_var(ncid, "field", NC_FLOAT, 3, &dim[1], &var3));
	for (size_t v = 0; v < nv; v++) {
		char name[32];
		snprintf(name, sizeof name, "rec%zu", v);
		CHECK(nc_def_var(ncid, name, NC_FLOAT, 2, (int[]){dim[0], dim[4]}, &rv[v]));
	}
	CHECK(nc_enddef(ncid));
	for (size_t j = 0; j < ty; j++) {
		for (size_t i = 0; i < tx; i++) {
			size_t start[3] = {0, j * (lat / ty), i * (lon / tx)};
			size_t count[3] = {lev, lat / ty, lon / tx};
			size_t n = count[0] * count[1] * count[2];
			for (size_t k = 0; k < n; k++)
				buf[k] = (float)(j * tx + i) + (float)k * 1e-3f;
			CHECK(nc_put_vara_float(ncid, var3, start, count, buf));
		}
	}
	for (size_t r = 0; r < nrec; r++) {
		for (size_t v = 0; v < nv; v++) {
			size_t start[2] = {r, 0}, count[2] = {1, reclen};
			for (size_t k = 0; k < reclen; k++)
				buf[k] = (float)(r * nv + v) + (float)k * 1e-2f;
			CHECK(nc_put_vara_float(ncid, rv[v], start, count, buf));
		}
	}
	CHECK(nc_close(ncid));
	tw = bench_now() - t0;

	t0 = bench_now();
	CHECK(nc_open(argv[1], NC_NOWRITE, &ncid));
	for (size_t j = 0; j < ty; j++) {
		for (size_t i = 0; i < tx; i++) {
			size_t start[3] = {0, j * (lat / ty), i * (lon / tx)};
			size_t count[3] = {lev, lat / ty, lon / tx};
			CHECK(nc_get_vara_float(ncid, var3, start, count, buf));
			if (buf[1] != (float)(j * tx + i) + 1e-3f) {
				fprintf(stderr, "tile %zu,%zu read back wrong\n", i, j);
				return 1;
			}
		}
	}
	CHECK(nc_close(ncid));
	tr = bench_now() - t0;
	printf("write %.4f read %.4f\n", tw, tr);
	return 0;
}
