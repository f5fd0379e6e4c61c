# t/share.mk -- files that several processes share (TAP): writers of
# interleaved records in one file, closing in every order, over every
# stack (t/share_writers.sh runs t/share_writers).
check_PROGRAMS += t/share_writers
t_share_writers_LDADD = -lpthread
TESTS += t/share_writers.sh
EXTRA_DIST += t/share_writers.sh
