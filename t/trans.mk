# t/trans.mk -- transparency: the kernel as the oracle.  t/trans_cases runs
# everyday situations raw and preloaded (t/trans_cases.sh compares them);
# t/trans_signal stresses a signal handler's writes against the caches;
# t/trans_fortran.sh does the same for gfortran's runtime.
check_PROGRAMS += t/trans_cases
t_trans_cases_SOURCES = t/trans_cases.c t/trans_cases_peers.c t/trans_cases.h
t_trans_cases_LDADD = -lpthread
TESTS += t/trans_cases.sh
EXTRA_DIST += t/trans_cases.sh
check_PROGRAMS += t/trans_signal
TESTS += t/trans_signal.sh
EXTRA_DIST += t/trans_signal.sh
TESTS += t/trans_fortran.sh
EXTRA_DIST += t/trans_fortran.sh t/trans_fortran.f90
