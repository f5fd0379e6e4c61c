/* t/netcdf_write.c -- writes one deterministic netCDF file the way models
 * do (a 3-D float array tile by tile, record variables record by record,
 * variable after variable), then reads tiles back and checks them.  Used
 * by t/netcdf_formats.sh: built plain (run raw and preloaded) and relinked
 * with libffio_netcdf and libffio ahead of -lnetcdf.
 *   netcdf_write PATH FORMAT   (FORMAT: classic, 64bit, cdf5, nc4)
 * Exit 0 when every call succeeded and every value read back is right.
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NLON = 48, NLAT = 40, NLEV = 6, TX = 4, TY = 4, NREC = 30, NRV = 4 };

#define CHECK(call)                                                             \
	do {                                                                    \
		int e_ = (call);                                                \
		if (e_ != NC_NOERR) {                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				nc_strerror(e_));                               \
			exit(1);                                                \
		}                                                               \
	} while (0)

static float value(size_t lev, size_t lat, size_t lon)
{
	return (float)(lev * 100000 + lat * 1000 + lon) * 0.5f;
}

int main(int argc, char **argv)
{
	int mode, ncid, dim[4], var3, rv[NRV];
	static float tile[NLEV * NLAT * NLON];

	if (argc != 3) {
		fprintf(stderr, "usage: %s PATH classic|64bit|cdf5|nc4\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[2], "classic") == 0)
		mode = NC_CLOBBER;
	else if (strcmp(argv[2], "64bit") == 0)
		mode = NC_CLOBBER | NC_64BIT_OFFSET;
	else if (strcmp(argv[2], "cdf5") == 0)
		mode = NC_CLOBBER | NC_64BIT_DATA;
	else if (strcmp(argv[2], "nc4") == 0)
		mode = NC_CLOBBER | NC_NETCDF4;
	else
		return 2;

	CHECK(nc_create(argv[1], mode, &ncid));
	CHECK(nc_def_dim(ncid, "time", NC_UNLIMITED, &dim[0]));
	CHECK(nc_def_dim(ncid, "lev", NLEV, &dim[1]));
	CHECK(nc_def_dim(ncid, "lat", NLAT, &dim[2]));
	CHECK(nc_def_dim(ncid, "lon", NLON, &dim[3]));
	CHECK(nc_def_var(ncid, "temp", NC_FLOAT, 3, &dim[1], &var3));
	for (int v = 0; v < NRV; v++) {
		char name[16];
		snprintf(name, sizeof name, "rec%d", v);
		CHECK(nc_def_var(ncid, name, v % 2 ? NC_DOUBLE : NC_INT, 3,
				 (int[]){dim[0], dim[2], dim[3]}, &rv[v]));
	}
	CHECK(nc_put_att_text(ncid, NC_GLOBAL, "title", 9, "ffio test"));
	CHECK(nc_enddef(ncid));

	/* The 3-D array, tile by tile (as a master writes its workers' data). */
	for (int ty = 0; ty < TY; ty++) {
		for (int tx = 0; tx < TX; tx++) {
			size_t start[3] = {0, (size_t)ty * NLAT / TY, (size_t)tx * NLON / TX};
			size_t count[3] = {NLEV, NLAT / TY, NLON / TX};
			size_t k = 0;
			for (size_t z = 0; z < count[0]; z++)
				for (size_t y = 0; y < count[1]; y++)
					for (size_t x = 0; x < count[2]; x++)
						tile[k++] = value(z, start[1] + y, start[2] + x);
			CHECK(nc_put_vara_float(ncid, var3, start, count, tile));
		}
	}
	/* Record variables: each record, variable after variable. */
	for (size_t r = 0; r < NREC; r++) {
		for (int v = 0; v < NRV; v++) {
			static double rec[NLAT * NLON];
			size_t start[3] = {r, 0, 0}, count[3] = {1, NLAT, NLON};
			for (size_t i = 0; i < NLAT * NLON; i++)
				rec[i] = (double)(r * 10 + (size_t)v) + (double)i / 4096.0;
			if (v % 2) {
				CHECK(nc_put_vara_double(ncid, rv[v], start, count, rec));
			} else {
				static int irec[NLAT * NLON];
				for (size_t i = 0; i < NLAT * NLON; i++)
					irec[i] = (int)(r * 100000 + (size_t)v * 10000 + i);
				CHECK(nc_put_vara_int(ncid, rv[v], start, count, irec));
			}
		}
	}
	/* Read one tile back through the open file (read-your-writes). */
	{
		size_t start[3] = {1, NLAT / TY, NLON / TX}, count[3] = {NLEV - 1, NLAT / TY, NLON / TX};
		size_t k = 0;
		CHECK(nc_get_vara_float(ncid, var3, start, count, tile));
		for (size_t z = 0; z < count[0]; z++)
			for (size_t y = 0; y < count[1]; y++)
				for (size_t x = 0; x < count[2]; x++, k++)
					if (tile[k] != value(start[0] + z, start[1] + y, start[2] + x)) {
						fprintf(stderr, "tile value %zu wrong\n", k);
						return 1;
					}
	}
	CHECK(nc_close(ncid));

	/* Reopen and read every tile back. */
	CHECK(nc_open(argv[1], NC_NOWRITE, &ncid));
	for (int ty = 0; ty < TY; ty++) {
		for (int tx = 0; tx < TX; tx++) {
			size_t start[3] = {0, (size_t)ty * NLAT / TY, (size_t)tx * NLON / TX};
			size_t count[3] = {NLEV, NLAT / TY, NLON / TX};
			size_t k = 0;
			CHECK(nc_get_vara_float(ncid, var3, start, count, tile));
			for (size_t z = 0; z < count[0]; z++)
				for (size_t y = 0; y < count[1]; y++)
					for (size_t x = 0; x < count[2]; x++, k++)
						if (tile[k] != value(z, start[1] + y, start[2] + x)) {
							fprintf(stderr, "reread tile value wrong\n");
							return 1;
						}
		}
	}
	CHECK(nc_close(ncid));
	return 0;
}
