# bench/uring.mk -- build rules for these benchmarks.
