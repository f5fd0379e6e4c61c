# t/share.mk -- files that several processes share (TAP): writers of
# interleaved records in one file, closing in every order, over every
# stack (t/share_writers.sh runs t/share_writers).
noinst_HEADERS += t/share_pattern.h
check_PROGRAMS += t/share_writers
t_share_writers_LDADD = -lpthread
TESTS += t/share_writers.sh
EXTRA_DIST += t/share_writers.sh
if HAVE_MPI
check_PROGRAMS += t/share_ranks
$(t_share_ranks_OBJECTS) t/share_ranks$(EXEEXT): private CC = $(MPICC)
endif
TESTS += t/share_ranks.sh
EXTRA_DIST += t/share_ranks.sh
