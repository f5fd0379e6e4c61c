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
# t/mpi_glue_comm: linked with the glue (t/mpi_child.sh runs it too)
if HAVE_MPI
check_PROGRAMS += t/mpi_glue_comm
t_mpi_glue_comm_SOURCES = t/mpi_glue_comm.c
t_mpi_glue_comm_LDADD = adio_glue/libffio_mpi.la -ldl
$(t_mpi_glue_comm_OBJECTS) t/mpi_glue_comm$(EXEEXT): private CC = $(MPICC)
endif
if HAVE_OPENMPI
check_PROGRAMS += t/mpi_glue_comm_openmpi
t_mpi_glue_comm_openmpi_SOURCES = t/mpi_glue_comm.c
t_mpi_glue_comm_openmpi_CFLAGS = $(AM_CFLAGS)
t_mpi_glue_comm_openmpi_LDADD = adio_glue/libffio_mpi_openmpi.la -ldl
$(t_mpi_glue_comm_openmpi_OBJECTS) t/mpi_glue_comm_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
