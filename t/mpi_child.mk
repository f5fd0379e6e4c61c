# t/mpi_child.mk -- the MPI glue loads into programs without MPI: t/mpi_child
# (built with $(MPICC), and t/mpi_child_openmpi with $(MPICC_OPENMPI), not
# linked with the glue: ffio-run preloads it) run by t/mpi_child.sh.
if HAVE_MPI
check_PROGRAMS += t/mpi_child
t_mpi_child_SOURCES = t/mpi_child.c
$(t_mpi_child_OBJECTS) t/mpi_child$(EXEEXT): private CC = $(MPICC)
endif
if HAVE_OPENMPI
check_PROGRAMS += t/mpi_child_openmpi
t_mpi_child_openmpi_SOURCES = t/mpi_child.c
t_mpi_child_openmpi_CFLAGS = $(AM_CFLAGS)
$(t_mpi_child_openmpi_OBJECTS) t/mpi_child_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
TESTS += t/mpi_child.sh
EXTRA_DIST += t/mpi_child.sh
