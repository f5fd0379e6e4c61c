# t/core.mk -- tests of the core (file table, stack walking, positions).
check_PROGRAMS += t/core_file
TESTS += t/core_file
t_core_file_LDADD = libffio_core.la
check_PROGRAMS += t/core_kernel_made
TESTS += t/core_kernel_made
t_core_kernel_made_LDADD = libffio_core.la
check_PROGRAMS += t/core_hints
TESTS += t/core_hints
t_core_hints_LDADD = libffio_core.la
check_PROGRAMS += t/core_locks
TESTS += t/core_locks
t_core_locks_LDADD = libffio.la
TESTS += t/core_exports.sh
check_PROGRAMS += t/core_fallback
TESTS += t/core_fallback
t_core_fallback_LDADD = libffio_core.la
check_PROGRAMS += t/core_heard
TESTS += t/core_heard
t_core_heard_LDADD = libffio.la
check_PROGRAMS += t/core_write_back
TESTS += t/core_write_back
t_core_write_back_LDADD = libffio.la
check_PROGRAMS += t/core_fork_locks
TESTS += t/core_fork_locks
t_core_fork_locks_LDADD = libffio.la -lpthread
check_PROGRAMS += t/core_park
TESTS += t/core_park
t_core_park_LDADD = libffio_core.la
check_PROGRAMS += t/core_signal_wait
TESTS += t/core_signal_wait
t_core_signal_wait_LDADD = libffio_core.la

# the descriptor table grown at start, while one thread (no RCU wait in a
# rank's first open)
check_PROGRAMS += t/core_fd_reserve
TESTS += t/core_fd_reserve
t_core_fd_reserve_LDADD = libffio.la
