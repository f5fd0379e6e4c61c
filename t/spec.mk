# t/spec.mk -- tests of the FF_IO_OPTS parser, the pattern matcher and the
# eie/cachea/bufa mapping (TAP), and the parser's fuzz harness.
check_PROGRAMS += t/spec_parse
TESTS += t/spec_parse
t_spec_parse_LDADD = libffio_core.la
check_PROGRAMS += t/spec_errors
TESTS += t/spec_errors
t_spec_errors_LDADD = libffio_core.la
check_PROGRAMS += t/spec_values t/spec_match
TESTS += t/spec_values t/spec_match
t_spec_values_LDADD = libffio_core.la
t_spec_match_LDADD = libffio_core.la
# The fuzz harness in its plain form: seeds plus deterministic mutations.
check_PROGRAMS += t/fuzz_spec
TESTS += t/fuzz_spec
t_fuzz_spec_LDADD = libffio_core.la
EXTRA_DIST += t/fuzz/spec.dict \
	t/fuzz/spec/seed01 \
	t/fuzz/spec/seed02 \
	t/fuzz/spec/seed03 \
	t/fuzz/spec/seed04 \
	t/fuzz/spec/seed05 \
	t/fuzz/spec/seed06 \
	t/fuzz/spec/seed07 \
	t/fuzz/spec/seed08 \
	t/fuzz/spec/seed09 \
	t/fuzz/spec/seed10 \
	t/fuzz/spec/seed11 \
	t/fuzz/spec/seed12 \
	t/fuzz/spec/seed13 \
	t/fuzz/spec/seed14 \
	t/fuzz/spec/seed15 \
	t/fuzz/spec/seed16 \
	t/fuzz/spec/seed17 \
	t/fuzz/spec/seed18 \
	t/fuzz/spec/seed19 \
	t/fuzz/spec/seed20 \
	t/fuzz/spec/seed21 \
	t/fuzz/spec/seed22 \
	t/fuzz/spec/seed23 \
	t/fuzz/spec/seed24 \
	t/fuzz/spec/seed25 \
	t/fuzz/spec/seed26 \
	t/fuzz/spec/seed27
