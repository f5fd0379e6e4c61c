# adio_glue/local.mk -- the MPI-IO glue (PMPI wrappers), one library per
# MPI from the same source: libffio_mpi.so for MPICH, built with $(MPICC),
# and libffio_mpi_openmpi.so for Open MPI, built with $(MPICC_OPENMPI),
# each when its MPI was found.  The compiler wrapper compiles and links
# (GNU make target-specific variables; private: not inherited by
# libffio.la); per-target flags give each its own objects.
if HAVE_MPI
lib_LTLIBRARIES += adio_glue/libffio_mpi.la
adio_glue_libffio_mpi_la_SOURCES = adio_glue/mpi.c
adio_glue_libffio_mpi_la_LIBADD = libffio.la
adio_glue_libffio_mpi_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
$(adio_glue_libffio_mpi_la_OBJECTS) adio_glue/libffio_mpi.la: private CC = $(MPICC)
endif
if HAVE_OPENMPI
lib_LTLIBRARIES += adio_glue/libffio_mpi_openmpi.la
adio_glue_libffio_mpi_openmpi_la_SOURCES = adio_glue/mpi.c
adio_glue_libffio_mpi_openmpi_la_CFLAGS = $(AM_CFLAGS)
adio_glue_libffio_mpi_openmpi_la_LIBADD = libffio.la
adio_glue_libffio_mpi_openmpi_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
$(adio_glue_libffio_mpi_openmpi_la_OBJECTS) adio_glue/libffio_mpi_openmpi.la: private CC = $(MPICC_OPENMPI)
endif
