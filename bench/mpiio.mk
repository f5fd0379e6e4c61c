# bench/mpiio.mk -- build rules for these benchmarks.
