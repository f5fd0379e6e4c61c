# t/crash.mk -- what a write returned for outlives the writer's death
# (TAP): t/crash_kill.sh kills writers (signals, _exit, abort, in an fsync,
# in a forked child, as a process group, their guardian) over cache stacks
# and compares each file with the kernel's replay of the calls that
# returned; t/crash_mpi.sh ends an MPI job with MPI_Abort (t/crash_mpi,
# built with $(MPICC), and t/crash_mpi_openmpi with $(MPICC_OPENMPI)) and
# checks every rank's file the same way.
noinst_HEADERS += t/crash_log.h
check_PROGRAMS += t/crash_kill
t_crash_kill_LDADD = -ldl
check_SCRIPTS += t/crash_kill.sh
TESTS += t/crash_kill.sh
EXTRA_DIST += t/crash_kill.sh
if HAVE_MPI
check_PROGRAMS += t/crash_mpi
t_crash_mpi_LDADD = -ldl
$(t_crash_mpi_OBJECTS) t/crash_mpi$(EXEEXT): private CC = $(MPICC)
endif
if HAVE_OPENMPI
check_PROGRAMS += t/crash_mpi_openmpi
t_crash_mpi_openmpi_SOURCES = t/crash_mpi.c
t_crash_mpi_openmpi_CFLAGS = $(AM_CFLAGS)
t_crash_mpi_openmpi_LDADD = -ldl
$(t_crash_mpi_openmpi_OBJECTS) t/crash_mpi_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
check_SCRIPTS += t/crash_mpi.sh
TESTS += t/crash_mpi.sh
EXTRA_DIST += t/crash_mpi.sh
