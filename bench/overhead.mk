# bench/overhead.mk -- what ffio costs per call.  bench/overhead: the cost
# of the preloaded library on a file no FF_IO_OPTS entry matches (10^6
# small preads, plain vs preloaded, medians).  bench/percall: ns per lseek,
# small write and small read on a cached file (cache hits) against a plain
# function call doing the copy (the ceiling) and the kernel's calls.
# Neither is linked with libffio: they preload the build tree's copy.
noinst_PROGRAMS += bench/overhead bench/percall
bench_overhead_SOURCES = bench/overhead.c
bench_overhead_CPPFLAGS = $(AM_CPPFLAGS) -DFFIO_BUILD_LIB='"$(abs_top_builddir)/.libs/libffio.so"'
bench_overhead_LDADD =
bench_percall_SOURCES = bench/percall.c
bench_percall_CPPFLAGS = $(AM_CPPFLAGS) -DFFIO_BUILD_LIB='"$(abs_top_builddir)/.libs/libffio.so"'
bench_percall_LDADD =
