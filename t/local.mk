# t/local.mk -- the test suite (TAP); each area keeps its tests in its own
# fragment so that they can grow independently.
noinst_HEADERS += t/tap.h t/kernel_view.h t/rng.h t/fake_clock.h t/bad_buf.h t/kill_safe.h t/cache_of.h
include t/core.mk
include t/spec.mk
include t/posix.mk
include t/layers.mk
include t/cache.mk
include t/uring.mk
include t/reliability.mk
include t/adio.mk
include t/mpi_order.mk
include t/mpi_child.mk
include t/netcdf.mk
include t/trans.mk
include t/diff.mk
include t/judges.mk
include t/valgrind.mk
include t/dfs.mk
include t/share.mk
include t/guard.mk
include t/crash.mk
include t/pnetcdf.mk
include t/advise.mk
