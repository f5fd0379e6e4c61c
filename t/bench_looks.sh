#!/bin/sh
# t/bench_looks.sh -- how bench/run-bench looks again before it judges,
# without timing: stand-ins for progio, progio-ffapi, ffio-run and the MPI
# launcher give every run a time chosen by its row.  Every row takes
# 0.100 s, but two ffio rows over the simulated file system:
#   - "MPI-IO via ffio, cached" always 0.110 s (0.91x of its raw row):
#     measured again three times (5 + 10 + 30 + 90 = 135 runs), still
#     below, and the run fails naming its table;
#   - "ffio API, cached" 0.120 s in its first 5 runs, 0.090 s after: below
#     after the first look, above after the second (15 runs).
# A row's raw row is measured as often as the row, and the other rows
# judged against that raw row too; rows never below keep their 5 runs.
. "$top_srcdir/t/tap.sh"
tap_begin bench_looks
echo "1..9"

fake=$dir/build
mkdir -p "$fake/bench" "$fake/bin" "$fake/.libs" "$dir/count" || exit 1
: >"$fake/.libs/libffio.so"
cat >"$fake/bench/progio" <<'EOF'
#!/bin/sh
# stand-in for bench/progio: a RESULT line whose time its label chooses
label=
while [ $# -gt 0 ]; do
	case $1 in -l) label=$2; shift ;; esac
	shift
done
count=$FAKE_COUNT/$(printf '%s' "$label" | cksum | cut -d' ' -f1)
k=$(($(cat "$count" 2>/dev/null || echo 0) + 1))
echo $k >"$count"
t=0.100
case $label in
*"MPI-IO via ffio, cached (simulated"*) t=0.110 ;;
*"ffio API, cached (simulated"*) if [ $k -le 5 ]; then t=0.120; else t=0.090; fi ;;
esac
echo "RESULT prog=2 io=$t write=$t read=0 wrong=0 verify=ok label=x"
EOF
cp "$fake/bench/progio" "$fake/bench/progio-ffapi"
cat >"$fake/bin/ffio-run" <<'EOF'
#!/bin/sh
# stand-in for ffio-run: drops -o SPEC
[ "$1" = -o ] && shift 2
exec "$@"
EOF
cat >"$dir/launch" <<'EOF'
#!/bin/sh
# stand-in for mpiexec: drops -n N
[ "$1" = -n ] && shift 2
exec "$@"
EOF
chmod +x "$fake/bench/progio" "$fake/bench/progio-ffapi" "$fake/bin/ffio-run" "$dir/launch"

FAKE_COUNT=$dir/count MPIEXEC=$dir/launch FFIO_LIB=$fake/.libs/libffio.so BENCH_SEED=1 \
	bash "$top_srcdir/bench/run-bench" --builddir "$fake" --srcdir "$top_srcdir" --out "$dir/res" \
	--dir "$dir/work" --procs 2 --reps 5 --reqs 4k --progs 2 --no-others >"$dir/out" 2>"$dir/err"
rc=$?
test $rc = 1; ok $? "a row still below after every look fails the run (exit $rc)"
[ $rc = 1 ] || sed 's/^/# /' "$dir/err" | tail -n 20

runs() { # version fs case -> how many runs the runs CSV has of that row
	awk -F, -v v="$1" -v f="$2" -v c="$3" '$1 == 2 && $2 == v && $3 == f && $4 == c' \
		"$dir/res/progio-runs.csv" | wc -l | tr -d ' '
}
r=$(runs mpiio-ffio sim cached)
test "$r" = 135; ok $? "the row always below: 135 runs (got $r)"
r=$(runs mpiio-ffio sim raw)
test "$r" = 135; ok $? "its raw row: as many (got $r)"
r=$(runs mpiio-ffio sim cached+uring)
test "$r" = 135; ok $? "the other row judged against that raw row: as many (got $r)"
r=$(runs ffapi sim cached)
test "$r" = 15; ok $? "the row below only at first: 15 runs, no third look (got $r)"
r=$(runs posix-ffio sim cached)
test "$r" = 5; ok $? "a row never below: 5 runs (got $r)"
grep -q '^  MPI-IO via ffio .*0\.1100 \[0\.1100-0\.1100\] [0-9.]*x\*135' "$dir/out"
ok $? "the table marks the cell measured again (*135)"
sed -n '/\[progio-p2-4k-sim\]/,/^$/p' "$dir/out" | grep -q 'MPI-IO via ffio, cached'
ok $? "the simulated table's check line names the row below"
grep -A3 'tables whose check failed' "$dir/out" | grep -q 'progio-p2-4k-sim'
ok $? "and the run's end names its table"
tap_end
