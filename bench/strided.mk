# bench/strided.mk -- the strided record benchmark (raw against cache stacks).
noinst_PROGRAMS += bench/strided
bench_strided_LDADD = libffio.la
# A program, not libtool's wrapper script: the wrapper's shell, sed and ls
# would be timed too, and under a preload each loads libffio (strided -P
# with libffio preloaded and no entry ran 5% slower than raw for it).
bench_strided_LDFLAGS = -no-install
