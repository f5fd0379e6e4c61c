# bench/uring.mk -- benchmarks of the uring layer: cold strided reads,
# compute/write overlap, O_DIRECT reads (see ffio-uring(7)); uring_direct's
# ceiling rows use liburing directly, when it was found.
noinst_HEADERS += bench/uring_bench.h
noinst_PROGRAMS += bench/uring_strided
bench_uring_strided_LDADD = libffio.la
bench_uring_strided_LDFLAGS = -no-install
noinst_PROGRAMS += bench/uring_overlap
bench_uring_overlap_LDADD = libffio.la
bench_uring_overlap_LDFLAGS = -no-install
noinst_PROGRAMS += bench/uring_direct
bench_uring_direct_CFLAGS = $(AM_CFLAGS) $(LIBURING_CFLAGS)
bench_uring_direct_LDADD = libffio.la $(LIBURING_LIBS)
bench_uring_direct_LDFLAGS = -no-install
