# t/reliability.mk -- reliability and security tests (TAP): deferred
# errors, process lifecycle, threads, fuzzing, logging and set-uid safety,
# external programs as judges.  See man/ffio-reliability.7.
check_PROGRAMS += t/rel_tool
t_rel_tool_LDADD = -lpthread
check_SCRIPTS += t/rel_lifecycle.sh
TESTS += t/rel_lifecycle.sh
EXTRA_DIST += t/rel_lib.sh t/rel_lifecycle.sh
check_PROGRAMS += t/rel_errors
TESTS += t/rel_errors
t_rel_errors_LDADD = libffio.la
check_SCRIPTS += t/rel_fullfs.sh
TESTS += t/rel_fullfs.sh
EXTRA_DIST += t/rel_fullfs.sh
check_PROGRAMS += t/rel_threads
t_rel_threads_LDADD = -lpthread
check_SCRIPTS += t/rel_threads.sh
TESTS += t/rel_threads.sh
EXTRA_DIST += t/rel_threads.sh
check_SCRIPTS += t/rel_fuzz.sh
TESTS += t/rel_fuzz.sh
EXTRA_DIST += t/rel_fuzz.sh
check_PROGRAMS += t/rel_bigspec
TESTS += t/rel_bigspec
t_rel_bigspec_LDADD = libffio_core.la
check_SCRIPTS += t/rel_security.sh
TESTS += t/rel_security.sh
EXTRA_DIST += t/rel_security.sh
check_SCRIPTS += t/rel_judges.sh
TESTS += t/rel_judges.sh
EXTRA_DIST += t/rel_judges.sh t/sqlite_wal.py
