# bench/programs.mk -- build rules for these benchmarks.
