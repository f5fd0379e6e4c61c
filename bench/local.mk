# bench/local.mk -- benchmarks (make bench, make bench-full); each program
# family keeps its build rules in its own fragment.
noinst_HEADERS += bench/mpi_quiet.h bench/bench_util.h bench/netcdf_seed.h
include bench/programs.mk
include bench/overhead.mk
include bench/strided.mk
include bench/uring.mk
include bench/mpiio.mk
include bench/netcdf.mk
include bench/dfs.mk
include bench/advise.mk
