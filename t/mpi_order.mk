# t/mpi_order.mk -- MPI's synchronising calls are coherence points over a
# cache (libffio_mpi): t/mpi_order (built with $(MPICC), linked with the
# glue) run by t/mpi_order.sh under $(MPIEXEC), which skips without MPI.
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
TESTS += t/mpi_order.sh
EXTRA_DIST += t/mpi_order.sh
