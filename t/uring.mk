# t/uring.mk -- tests of the uring bottom layer and the buffer pool (TAP).
noinst_HEADERS += t/uring_common.h
check_PROGRAMS += t/uring_async
TESTS += t/uring_async
t_uring_async_LDADD = libffio.la
