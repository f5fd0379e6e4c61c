# t/core.mk -- tests of the core (file table, stack walking, positions).
check_PROGRAMS += t/core_file
TESTS += t/core_file
t_core_file_LDADD = libffio_core.la
check_PROGRAMS += t/core_hints
TESTS += t/core_hints
t_core_hints_LDADD = libffio_core.la
check_PROGRAMS += t/core_locks
TESTS += t/core_locks
t_core_locks_LDADD = libffio.la
TESTS += t/core_exports.sh
check_PROGRAMS += t/core_fork_locks
TESTS += t/core_fork_locks
t_core_fork_locks_LDADD = libffio.la -lpthread
check_PROGRAMS += t/core_park
TESTS += t/core_park
t_core_park_LDADD = libffio_core.la
