/* bench/netcdf_seed.h -- what bench/netcdf_seed.c shares with its PnetCDF
 * cases (bench/netcdf_seed_pnetcdf.c, built into the Open MPI build of the
 * benchmark only): the array's sizes, this rank's tile, and the helpers
 * every case uses. */
#ifndef FFIO_BENCH_NETCDF_SEED_H
#define FFIO_BENCH_NETCDF_SEED_H

#include <stddef.h>

/* The benchmark's own waits poll and sleep between polls (mpi_quiet.h). */
#define PAUSE_NS 20000

extern int rank, nranks;
extern size_t nlon, nlat, nlev, px, py, reps;
extern size_t t_start[3], t_count[3]; /* this worker's tile (lev, lat, lon) */
extern float *tile;                    /* its values; NULL on the master */

void tile_of(int w, size_t *start, size_t *count);
float value(size_t lev, size_t lat, size_t lon);
void remove_old(const char *path);
void drop_cached(const char *path);
int same_file(const char *a, const char *b);

/* A case's times on rank 0: the REPS rounds', then any looks again'. */
struct runs {
	double *t;
	size_t n;
};
void runs_init(struct runs *r); /* room for the rounds and both looks */
void runs_add(struct runs *r, double secs);
double runs_median(struct runs *r);
/* Is the over-ffio case's median below 0.95x of its raw case's? */
int runs_below(struct runs *raw, struct runs *ffio);

/* The PnetCDF cases: paths under dir and the record data (once this
 * rank's tile is known), one round of every case, the cases below 0.95x
 * of raw (rank 0: a mask of PnetCDF cases), one more round of the cases
 * of a mask (the looks again, see main), and the
 * report (rank 0 prints; all ranks call).  The Method 1 and tile-read
 * medians it is set against are rank 0's.  pn_report returns 0, or 1 when
 * a file is wrong. */
struct seed_ref {
	double m1raw, m1ffio, m1ceil; /* Method 1 writes; m1ceil < 0: none */
	double rdraw, rdceil;         /* serial tile reads, file cached */
	double crdraw, crdceil;       /* the same, the file's pages dropped */
	const char *m1file;           /* Method 1's raw file */
};
void pn_init(const char *dir);
void pn_round(void);
unsigned pn_below(void);
void pn_again(unsigned mask);
int pn_report(const struct seed_ref *ref);

#endif
