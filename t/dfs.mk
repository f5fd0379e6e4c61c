# t/dfs.mk -- correctness on a real distributed file system: t/dfs.sh sets
# up a GlusterFS volume (bench/dfs_volume.sh) and runs the differential
# test, ROMIO's paths, fio verify and SQLite with two writers on it; it is
# skipped where the volume cannot be set up (no FUSE, no GlusterFS, not
# root).  It uses the programs of t/diff.mk and t/adio.mk.
TESTS += t/dfs.sh
EXTRA_DIST += t/dfs.sh

# t/fuse_lag: ffio on a FUSE file system whose server tells sizes late
# (t/lagfs, built with libfuse 3); skipped where it cannot be mounted.
check_PROGRAMS += t/fuse_lag
TESTS += t/fuse_lag
t_fuse_lag_LDADD = libffio_core.la
if HAVE_FUSE3
check_PROGRAMS += t/lagfs
t_lagfs_CFLAGS = $(AM_CFLAGS) $(FUSE3_CFLAGS)
t_lagfs_LDADD = $(FUSE3_LIBS)
endif
