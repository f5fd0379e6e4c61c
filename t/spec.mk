# t/spec.mk -- tests of the FF_IO_OPTS parser, the pattern matcher and the
# eie/cachea/bufa mapping (TAP), and the parser's fuzz harness.
check_PROGRAMS += t/spec_parse
TESTS += t/spec_parse
t_spec_parse_LDADD = libffio.la
