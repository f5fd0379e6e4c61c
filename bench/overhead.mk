# bench/overhead.mk -- build rules for these benchmarks.
