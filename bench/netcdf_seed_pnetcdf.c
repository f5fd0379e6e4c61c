/* bench/netcdf_seed_pnetcdf.c -- the seed's Method 2 with the real PnetCDF
 * library, for the Open MPI build of bench/netcdf_seed (PnetCDF as Debian
 * ships it is built on Open MPI).  Every case runs on a raw file
 * (*.raw.nc) and on one FF_IO_OPTS gives to ffio (*.ffio.nc), round robin
 * with Method 1 and the rest, in the same job:
 *   put       every rank writes its tile: ncmpi_put_vara_float_all
 *   iput      the same, nonblocking: ncmpi_iput_vara_float + ncmpi_wait_all
 *   rows      the tile as one small nonblocking put per row (LON/PX floats)
 *             and one ncmpi_wait_all
 *   indep     the tile in independent mode: ncmpi_put_vara_float
 *   rec-coll  NRECVAR record variables (time, lat, lon), NREC steps: each
 *             step each rank puts its (lat, lon) tile of each, collective
 *   rec-indep the same in independent mode
 *   get       every worker reads its tile: ncmpi_get_vara_float_all, from
 *             the put case's file (cached by the kernel, then its pages
 *             dropped first)
 * Reads are checked against the tile; at the end rank 0 checks that each
 * ffio file is byte-identical to its raw one, that every tile file holds
 * the same array as Method 1's (read with serial netCDF) and that the
 * record files hold the values put.  The report is a table of its own,
 * [netcdf-pnetcdf] in its title, followed by the rows bench/table-check
 * reads (each case over ffio against the same case raw; the format in
 * bench/netcdf_seed.c) for bench/netcdf_seed.sh's check line. */
#include <mpi.h>
#include <netcdf.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_quiet.h"
#include "netcdf_seed.h"

#define NRECVAR 4
#define NREC 10

#define PN_CHECK(call)                                                                      \
	do {                                                                                \
		int e_ = (call);                                                            \
		if (e_ != NC_NOERR) {                                                       \
			fprintf(stderr, "rank %d: %s: %s\n", rank, #call, ncmpi_strerror(e_)); \
			MPI_Abort(MPI_COMM_WORLD, 1);                                       \
		}                                                                           \
	} while (0)

enum { PUT, IPUT, ROWS, INDEP, RECC, RECI, GET, CGET, NPN };
static const char *const name[NPN] = {"put", "iput", "rows", "indep", "rec-coll", "rec-indep", "put", "put"};
static const char *const label[NPN] = {
	"PnetCDF put_vara_all (tile per rank)", "PnetCDF iput_vara + wait_all",
	"PnetCDF tile as row iputs + wait_all", "PnetCDF tile, independent mode",
	"PnetCDF record variables, collective", "PnetCDF record variables, independent",
	"PnetCDF get_vara_all tile reads", "PnetCDF get_vara_all, not in page cache"};
static char path[NPN][2][512]; /* [case][0: raw, 1: over ffio] */
static struct runs secs[NPN][2]; /* [case][0: raw, 1: over ffio] */
static float *recdata; /* NREC x NRECVAR tiles of (lat, lon), this rank's */
static float nothing;   /* the master's buffer: it puts and gets nothing */

static float rec_value(size_t step, int v, size_t lat, size_t lon)
{
	return value(step * NRECVAR + (size_t)v, lat, lon) + 0.5f;
}

void pn_init(const char *dir)
{
	for (int c = 0; c < NPN; c++)
		for (int f = 0; f < 2; f++) {
			snprintf(path[c][f], sizeof path[c][f], "%s/seed-pn-%s.%s.nc", dir, name[c], f ? "ffio" : "raw");
			runs_init(&secs[c][f]);
		}
	size_t n = NREC * NRECVAR * t_count[1] * t_count[2], k = 0;
	recdata = malloc((n > 0 ? n : 1) * sizeof *recdata);
	if (!recdata)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t s = 0; s < NREC; s++)
		for (int v = 0; v < NRECVAR; v++)
			for (size_t y = 0; y < t_count[1]; y++)
				for (size_t x = 0; x < t_count[2]; x++)
					recdata[k++] = rec_value(s, v, t_start[1] + y, t_start[2] + x);
}

