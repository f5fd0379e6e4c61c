/* bench/netcdf_seed_m1.c -- the second seed's Method 1 alone, a workload
 * of make bench-advise (bench/run-bench-advise): a float array
 * LON x LAT x LEV in a 2-D (lon, lat) decomposition over PX x PY workers;
 * each worker sends its tile to the master (rank 0), which writes the
 * tiles into FILE with serial netCDF as they arrive.  bench/netcdf_seed
 * runs the same method beside Method 2 and the reads, raw and over ffio in
 * one job; this program has one file and no other I/O, so that a tracer
 * (ffio-advise) sees only Method 1 and FF_IO_OPTS can give it any spec.
 * The file's contents do not depend on the order the tiles arrive in.
 *   mpiexec -n PX*PY+1 netcdf_seed_m1 FILE [LON LAT LEV PX PY]
 * Default 240 240 60 3 2; the seed's full size 600 600 150 5 3.
 */
#include <mpi.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		int e_ = (call);                                                      \
		if (e_ != NC_NOERR) {                                                 \
			fprintf(stderr, "netcdf_seed_m1: %s: %s\n", #call, nc_strerror(e_)); \
			MPI_Abort(MPI_COMM_WORLD, 1);                                 \
		}                                                                     \
	} while (0)

static size_t nlon = 240, nlat = 240, nlev = 60, px = 3, py = 2;

/* Worker w's tile (w = 1 .. PX*PY): all levels, a block of lat and lon. */
static void tile_of(int w, size_t *start, size_t *count)
{
	size_t i = (size_t)(w - 1) % px, j = (size_t)(w - 1) / px;
	start[0] = 0;
	count[0] = nlev;
	start[1] = j * nlat / py;
	count[1] = (j + 1) * nlat / py - start[1];
	start[2] = i * nlon / px;
	count[2] = (i + 1) * nlon / px - start[2];
}

int main(int argc, char **argv)
{
	size_t *opt[] = {&nlon, &nlat, &nlev, &px, &py};
	int rank, nranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 2; i < argc && i - 2 < 5; i++)
		*opt[i - 2] = strtoul(argv[i], NULL, 0);
	if (argc < 2 || (size_t)nranks != px * py + 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiexec -n PX*PY+1 netcdf_seed_m1 FILE [LON LAT LEV PX PY]\n");
		MPI_Finalize();
		return 2;
	}
	size_t maxn = (nlat / py + 1) * (nlon / px + 1) * nlev;
	float *buf = malloc(maxn * sizeof *buf);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	double t0 = MPI_Wtime();
	if (rank == 0) {
		int ncid, varid, dim[3];
		CHECK(nc_create(argv[1], NC_CLOBBER | NC_64BIT_OFFSET, &ncid));
		CHECK(nc_set_fill(ncid, NC_NOFILL, NULL));
		CHECK(nc_def_dim(ncid, "lev", nlev, &dim[0]));
		CHECK(nc_def_dim(ncid, "lat", nlat, &dim[1]));
		CHECK(nc_def_dim(ncid, "lon", nlon, &dim[2]));
		CHECK(nc_def_var(ncid, "field", NC_FLOAT, 3, dim, &varid));
		CHECK(nc_enddef(ncid));
		for (int n = 1; n < nranks; n++) {
			MPI_Status st;
			size_t start[3], count[3];
			MPI_Recv(buf, (int)maxn, MPI_FLOAT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
			tile_of(st.MPI_SOURCE, start, count);
			CHECK(nc_put_vara_float(ncid, varid, start, count, buf));
		}
		CHECK(nc_close(ncid));
	} else {
		size_t start[3], count[3], k = 0;
		tile_of(rank, start, count);
		for (size_t z = 0; z < count[0]; z++)
			for (size_t y = 0; y < count[1]; y++)
				for (size_t x = 0; x < count[2]; x++)
					buf[k++] = (float)(((start[0] + z) * nlat + start[1] + y) % 100003) +
						   (float)(start[2] + x) * 0.25f;
		MPI_Send(buf, (int)k, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("Method 1: %zu x %zu x %zu floats, %zu x %zu workers, %.6f s\n", nlon, nlat, nlev, px, py,
		       MPI_Wtime() - t0);
	free(buf);
	MPI_Finalize();
	return 0;
}
