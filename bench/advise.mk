# bench/advise.mk -- make bench-advise: ffio-advise's advice against raw
# and against the best spec of a grid search, for each benchmark workload,
# in the same run (bench/run-bench-advise); the workload programs that
# only it uses: random 4 KiB reads (bench/random_read), sequential
# streaming (bench/stream) and the seed's Method 1 alone
# (bench/netcdf_seed_m1).  Not part of make bench (2.5 minutes, --full 4
# on 2 cores; see the script's header).  BENCH_ADVISE_FLAGS adds options (bench/run-bench-advise --help),
# e.g. make bench-advise BENCH_ADVISE_FLAGS=--full.
EXTRA_DIST += bench/run-bench-advise
noinst_PROGRAMS += bench/random_read bench/stream
bench_random_read_LDADD =
bench_stream_LDADD =
if HAVE_NETCDF
if HAVE_MPI
noinst_PROGRAMS += bench/netcdf_seed_m1
bench_netcdf_seed_m1_CFLAGS = $(AM_CFLAGS) $(NETCDF_CFLAGS)
bench_netcdf_seed_m1_LDADD = $(NETCDF_LIBS)
bench/netcdf_seed_m1-netcdf_seed_m1.$(OBJEXT): CC = $(MPICC)
bench_netcdf_seed_m1_LINK = $(MPICC) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(LDFLAGS) -o $@
endif
endif
bench-advise: all
	$(BENCH_ENV) $(SHELL) $(srcdir)/bench/run-bench-advise --builddir '$(abs_top_builddir)' \
		--srcdir '$(abs_top_srcdir)' --out '$(abs_top_builddir)/bench/results' $(BENCH_ADVISE_FLAGS)
.PHONY: bench-advise
