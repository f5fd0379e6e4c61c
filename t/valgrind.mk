# t/valgrind.mk -- make check-valgrind: the suite again with every C test
# program run under memcheck (through libtool, so the real program is
# checked, not its wrapper script), and the programs those exec (their own
# re-executions with a spec in the environment, ncdump) followed.  Any
# memcheck error fails the test: memcheck exits 97 (an ERROR to the TAP
# driver) and its report is in the test's .log.  The .sh tests run as
# usual.  Results replace those of make check (same .log and .trs files).
VALGRIND = valgrind
VALGRIND_FLAGS = --tool=memcheck --error-exitcode=97 --trace-children=yes \
	--track-origins=yes --num-callers=30 --quiet
check-valgrind:
	$(MAKE) $(AM_MAKEFLAGS) check \
		LOG_COMPILER='$(LIBTOOL) --mode=execute $(VALGRIND) $(VALGRIND_FLAGS)'
.PHONY: check-valgrind
