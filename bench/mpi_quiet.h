/* bench/mpi_quiet.h -- waiting without spinning, for the MPI benchmarks.
 * With more ranks than cores, MPICH waits by busy-polling: a rank waiting
 * in a barrier or a send takes the core from a rank still doing I/O, and
 * the figures measure the scheduler.  These poll, and sleep pause_ns
 * between polls.  A failing MPI call aborts the job. */
#ifndef FFIO_BENCH_MPI_QUIET_H
#define FFIO_BENCH_MPI_QUIET_H

#include <mpi.h>
#include <stdio.h>
#include <time.h>

static inline void quiet_check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "%s failed\n", what);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
}

static inline void quiet_wait(MPI_Request *req, long pause_ns)
{
	const struct timespec pause = {0, pause_ns};
	for (;;) {
		int done = 0;
		quiet_check(MPI_Test(req, &done, MPI_STATUS_IGNORE), "MPI_Test");
		if (done)
			return;
		nanosleep(&pause, NULL);
	}
}

static inline void quiet_barrier(long pause_ns)
{
	MPI_Request req;
	quiet_check(MPI_Ibarrier(MPI_COMM_WORLD, &req), "MPI_Ibarrier");
	quiet_wait(&req, pause_ns);
}

#endif
