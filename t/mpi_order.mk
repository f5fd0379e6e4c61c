# t/mpi_order.mk -- MPI's synchronising calls are coherence points over a
# cache (libffio_mpi): t/mpi_order (built with $(MPICC), linked with the
# glue) run by t/mpi_order.sh under $(MPIEXEC), which skips without MPI;
# t/mpi_order_openmpi the same under Open MPI.
if HAVE_MPI
check_PROGRAMS += t/mpi_order
t_mpi_order_SOURCES = t/mpi_order.c
t_mpi_order_LDADD = adio_glue/libffio_mpi.la
$(t_mpi_order_OBJECTS) t/mpi_order$(EXEEXT): private CC = $(MPICC)
# the same program without the glue: ffio-run must preload it
check_PROGRAMS += t/mpi_order_plain
t_mpi_order_plain_SOURCES = t/mpi_order.c
t_mpi_order_plain_CFLAGS = $(AM_CFLAGS)
$(t_mpi_order_plain_OBJECTS) t/mpi_order_plain$(EXEEXT): private CC = $(MPICC)
endif
if HAVE_OPENMPI
check_PROGRAMS += t/mpi_order_openmpi t/mpi_order_plain_openmpi
t_mpi_order_openmpi_SOURCES = t/mpi_order.c
t_mpi_order_openmpi_CFLAGS = $(AM_CFLAGS)
t_mpi_order_openmpi_LDADD = adio_glue/libffio_mpi_openmpi.la
t_mpi_order_plain_openmpi_SOURCES = t/mpi_order.c
t_mpi_order_plain_openmpi_CFLAGS = $(AM_CFLAGS)
$(t_mpi_order_openmpi_OBJECTS) $(t_mpi_order_plain_openmpi_OBJECTS) t/mpi_order_openmpi$(EXEEXT) \
	t/mpi_order_plain_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
TESTS += t/mpi_order.sh
EXTRA_DIST += t/mpi_order.sh
