# t/dfs.mk -- correctness on a real distributed file system: t/dfs.sh sets
# up a GlusterFS volume (bench/dfs_volume.sh) and runs the differential
# test, ROMIO's paths, fio verify and SQLite with two writers on it; it is
# skipped where the volume cannot be set up (no FUSE, no GlusterFS, not
# root).  It uses the programs of t/diff.mk and t/adio.mk.
TESTS += t/dfs.sh
EXTRA_DIST += t/dfs.sh
