# bench/netcdf.mk -- the netCDF benchmarks: bench/netcdf_tilerec (serial
# tile + record program, with bench/netcdf_tilerec.sh), bench/netcdf_seed
# (the second seed's Method 1 / Method 2 / tile reads; MPI, with
# bench/netcdf_seed.sh), bench/netcdf_ncrcat.sh (NCO's ncrcat), and the
# ceiling they print next to raw and ffio (bench/bound_io.c, a preloaded
# module that is not a layer, built as a shared object that is not installed).
# make bench-netcdf runs the default sizes; bench-netcdf-full the seed's.
# Every table ends with bench/table-check's check line (bench/nc_check.sh);
# both targets run all three scripts, whatever the first ones' status, and
# fail at the end when one of them failed (a check or a run).
EXTRA_DIST += bench/netcdf_tilerec.sh bench/netcdf_seed.sh bench/netcdf_ncrcat.sh bench/nc_check.sh
if HAVE_NETCDF
noinst_LTLIBRARIES += bench/ffio_bound.la
bench_ffio_bound_la_SOURCES = bench/bound_io.c
bench_ffio_bound_la_LDFLAGS = -module -avoid-version -shared -rpath '$(abs_builddir)/bench'
bench_ffio_bound_la_LIBADD = -ldl
noinst_PROGRAMS += bench/netcdf_tilerec
bench_netcdf_tilerec_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
bench_netcdf_tilerec_LDADD = $(NETCDF_LIBS)
if HAVE_MPI
noinst_PROGRAMS += bench/netcdf_seed
bench_netcdf_seed_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
bench_netcdf_seed_LDADD = $(NETCDF_LIBS)
bench/netcdf_seed-netcdf_seed.$(OBJEXT): CC = $(MPICC)
bench_netcdf_seed_LINK = $(MPICC) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(LDFLAGS) -o $@
endif
# The same program for Open MPI, with the seed's Method 2 through PnetCDF
# (Debian's PnetCDF is built on Open MPI), so that Method 1 runs under the
# same MPI as PnetCDF.
if HAVE_PNETCDF
noinst_PROGRAMS += bench/netcdf_seed_openmpi
bench_netcdf_seed_openmpi_SOURCES = bench/netcdf_seed.c bench/netcdf_seed_pnetcdf.c
bench_netcdf_seed_openmpi_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS) -DSEED_PNETCDF
bench_netcdf_seed_openmpi_LDADD = $(NETCDF_LIBS) -lpnetcdf
$(bench_netcdf_seed_openmpi_OBJECTS) bench/netcdf_seed_openmpi$(EXEEXT): private CC = $(MPICC_OPENMPI)
endif
endif
NC_BENCH_ENV = MPIEXEC='$(MPIEXEC)' MPIRUN_OPENMPI='$(MPIRUN_OPENMPI)'
bench-netcdf: all
	rc=0; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_tilerec.sh '$(abs_top_builddir)' 5 || rc=1; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_seed.sh '$(abs_top_builddir)' || rc=1; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_ncrcat.sh '$(abs_top_builddir)' || rc=1; \
	exit $$rc
bench-netcdf-full: all
	rc=0; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_tilerec.sh '$(abs_top_builddir)' 3 600 600 150 5 3 8 400 64 || rc=1; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_seed.sh '$(abs_top_builddir)' 600 600 150 5 3 3 || rc=1; \
	$(NC_BENCH_ENV) $(SHELL) $(srcdir)/bench/netcdf_ncrcat.sh '$(abs_top_builddir)' 4 4 64 400 1024 3 || rc=1; \
	exit $$rc
.PHONY: bench-netcdf bench-netcdf-full
