# t/spec.mk -- tests of the FF_IO_OPTS parser, the pattern matcher and the
# eie/cachea/bufa mapping (TAP), and the parser's fuzz harness.
check_PROGRAMS += t/spec_parse
TESTS += t/spec_parse
t_spec_parse_LDADD = libffio.la
check_PROGRAMS += t/spec_errors
TESTS += t/spec_errors
t_spec_errors_LDADD = libffio.la
check_PROGRAMS += t/spec_values t/spec_match
TESTS += t/spec_values t/spec_match
t_spec_values_LDADD = libffio.la
t_spec_match_LDADD = libffio.la
