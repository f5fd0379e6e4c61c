# adio_glue/local.mk -- libffio_mpi.so, the MPI-IO glue (PMPI wrappers for
# MPICH), built with $(MPICC) when MPI was found.
if HAVE_MPI
lib_LTLIBRARIES += adio_glue/libffio_mpi.la
adio_glue_libffio_mpi_la_SOURCES = adio_glue/mpi.c
adio_glue_libffio_mpi_la_LIBADD = libffio.la
adio_glue_libffio_mpi_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
# The glue is compiled and linked by the MPI compiler wrapper (GNU make
# target-specific variables; private: not inherited by libffio.la).
$(adio_glue_libffio_mpi_la_OBJECTS) adio_glue/libffio_mpi.la: private CC = $(MPICC)
endif
