# bench/dfs.mk -- make bench-dfs: the benchmarks on a real distributed file
# system (a GlusterFS volume on this machine, bench/dfs_volume.sh), beside
# the delay layer's simulation of it, by bench/run-bench-dfs; bench/dfs_probe
# measures what one request costs there (and the strided pattern's
# ceiling).  BENCH_DFS_FLAGS adds options (bench/run-bench-dfs --help).
EXTRA_DIST += bench/dfs_volume.sh bench/run-bench-dfs t/bench_dfs_look.sh
TESTS += t/bench_dfs_look.sh
noinst_PROGRAMS += bench/dfs_probe
bench_dfs_probe_LDADD = libffio.la
bench_dfs_probe_LDFLAGS = -no-install
bench-dfs: all
	$(BENCH_ENV) $(SHELL) $(srcdir)/bench/run-bench-dfs --builddir '$(abs_top_builddir)' \
		--srcdir '$(abs_top_srcdir)' --out '$(abs_top_builddir)/bench/results/dfs' $(BENCH_DFS_FLAGS)
.PHONY: bench-dfs
