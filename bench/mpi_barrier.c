/* bench/mpi_barrier.c -- what a barrier costs with libffio_mpi loaded,
 * whose ordering calls are coherence points (ffio-mpi(7)): each rank opens
 * FILE (managed when FF_IO_OPTS matches it and libffio is preloaded),
 * optionally writes or reads a block of it first (MODE: none, write, read),
 * then times N barriers, REPS times; rank 0 prints the median ns per
 * barrier.  Run it raw, then with LD_PRELOAD="libffio.so libffio_mpi.so":
 *   mpiexec -n 2 mpi_barrier FILE [MODE N REPS]
 * (bench/run-barrier runs both). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_barrier FILE [MODE N REPS]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *mode = argc > 2 ? argv[2] : "none";
	long n = argc > 3 ? atol(argv[3]) : 100000;
	int reps = argc > 4 ? atoi(argv[4]) : 5;
	char path[4096], block[4096];
	double *t = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *t);
	if (!t || n <= 0 || reps <= 0 || snprintf(path, sizeof path, "%s.%d", argv[1], rank) >= (int)sizeof path)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(block, 'x', sizeof block);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pwrite(fd, block, sizeof block, 0) != (ssize_t)sizeof block || fsync(fd) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r < reps; r++) {
		/* One write (unwritten data) or read (clean cached data) per
		 * round: the first barrier of the round writes it back or drops
		 * it; the others find nothing to do. */
		if (strcmp(mode, "write") == 0 && pwrite(fd, block, 100, 0) != 100)
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (strcmp(mode, "read") == 0 && pread(fd, block, 100, 0) != 100)
			MPI_Abort(MPI_COMM_WORLD, 1);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (long i = 0; i < n; i++)
			MPI_Barrier(MPI_COMM_WORLD);
		t[r] = (MPI_Wtime() - t0) / (double)n * 1e9;
	}
	qsort(t, (size_t)reps, sizeof *t, cmp_double);
	if (rank == 0)
		printf("mode %s: %.0f ns per barrier (median of %d x %ld; min %.0f, max %.0f)\n", mode,
		       t[reps / 2], reps, n, t[0], t[reps - 1]);
	if (close(fd) < 0 || unlink(path) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	free(t);
	MPI_Finalize();
	return 0;
}
