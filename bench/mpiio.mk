# bench/mpiio.mk -- the noncontiguous-view MPI-IO benchmark
# (bench/mpiio_noncontig.c) and the cost of a barrier with libffio_mpi
# (bench/mpi_barrier.c), built with $(MPICC) when MPI was found; not
# linked with libffio (run them raw, or with the libraries preloaded).
# bench/run-mpiio runs the first for the harness: raw, over ffio and its
# ceiling; bench/run-barrier the second, raw and over ffio.
EXTRA_DIST += bench/mpiio_noncontig.c bench/run-mpiio bench/mpi_barrier.c bench/run-barrier
if HAVE_MPI
noinst_PROGRAMS += bench/mpiio_noncontig
bench_mpiio_noncontig_SOURCES = bench/mpiio_noncontig.c
bench_mpiio_noncontig_LDADD =
$(bench_mpiio_noncontig_OBJECTS) bench/mpiio_noncontig$(EXEEXT): private CC = $(MPICC)
noinst_PROGRAMS += bench/mpi_barrier
bench_mpi_barrier_SOURCES = bench/mpi_barrier.c
bench_mpi_barrier_LDADD =
$(bench_mpi_barrier_OBJECTS) bench/mpi_barrier$(EXEEXT): private CC = $(MPICC)
endif
