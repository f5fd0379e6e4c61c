# bench/netcdf.mk -- build rules for these benchmarks.
