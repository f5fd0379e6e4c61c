# t/guard.mk -- tests of the guard: the guardian process that writes a
# process's cached data back when it dies, and the library's client of it.
check_PROGRAMS += t/guard_client
TESTS += t/guard_client
t_guard_client_LDADD = libffio_core.la
check_PROGRAMS += t/guard_lazy
TESTS += t/guard_lazy
t_guard_lazy_LDADD = libffio_core.la
