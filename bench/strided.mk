# bench/strided.mk -- the strided record benchmark (raw against cache stacks).
noinst_PROGRAMS += bench/strided
bench_strided_LDADD = libffio.la
