# t/uring.mk -- tests of the uring bottom layer and the buffer pool (TAP).
noinst_HEADERS += t/uring_common.h
check_PROGRAMS += t/uring_async
TESTS += t/uring_async
t_uring_async_LDADD = libffio.la
check_PROGRAMS += t/uring_errors t/uring_fork
TESTS += t/uring_errors t/uring_fork
t_uring_errors_LDADD = libffio.la
t_uring_fork_LDADD = libffio.la
check_PROGRAMS += t/uring_direct t/uring_bufpool
TESTS += t/uring_direct t/uring_bufpool
t_uring_direct_LDADD = libffio.la
t_uring_bufpool_LDADD = libffio.la
check_PROGRAMS += t/uring_fallback t/uring_hostmalloc
TESTS += t/uring_fallback t/uring_hostmalloc
t_uring_fallback_LDADD = libffio.la
TESTS += t/uring_model.sh
EXTRA_DIST += t/uring_model.sh
