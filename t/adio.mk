# t/adio.mk -- tests of POSIX AIO over ffio and of the MPI-IO paths and
# glue (TAP).  The MPI programs are built with $(MPICC) and run under
# $(MPIEXEC) -n 3 by the .sh tests, which skip when MPI is not configured.
noinst_HEADERS += t/adio_pattern.h
check_PROGRAMS += t/adio_aio t/adio_check
TESTS += t/adio_aio
t_adio_aio_LDADD = libffio.la
if HAVE_MPI
check_PROGRAMS += t/adio_mpi t/adio_mpi_glue
t_adio_mpi_SOURCES = t/adio_mpi.c
t_adio_mpi_glue_SOURCES = t/adio_mpi.c
t_adio_mpi_glue_CFLAGS = $(AM_CFLAGS)
t_adio_mpi_glue_LDADD = adio_glue/libffio_mpi.la
$(t_adio_mpi_OBJECTS) $(t_adio_mpi_glue_OBJECTS) t/adio_mpi$(EXEEXT) t/adio_mpi_glue$(EXEEXT): private CC = $(MPICC)
endif
# The same programs for Open MPI (t/mpi_lib.sh runs them under both of its
# I/O components, OMPIO and ROMIO).
if HAVE_OPENMPI
check_PROGRAMS += t/adio_mpi_openmpi t/adio_mpi_glue_openmpi
t_adio_mpi_openmpi_SOURCES = t/adio_mpi.c
t_adio_mpi_openmpi_CFLAGS = $(AM_CFLAGS)
t_adio_mpi_glue_openmpi_SOURCES = t/adio_mpi.c
t_adio_mpi_glue_openmpi_CFLAGS = $(AM_CFLAGS)
t_adio_mpi_glue_openmpi_LDADD = adio_glue/libffio_mpi_openmpi.la
$(t_adio_mpi_openmpi_OBJECTS) $(t_adio_mpi_glue_openmpi_OBJECTS) t/adio_mpi_openmpi$(EXEEXT) \
	t/adio_mpi_glue_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
TESTS += t/adio_paths.sh t/adio_glue.sh
EXTRA_DIST += t/adio_paths.sh t/adio_glue.sh t/mpi_lib.sh
