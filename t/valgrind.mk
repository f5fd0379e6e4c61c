# t/valgrind.mk -- make check-valgrind: the suite again with every C test
# program run under memcheck (through libtool, so the real program is
# checked, not its wrapper script), and the programs those exec (their own
# re-executions with a spec in the environment, ncdump) followed.  Any
# memcheck error fails the test: memcheck exits 97 (an ERROR to the TAP
# driver) and its report is in the test's .log.  Only the C test programs
# run: the .sh tests would run exactly as make check runs them (their
# programs are not under memcheck), so they are left to make check.
# The guardian is not followed: it is a static program, whose malloc
# memcheck cannot replace (every allocation would be reported), and it runs
# natively as under make check.
# Results replace those of make check (same .log and .trs files).
VALGRIND = valgrind
VALGRIND_FLAGS = --tool=memcheck --error-exitcode=97 --trace-children=yes \
	--trace-children-skip=*/ffio-guardian \
	--track-origins=yes --num-callers=30 --quiet
check-valgrind:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(filter-out %.sh,$(TESTS))' \
		LOG_COMPILER='$(LIBTOOL) --mode=execute $(VALGRIND) $(VALGRIND_FLAGS)'
.PHONY: check-valgrind
