/* t/share_ranks.c -- the ranks of an MPI job write interleaved records
 * into one file at the same time (t/share_pattern.h); the file must end
 * up holding every rank's records.  Run by t/share_ranks.sh under the MPI
 * launcher, raw and with libffio preloaded over a stack.
 *
 * Usage: share_ranks posix|mpiio FILE RECSIZE LAYOUT BEFORE ORDER SEED
 *   posix: open, pwrite (pread), close; mpiio: MPI_File_open on
 *   MPI_COMM_SELF, MPI_File_write_at (read_at), MPI_File_close
 *   ORDER: which rank closes first, second, ... (as many as ranks)
 * Rank 0 makes the file; every rank writes all its records before any of
 * them closes, then they close one by one in ORDER, a barrier between
 * turns; rank 0 then reads the file through the kernel and checks it.
 * Exit status 0 when every byte is right.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "share_pattern.h"

static int use_mpiio;

static int mpi_write_at(void *ctx, const void *buf, size_t n, off_t off)
{
	MPI_Status st;
	int count;
	if (MPI_File_write_at(*(MPI_File *)ctx, off, buf, (int)n, MPI_BYTE, &st) != MPI_SUCCESS ||
	    MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS)
		return -1;
	return count == (int)n ? 0 : -1;
}

static int mpi_read_at(void *ctx, void *buf, size_t n, off_t off)
{
	MPI_Status st;
	return MPI_File_read_at(*(MPI_File *)ctx, off, buf, (int)n, MPI_BYTE, &st) == MPI_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0, fd = -1;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 8 || (int)strlen(argv[6]) != size || size > MAX_WRITERS) {
		if (rank == 0)
			fprintf(stderr, "usage: share_ranks posix|mpiio FILE RECSIZE seq|rand none|old|read ORDER SEED\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	use_mpiio = strcmp(argv[1], "mpiio") == 0;
	const char *path = argv[2], *order = argv[6];
	int before = argv[5][0];
	writers = size;
	recsize = atoi(argv[3]);
	share_layout(strcmp(argv[4], "rand") == 0, strtoull(argv[7], NULL, 10));
	if (rank == 0 && share_prepare(path, before) < 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Barrier(MPI_COMM_WORLD);

	if (use_mpiio) {
		bad = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS ||
		      share_write(rank, before, mpi_write_at, mpi_read_at, &fh) < 0;
	} else {
		bad = (fd = open(path, O_RDWR)) < 0 || share_write(rank, before, share_fd_write_at, share_fd_read_at, &fd) < 0;
	}
	MPI_Barrier(MPI_COMM_WORLD); /* everyone has written */
	for (int turn = 0; turn < size; turn++) {
		if (order[turn] - '0' == rank && !bad)
			bad = use_mpiio ? MPI_File_close(&fh) != MPI_SUCCESS : close(fd) < 0;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (bad)
		fprintf(stderr, "share_ranks: rank %d: a call failed: %s\n", rank, strerror(errno));
	int any_bad;
	MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	int rc = any_bad ? 2 : rank == 0 ? share_check(path) : 0;
	MPI_Finalize();
	return rc;
}
