# bench/programs.mk -- Program I / Program II of the ADIO paper (bench/progio.c,
# built with $(MPICC) when MPI was found), the benchmark harness
# (bench/run-bench), the `make bench` / `make bench-full` targets and the
# harness's tests (t/bench_*.sh).
EXTRA_DIST += bench/run-bench bench/README.md bench/progio.c t/bench_progio.sh t/bench_harness.sh t/bench_looks.sh t/tap.sh \
	bench/table-check bench/known_slower t/bench_tables.sh

if HAVE_MPI
# Two builds of one source: progio (POSIX and MPI-IO versions, not linked
# with libffio, so that "direct" really is direct) and progio-ffapi (the
# same program with the ffio API version, linked with libffio).  Both are
# compiled and linked with the MPI wrapper compiler.
noinst_PROGRAMS += bench/progio bench/progio-ffapi
bench_progio_SOURCES = bench/progio.c
bench_progio_LDADD =
bench_progio_ffapi_SOURCES = bench/progio.c
bench_progio_ffapi_CPPFLAGS = $(AM_CPPFLAGS) -DPROGIO_FFAPI
bench_progio_ffapi_LDADD = libffio.la
bench_progio_ffapi_LDFLAGS = -no-install
# The objects are compiled with $(MPICC) (a GNU make target-specific
# value); both programs are linked with it.
bench/progio.$(OBJEXT) bench/progio_ffapi-progio.$(OBJEXT): CC = $(MPICC)
bench_progio_LINK = $(MPICC) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) $(LDFLAGS) -o $@
bench_progio_ffapi_LINK = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) \
	$(LIBTOOLFLAGS) --mode=link $(MPICC) $(AM_CFLAGS) $(CFLAGS) \
	$(bench_progio_ffapi_LDFLAGS) $(LDFLAGS) -o $@
endif

TESTS += t/bench_progio.sh t/bench_harness.sh t/bench_looks.sh t/bench_tables.sh

# The benchmarks: run-bench (Program I/II, then the overhead, strided,
# uring and mpiio programs that are built), then the netCDF set (its own
# make targets, bench/netcdf.mk).  BENCH_FLAGS adds harness options
# (make bench BENCH_FLAGS='--reps 5 --procs 2').
BENCH_ENV = MPIEXEC='$(MPIEXEC)' MPIRUN_OPENMPI='$(MPIRUN_OPENMPI)' FFIO_LIB='$(abs_top_builddir)/.libs/libffio.so'
BENCH_NETCDF =
BENCH_NETCDF_FULL =
if HAVE_NETCDF
BENCH_NETCDF += bench-netcdf
BENCH_NETCDF_FULL += bench-netcdf-full
endif
# A failing harness (a wrong read-back, a table's failed check) still lets
# the netCDF set print its tables; the target fails at the end.
bench: all
	rc=0; $(BENCH_ENV) $(SHELL) $(srcdir)/bench/run-bench --builddir '$(abs_top_builddir)' \
		--srcdir '$(abs_top_srcdir)' --out '$(abs_top_builddir)/bench/results' $(BENCH_FLAGS) || rc=1; \
	test -z '$(BENCH_NETCDF)' || $(MAKE) $(AM_MAKEFLAGS) $(BENCH_NETCDF) || rc=1; \
	exit $$rc
bench-full: all
	rc=0; $(BENCH_ENV) $(SHELL) $(srcdir)/bench/run-bench --full --builddir '$(abs_top_builddir)' \
		--srcdir '$(abs_top_srcdir)' --out '$(abs_top_builddir)/bench/results' $(BENCH_FLAGS) || rc=1; \
	test -z '$(BENCH_NETCDF_FULL)' || $(MAKE) $(AM_MAKEFLAGS) $(BENCH_NETCDF_FULL) || rc=1; \
	exit $$rc
.PHONY: bench bench-full
EXTRA_DIST += bench/results/README.md