static int create(const char *path, int records, int *var)
{
	int nc, dim[3];
	PN_CHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_OFFSET, MPI_INFO_NULL, &nc));
	PN_CHECK(ncmpi_set_fill(nc, NC_NOFILL, NULL));
	if (records)
		PN_CHECK(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dim[0]));
	else
		PN_CHECK(ncmpi_def_dim(nc, "lev", (MPI_Offset)nlev, &dim[0]));
	PN_CHECK(ncmpi_def_dim(nc, "lat", (MPI_Offset)nlat, &dim[1]));
	PN_CHECK(ncmpi_def_dim(nc, "lon", (MPI_Offset)nlon, &dim[2]));
	if (records) {
		for (int v = 0; v < NRECVAR; v++) {
			char vname[8];
			snprintf(vname, sizeof vname, "r%d", v);
			PN_CHECK(ncmpi_def_var(nc, vname, NC_FLOAT, 3, dim, &var[v]));
		}
	} else {
		PN_CHECK(ncmpi_def_var(nc, "field", NC_FLOAT, 3, dim, &var[0]));
	}
	PN_CHECK(ncmpi_enddef(nc));
	return nc;
}

/* One write case into a new file; its time, from before the create to
 * after every rank has closed the file. */
static double write_case(int how, const char *file)
{
	MPI_Offset start[3], count[3];
	int var[NRECVAR], nc;
	double t0;

	for (int d = 0; d < 3; d++) {
		start[d] = (MPI_Offset)t_start[d];
		count[d] = (MPI_Offset)t_count[d];
	}
	const float *buf = tile ? tile : &nothing;
	remove_old(file);
	quiet_barrier(PAUSE_NS);
	t0 = MPI_Wtime();
	nc = create(file, how == RECC || how == RECI, var);
	switch (how) {
	case PUT:
		PN_CHECK(ncmpi_put_vara_float_all(nc, var[0], start, count, buf));
		break;
	case IPUT: {
		int req, st;
		PN_CHECK(ncmpi_iput_vara_float(nc, var[0], start, count, buf, &req));
		PN_CHECK(ncmpi_wait_all(nc, 1, &req, &st));
		PN_CHECK(st);
		break;
	}
	case ROWS: {
		int nreq = (int)(t_count[0] * t_count[1]), *req = malloc((nreq ? nreq : 1) * 2 * sizeof *req);
		int *st = req + (nreq ? nreq : 1);
		MPI_Offset s[3], c[3] = {1, 1, count[2]};
		if (!req)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int k = 0; k < nreq; k++) {
			s[0] = start[0] + k / (int)t_count[1];
			s[1] = start[1] + k % (int)t_count[1];
			s[2] = start[2];
			PN_CHECK(ncmpi_iput_vara_float(nc, var[0], s, c, buf + (size_t)k * t_count[2], &req[k]));
		}
		PN_CHECK(ncmpi_wait_all(nc, nreq, req, st));
		for (int k = 0; k < nreq; k++)
			PN_CHECK(st[k]);
		free(req);
		break;
	}
	case INDEP:
		PN_CHECK(ncmpi_begin_indep_data(nc));
		if (tile)
			PN_CHECK(ncmpi_put_vara_float(nc, var[0], start, count, buf));
		PN_CHECK(ncmpi_end_indep_data(nc));
		break;
	case RECC:
	case RECI: {
		size_t n2 = t_count[1] * t_count[2];
		MPI_Offset s[3] = {0, start[1], start[2]}, c[3] = {1, count[1], count[2]};
		if (how == RECI)
			PN_CHECK(ncmpi_begin_indep_data(nc));
		for (size_t step = 0; step < NREC; step++)
			for (int v = 0; v < NRECVAR; v++) {
				const float *b = tile ? recdata + (step * NRECVAR + (size_t)v) * n2 : &nothing;
				s[0] = (MPI_Offset)step;
				if (how == RECC)
					PN_CHECK(ncmpi_put_vara_float_all(nc, var[v], s, c, b));
				else if (tile)
					PN_CHECK(ncmpi_put_vara_float(nc, var[v], s, c, b));
			}
		if (how == RECI)
			PN_CHECK(ncmpi_end_indep_data(nc));
		break;
	}
	}
	PN_CHECK(ncmpi_close(nc));
	quiet_barrier(PAUSE_NS);
	return MPI_Wtime() - t0;
}

