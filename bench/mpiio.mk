# bench/mpiio.mk -- the noncontiguous-view MPI-IO benchmark
# (bench/mpiio_noncontig.c), built with $(MPICC) when MPI was found; not
# linked with libffio (run it raw, or with libffio preloaded).
# bench/run-mpiio runs it for the harness: raw, over ffio and its ceiling.
EXTRA_DIST += bench/mpiio_noncontig.c bench/run-mpiio
if HAVE_MPI
noinst_PROGRAMS += bench/mpiio_noncontig
bench_mpiio_noncontig_SOURCES = bench/mpiio_noncontig.c
bench_mpiio_noncontig_LDADD =
$(bench_mpiio_noncontig_OBJECTS) bench/mpiio_noncontig$(EXEEXT): private CC = $(MPICC)
endif
