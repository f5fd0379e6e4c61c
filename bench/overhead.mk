# bench/overhead.mk -- bench/overhead: the cost of the preloaded library on
# a file no FF_IO_OPTS entry matches (10^6 small preads, plain vs preloaded,
# medians).  Not linked with libffio: it preloads the build tree's copy.
noinst_PROGRAMS += bench/overhead
bench_overhead_SOURCES = bench/overhead.c
bench_overhead_CPPFLAGS = $(AM_CPPFLAGS) -DFFIO_BUILD_LIB='"$(abs_top_builddir)/.libs/libffio.so"'
bench_overhead_LDADD =
