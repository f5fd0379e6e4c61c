# t/advise.mk -- tests of ffio-advise (TAP): the rules on synthetic event
# logs, the printed spec parsed by ffio's own parser, and real runs
# (exit status, no regular file, strided writers, MPI markers).
check_PROGRAMS += t/advise_writer t/advise_parse
t_advise_parse_LDADD = libffio.la
check_SCRIPTS += t/advise_rules.sh t/advise_run.sh
TESTS += t/advise_rules.sh t/advise_run.sh t/advise_parse
EXTRA_DIST += t/advise_rules.sh t/advise_run.sh
