/* t/mpi_glue_comm.c -- the MPI glue's collectives at MPI_Finalize (its
 * summary of every rank's statistics) run on a communicator of its own,
 * never on MPI_COMM_WORLD, where they could be matched with the
 * application's collectives.  Linked with the glue; this program defines
 * PMPI_Gather, PMPI_Bcast and PMPI_Gatherv itself (the executable comes
 * first in symbol lookup), notes the communicator of each call made from
 * MPI_Finalize, and passes it on to MPI's.  Rank 0 prints, from an
 * atexit handler, "glue collectives: N on MPI_COMM_WORLD, M on another
 * communicator". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int finalizing, on_world, on_other, rank = -1;

static void note(MPI_Comm comm)
{
	int same = MPI_UNEQUAL;
	if (!finalizing)
		return;
	PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
	if (same == MPI_IDENT)
		on_world++;
	else
		on_other++;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		MPI_Datatype rtype, int root, MPI_Comm comm)
{
	note(comm);
	return NEXT(PMPI_Gather)(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	note(comm);
	return NEXT(PMPI_Bcast)(buf, count, type, root, comm);
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
		 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
	note(comm);
	return NEXT(PMPI_Gatherv)(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

static void report(void)
{
	if (rank == 0)
		printf("glue collectives: %d on MPI_COMM_WORLD, %d on another communicator\n", on_world,
		       on_other);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	atexit(report);
	finalizing = 1;
	MPI_Finalize();
	return 0;
}
