# t/judges.mk -- make check-judges: external test suites as judges of
# ffio's transparency, too slow for make check: Python's own standard-
# library tests (t/judges_python.sh) and, when netCDF is there,
# netCDF4-python and xarray (t/netcdf_python.sh, also part of make check).
# The TAP driver runs them (PASS/FAIL per test, comments shown); each
# script's log is t/<name>.log, the runs' outputs are in t/judges-logs/,
# and the per-module table t/judges-logs/summary.txt is printed last.
EXTRA_DIST += t/judges_python.sh
JUDGES = t/judges_python.sh
if HAVE_NETCDF
JUDGES += t/netcdf_python.sh
endif
check-judges: all
	@rc=0; \
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(JUDGES)' TEST_SUITE_LOG=t/judges-suite.log \
		AM_SH_LOG_DRIVER_FLAGS=--comments || rc=$$?; \
	if test -f t/judges-logs/summary.txt; then \
		echo "check-judges: Python's test modules (logs in t/judges-logs/):"; \
		cat t/judges-logs/summary.txt; \
	fi; \
	exit $$rc
clean-local: clean-judges
clean-judges:
	rm -rf t/judges-logs t/judges-suite.log
.PHONY: check-judges clean-judges
