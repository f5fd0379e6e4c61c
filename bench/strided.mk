# bench/strided.mk -- build rules for these benchmarks.
