/* t/pnetcdf_files.c -- a PnetCDF program whose files t/pnetcdf_files.sh
 * compares byte for byte, raw against ffio: run by N ranks, it writes
 * DIR/pnc_FORMAT.nc for the CDF-1, CDF-2 and CDF-5 formats.  Each file has
 * a fixed-size 2-D variable (a tile per rank, written collectively), a
 * record variable (a record per round: independent puts, then nonblocking
 * puts waited for together), a redefine that adds an attribute and a
 * variable before the others (PnetCDF moves their data), and the data read
 * back collectively and checked after every phase.  Prints "pnetcdf ok"
 * on rank 0, or the first difference. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 40  /* columns of the fixed variable: a tile of NX/size per rank */
#define NY 30
#define RECLEN 25 /* ints of a rank's part of a record */
#define ROUNDS 6

static int rank, size;

static void check(int err, const char *what)
{
	if (err != NC_NOERR) {
		fprintf(stderr, "pnetcdf_files: rank %d: %s: %s\n", rank, what, ncmpi_strerror(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static int value(int var, int a, int b)
{
	return var * 1000003 + a * 1009 + b;
}

/* Every rank reads the whole of the fixed variable and the records written
 * so far, and compares. */
static int verify(int nc, int fixed, int rec, int rounds, const char *phase)
{
	int *all = malloc(sizeof(int) * NX * NY), bad = 0;
	MPI_Offset start[2] = {0, 0}, count[2] = {NY, NX};
	check(ncmpi_get_vara_int_all(nc, fixed, start, count, all), "get fixed");
	for (int y = 0; y < NY && !bad; y++)
		for (int x = 0; x < NX && !bad; x++)
			if (all[y * NX + x] != value(1, y, x)) {
				printf("# rank %d, %s: fixed[%d][%d] = %d, not %d\n", rank, phase, y, x, all[y * NX + x],
				       value(1, y, x));
				bad = 1;
			}
	free(all);
	int *r = malloc(sizeof(int) * RECLEN * (size_t)size);
	for (int g = 0; g < rounds && !bad; g++) {
		MPI_Offset rs[2] = {g, 0}, rc[2] = {1, RECLEN * size};
		check(ncmpi_get_vara_int_all(nc, rec, rs, rc, r), "get record");
		for (int i = 0; i < RECLEN * size && !bad; i++)
			if (r[i] != value(2, g, i)) {
				printf("# rank %d, %s: record %d [%d] = %d, not %d\n", rank, phase, g, i, r[i], value(2, g, i));
				bad = 1;
			}
	}
	free(r);
	int any = 0;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return any;
}

static int one_file(const char *dir, const char *name, int cmode)
{
	char path[4096];
	int nc, dx, dy, dt, dr, fixed, rec, extra, bad;
	snprintf(path, sizeof path, "%s/pnc_%s.nc", dir, name);
	check(ncmpi_create(MPI_COMM_WORLD, path, cmode | NC_CLOBBER, MPI_INFO_NULL, &nc), "create");
	check(ncmpi_def_dim(nc, "y", NY, &dy), "def y");
	check(ncmpi_def_dim(nc, "x", NX, &dx), "def x");
	check(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dt), "def time");
	check(ncmpi_def_dim(nc, "r", RECLEN * size, &dr), "def r");
	check(ncmpi_def_var(nc, "fixed", NC_INT, 2, (int[]){dy, dx}, &fixed), "def fixed");
	check(ncmpi_def_var(nc, "rec", NC_INT, 2, (int[]){dt, dr}, &rec), "def rec");
	check(ncmpi_put_att_text(nc, NC_GLOBAL, "title", 7, "ffio ok"), "title");
	check(ncmpi_enddef(nc), "enddef");

	/* the fixed variable: columns split between the ranks, collectively */
	int w = NX / size, x0 = rank * w, wn = rank == size - 1 ? NX - x0 : w;
	int *tile = malloc(sizeof(int) * NY * (size_t)wn);
	for (int y = 0; y < NY; y++)
		for (int x = 0; x < wn; x++)
			tile[y * wn + x] = value(1, y, x0 + x);
	MPI_Offset ts[2] = {0, x0}, tc[2] = {NY, wn};
	check(ncmpi_put_vara_int_all(nc, fixed, ts, tc, tile), "put fixed");
	free(tile);

	/* records: independent puts for the first half, nonblocking after */
	int part[RECLEN], req[ROUNDS], st[ROUNDS], nreq = 0;
	int parts[ROUNDS][RECLEN];
	check(ncmpi_begin_indep_data(nc), "begin indep");
	for (int g = 0; g < ROUNDS / 2; g++) {
		for (int i = 0; i < RECLEN; i++)
			part[i] = value(2, g, rank * RECLEN + i);
		MPI_Offset s[2] = {g, rank * RECLEN}, c[2] = {1, RECLEN};
		check(ncmpi_put_vara_int(nc, rec, s, c, part), "put record");
	}
	check(ncmpi_end_indep_data(nc), "end indep");
	for (int g = ROUNDS / 2; g < ROUNDS; g++) {
		for (int i = 0; i < RECLEN; i++)
			parts[g][i] = value(2, g, rank * RECLEN + i);
		MPI_Offset s[2] = {g, rank * RECLEN}, c[2] = {1, RECLEN};
		check(ncmpi_iput_vara_int(nc, rec, s, c, parts[g], &req[nreq++]), "iput record");
	}
	check(ncmpi_wait_all(nc, nreq, req, st), "wait_all");
	if ((bad = verify(nc, fixed, rec, ROUNDS, "written")))
		goto out;

	/* a redefine that grows the header: PnetCDF moves the data after it */
	check(ncmpi_redef(nc), "redef");
	char note[600];
	memset(note, 'n', sizeof note);
	check(ncmpi_put_att_text(nc, NC_GLOBAL, "history", sizeof note, note), "history");
	check(ncmpi_def_var(nc, "extra", NC_DOUBLE, 1, &dy, &extra), "def extra");
	check(ncmpi_enddef(nc), "enddef again");
	double e[NY];
	for (int y = 0; y < NY; y++)
		e[y] = y * 0.5;
	if (rank == 0) {
		check(ncmpi_begin_indep_data(nc), "begin indep 2");
		check(ncmpi_put_var_double(nc, extra, e), "put extra");
		check(ncmpi_end_indep_data(nc), "end indep 2");
	} else {
		check(ncmpi_begin_indep_data(nc), "begin indep 2");
		check(ncmpi_end_indep_data(nc), "end indep 2");
	}
	bad = verify(nc, fixed, rec, ROUNDS, "after the redefine");
out:
	check(ncmpi_close(nc), "close");
	return bad;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: pnetcdf_files DIR\n");
		MPI_Finalize();
		return 2;
	}
	int bad = one_file(argv[1], "cdf1", 0) || one_file(argv[1], "cdf2", NC_64BIT_OFFSET) ||
		  one_file(argv[1], "cdf5", NC_64BIT_DATA);
	if (rank == 0 && !bad)
		printf("pnetcdf ok\n");
	MPI_Finalize();
	return bad;
}