/* Every worker reads its tile back and checks it. */
static double get_case(const char *file, int cold)
{
	MPI_Offset start[3], count[3];
	size_t n = t_count[0] * t_count[1] * t_count[2];
	float *buf = malloc((n ? n : 1) * sizeof *buf);
	int nc, var;
	double t0;

	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int d = 0; d < 3; d++) {
		start[d] = (MPI_Offset)t_start[d];
		count[d] = (MPI_Offset)t_count[d];
	}
	if (cold && rank == 0)
		drop_cached(file);
	quiet_barrier(PAUSE_NS);
	t0 = MPI_Wtime();
	PN_CHECK(ncmpi_open(MPI_COMM_WORLD, file, NC_NOWRITE, MPI_INFO_NULL, &nc));
	PN_CHECK(ncmpi_inq_varid(nc, "field", &var));
	PN_CHECK(ncmpi_get_vara_float_all(nc, var, start, count, buf));
	PN_CHECK(ncmpi_close(nc));
	quiet_barrier(PAUSE_NS);
	double t = MPI_Wtime() - t0;
	if (tile && memcmp(buf, tile, n * sizeof *buf) != 0) {
		fprintf(stderr, "rank %d: tile read back wrong from %s\n", rank, file);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	free(buf);
	return t;
}

/* One run of case c raw and one over ffio: raw first in the case's even
 * rounds, over ffio first in its odd ones (see run_pair in
 * bench/netcdf_seed.c). */
static void pn_pair(int c)
{
	size_t round = secs[c][0].n;
	for (int k = 0; k < 2; k++) {
		int f = k ^ (int)(round % 2);
		runs_add(&secs[c][f], c == GET || c == CGET ? get_case(path[PUT][f], c == CGET) : write_case(c, path[c][f]));
	}
}

void pn_round(void)
{
	for (int c = 0; c < NPN; c++)
		pn_pair(c);
}

unsigned pn_below(void)
{
	unsigned mask = 0;
	for (int c = 0; c < NPN; c++)
		if (runs_below(&secs[c][0], &secs[c][1]))
			mask |= 1u << c;
	return mask;
}

/* The get cases read the put case's files, which a look again of put
 * alone rewrites: the same bytes. */
void pn_again(unsigned mask)
{
	for (int c = 0; c < NPN; c++)
		if (mask & 1u << c)
			pn_pair(c);
}

/* ---- the report (rank 0) ------------------------------------------------------ */

/* The whole of variable vname of a classic-format file, read with serial
 * netCDF; NULL if it cannot be read. */
static float *whole_var(const char *file, const char *vname, size_t n)
{
	int nc, var;
	float *v = malloc(n * sizeof *v);
	if (!v || nc_open(file, NC_NOWRITE, &nc) != NC_NOERR) {
		free(v);
		return NULL;
	}
	if (nc_inq_varid(nc, vname, &var) != NC_NOERR || nc_get_var_float(nc, var, v) != NC_NOERR) {
		free(v);
		v = NULL;
	}
	nc_close(nc);
	return v;
}

