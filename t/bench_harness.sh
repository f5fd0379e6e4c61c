#!/bin/sh
# t/bench_harness.sh -- the benchmark harness (bench/run-bench) at tiny
# sizes: a run over every version and case writes the tables (each with
# its ceiling row and the fractions of it) and the CSV with one row per
# case; a run whose program reads back a wrong byte makes the harness
# fail loudly.
if [ -z "$MPIEXEC" ] || [ ! -x "$top_builddir/bench/progio" ]; then
	echo "1..0 # SKIP MPI not configured (bench/progio not built)"
	exit 0
fi
. "$top_srcdir/t/tap.sh"
tap_begin bench_harness
harness="$top_srcdir/bench/run-bench --builddir $top_builddir --out $dir/res --dir $dir/work \
--procs 2 --reps 1 --iters 1 --size 16k --reqs 4k --cache cache:16k:4:1 --no-others"
echo "1..11"

bash $harness --progs 2 >"$dir/out" 2>"$dir/err"
rc=$?
ok $rc "a tiny run over every case succeeds"
[ $rc = 0 ] || sed 's/^/# /' "$dir/err" | tail -n 20
# 2 direct versions + 3 versions x 3 cases, on the local disk and the
# simulated one, + a ceiling on each
rows=$(($(wc -l <"$dir/res/progio.csv") - 1))
test "$rows" = 22; ok $? "the summary CSV has one row per case (got $rows, expected 22)"
runs=$(grep -c '^2,' "$dir/res/progio-runs.csv")
test "$runs" = 22; ok $? "the runs CSV has one row per run (got $runs, expected 22)"
grep -q '^  POSIX direct .* 1\.00x' "$dir/out"; ok $? "the local table gives POSIX direct the ratio 1.00"
grep -q '^  MPI-IO via ffio ' "$dir/out"; ok $? "the table has the MPI-IO via ffio row"
grep -q 'simulated parallel file system' "$dir/out"; ok $? "a table for the simulated file system"
test "$(grep -c '^  ceiling  *[0-9.]* \[' "$dir/out")" = 2; ok $? "each table has a ceiling row"
grep -q '^  POSIX via ffio   [0-9.]*  *[0-9.]*  *[0-9.]*  *$' "$dir/out"; ok $? "and gives each case as a fraction of the ceiling"
grep -q "^  ffio's overhead (stack 'sys', the same program): POSIX [-+][0-9.]*% (medians) [-+][0-9.]*% (minima), MPI-IO [-+][0-9.]*% (medians) [-+][0-9.]*% (minima)" "$dir/out"
ok $? "the local table states ffio's overhead for POSIX and MPI-IO"

bash $harness --progs 1 --no-sim --extra-args --corrupt >"$dir/out" 2>"$dir/err"
rc=$?
test $rc -ne 0; ok $? "a wrong read-back fails the harness (exit $rc)"
grep -q 'FAILED: WRONG DATA READ BACK' "$dir/err"; ok $? "and says so loudly"
tap_end
