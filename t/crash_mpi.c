/* t/crash_mpi.c -- an MPI job ended by MPI_Abort keeps what its ranks'
 * writes returned for: each rank writes its own file, DIR/rankR.dat, with
 * random calls (t/crash_log.h: write, pwrite, writev, appends, ftruncate),
 * logging each in DIR/rankR.log, a file it maps shared (its name matches
 * no stack's pattern: ffio does not cache it).  After a barrier, so that
 * every rank has written some, rank 0 makes NABORT more calls and calls
 * MPI_Abort while the others are still writing; the launcher kills them.
 * t/crash_mpi.sh then checks each rank's file against its log with
 * t/crash_kill check (not preloaded), once the guardians the ranks saw
 * have exited.
 *
 *   crash_mpi DIR SEED NABORT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crash_log.h"

static struct cl_writer W;

int main(int argc, char **argv)
{
	int rank;
	char path[4096], logpath[4096];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 4) {
		if (rank == 0)
			fprintf(stderr, "usage: crash_mpi DIR SEED NABORT\n");
		MPI_Finalize();
		return 2;
	}
	uint64_t seed = strtoull(argv[2], NULL, 0), nabort = strtoull(argv[3], NULL, 0);
	snprintf(path, sizeof path, "%s/rank%d.dat", argv[1], rank);
	snprintf(logpath, sizeof logpath, "%s/rank%d.log", argv[1], rank);
	int fd = open(logpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct cl_log)) < 0) {
		perror(logpath);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	struct cl_log *L = mmap(NULL, sizeof *L, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (L == MAP_FAILED) {
		perror("mmap");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	close(fd);
	L->seed = seed * 1000 + (uint64_t)rank + 1;
	uint64_t before = 1 + (seed * 7 + (uint64_t)rank * 13) % 200;
	cl_open(&W, L, path);
	for (uint64_t i = 0; i < before; i++)
		cl_call(&W, CL_NONE);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (uint64_t i = 0; i < nabort; i++)
			cl_call(&W, CL_NONE);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	cl_run(&W); /* until the log is full, then wait to be killed */
	MPI_Finalize();
	return 0;
}