/* The record file holds every value put, in every variable. */
static int records_right(const char *file)
{
	size_t n = NREC * nlat * nlon;
	int right = 1;
	for (int v = 0; v < NRECVAR && right; v++) {
		char vname[8];
		snprintf(vname, sizeof vname, "r%d", v);
		float *got = whole_var(file, vname, n);
		right = got != NULL;
		for (size_t k = 0; right && k < n; k++)
			right = got[k] == rec_value(k / (nlat * nlon), v, k / nlon % nlat, k % nlon);
		free(got);
	}
	return right;
}

int pn_report(const struct seed_ref *ref)
{
	double med[NPN][2];
	int wrong = 0, looked = 0;

	if (rank != 0)
		return 0;
	for (int c = 0; c < NPN; c++)
		for (int f = 0; f < 2; f++) {
			med[c][f] = runs_median(&secs[c][f]);
			looked |= secs[c][f].n != reps;
		}
	printf("# PnetCDF %s [netcdf-pnetcdf] (the seed's Method 2 with the library), same job, median of %zu;"
	       " of ceil: Method 1's ceiling%s\n",
	       ncmpi_inq_libvers(), reps,
	       looked ? "; *N: the median of N runs (measured again: below 0.95x of raw, or its raw row)" : "");
	for (int c = 0; c < NPN; c++)
		for (int f = 0; f < 2; f++) {
			double ceil = c == GET ? ref->rdceil : c == CGET ? ref->crdceil : ref->m1ceil;
			char row[96];
			snprintf(row, sizeof row, "%s, %s", label[c], f ? "over ffio" : "raw");
			printf("%-48s %10.4f %8.2f", row, med[c][f], med[c][0] / med[c][f]);
			if (ceil > 0 && c != RECC && c != RECI)
				printf(" %8.2f", ceil / med[c][f]);
			if (secs[c][f].n != reps)
				printf("  *%zu", secs[c][f].n);
			printf("\n");
		}
	printf("ratio Method 1 write raw / PnetCDF put raw    %6.2f  (seed: 6-7)\n", ref->m1raw / med[PUT][0]);
	printf("ratio PnetCDF put raw / Method 1 over ffio    %6.2f  (1 or more: Method 1 over ffio matches it)\n",
	       med[PUT][0] / ref->m1ffio);
	printf("ratio tile reads raw / PnetCDF get raw        %6.2f  (seed: 1.33)\n", ref->rdraw / med[GET][0]);
	printf("ratio the same, not in page cache             %6.2f\n", ref->crdraw / med[CGET][0]);
	for (int c = 0; c < NPN; c++)
		for (int f = 0; f < 2; f++)
			printf("check-row\t%s, %s\t%s%s\t%.6f\t%zu\n", label[c], f ? "over ffio" : "raw", f ? label[c] : "-",
			       f ? ", raw" : "", med[c][f], secs[c][f].n);
	printf("check\tnetcdf-pnetcdf\ttimes\n");

	size_t n = nlev * nlat * nlon;
	float *want = whole_var(ref->m1file, "field", n);
	if (!want) {
		fprintf(stderr, "cannot read %s\n", ref->m1file);
		return 1;
	}
	for (int c = PUT; c <= RECI; c++) {
		int same = same_file(path[c][0], path[c][1]);
		int data;
		if (c == RECC || c == RECI) {
			data = records_right(path[c][0]);
		} else {
			float *got = whole_var(path[c][0], "field", n);
			data = got && memcmp(got, want, n * sizeof *got) == 0;
			free(got);
		}
		printf("PnetCDF %-10s file over ffio byte-identical to raw: %s; %s: %s\n", name[c], same ? "yes" : "NO",
		       c == RECC || c == RECI ? "every value put is there" : "same array as Method 1's",
		       data ? "yes" : "NO");
		wrong |= !same || !data;
	}
	free(want);
	fflush(stdout);
	return wrong;
}
