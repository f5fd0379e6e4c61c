#!/bin/sh
# t/bench_dfs_look.sh -- make bench-dfs's second look (bench/run-bench-dfs):
# a row below 0.95x of raw with no reason known is measured again, with its
# family on its side, 3 x REPS runs by the script run again (--look), and
# the table is judged on that look.  No volume and no timing: the strided
# family runs on a local directory given as the mount (--mount, one side),
# and the table check is a stand-in that says which row is below, so that
# what is checked is the plumbing: which family and side are measured
# again, how many runs the cells are then of, the lines under the table,
# and the exit status when the row passes or stays below.
: "${top_srcdir:=.}" "${top_builddir:=.}"
if [ ! -x "$top_builddir/bench/strided" ] || [ ! -x "$top_builddir/bench/dfs_probe" ] ||
	! command -v bash >/dev/null; then
	echo "1..0 # SKIP bench/strided, bench/dfs_probe or bash not there"
	exit 0
fi
. "$top_srcdir/t/tap.sh"
tap_begin bench_dfs_look
echo "1..9"

# a source tree whose table check is the stand-in: in the strided write
# table of the "volume", the exact-extents row is below 0.95x while its
# medians are of fewer than 15 runs (STANDIN=once), or always
# (STANDIN=always); every other table passes
mkdir -p "$dir/src/bench" "$dir/mnt"
cp "$top_srcdir/bench/run-bench-dfs" "$dir/src/bench/" || exit 1
: >"$dir/src/bench/known_slower"
cat >"$dir/src/bench/table-check" <<'EOF'
#!/bin/sh
id=- list=/dev/null
while getopts k:n:l:T:L: o; do
	case $o in T) id=$OPTARG ;; L) list=$OPTARG ;; *) ;; esac
done
shift $((OPTIND - 1))
runs=$(awk -F'\t' 'NR == 1 { print $4 }' "$1")
if [ "$id" = dfs-strided-write-vol ] && { [ "$STANDIN" = always ] || [ "$runs" -lt 15 ]; }; then
	echo "cache:1m:16:2 (exact extents)" >>"$list"
	echo "check: (stand-in) 1 below: cache:1m:16:2 (exact extents) 0.50x [NO REASON KNOWN]"
	exit 1
fi
echo "check: (stand-in) medians of $runs runs: none"
exit 0
EOF
chmod +x "$dir/src/bench/table-check"

bench() { # STANDIN value, output directory
	STANDIN=$1 FFIO_LIB=$top_builddir/.libs/libffio.so bash "$dir/src/bench/run-bench-dfs" \
		--builddir "$top_builddir" --srcdir "$dir/src" --out "$dir/$2" --local "$dir/local" \
		--mount "$dir/mnt" --sides vol --only strided --reps 5 --delay delay:1us:10g \
		>"$dir/$2.out" 2>&1
}

bench once res1
rc=$?
test $rc = 0; ok $? "a row below in the first look and not in the second: exit 0 (got $rc)"
[ $rc = 0 ] || tail -n 20 "$dir/res1.out" | sed 's/^/# /'
grep -q '^run-bench-dfs: ---- a second look at strided on the vol side (jobs: 1 2 3), 15 runs round robin: strided: cache:1m:16:2 (exact extents)$' "$dir/res1.out"
ok $? "the second look names the family, the side, the runs and the row"
test "$(grep -c '^run-bench-dfs: ---- a second look' "$dir/res1.out")" = 1
ok $? "one second look for the family on that side, not one per table"
grep -q '^  GlusterFS volume, first look: check: (stand-in) 1 below: cache:1m:16:2 (exact extents) 0.50x \[NO REASON KNOWN\]$' "$dir/res1/dfs.txt" &&
	grep -q '^  GlusterFS volume, measured again (a second look, 15 runs round robin; the cells above are from it): check: (stand-in) medians of 15 runs: none$' "$dir/res1/dfs.txt"
ok $? "under the table, the first look's check line and the second look's"
test "$(grep -c ', measured again (a second look, 15 runs' "$dir/res1/dfs.txt")" = 2
ok $? "both tables of the family (writes and reads) are the second look's"
# every strided row of the volume side in the medians' CSV is of 15 runs now
bad=$(awk -F, '$1 == "strided" && $4 == "vol" && $(NF - 4) != 15' "$dir/res1/dfs.csv" | wc -l)
rows=$(awk -F, '$1 == "strided" && $4 == "vol"' "$dir/res1/dfs.csv" | wc -l)
test "$rows" = 12 && test "$bad" = 0
ok $? "the CSV's 12 rows (6 per table) are each of 15 runs ($bad are not)"
test -s "$dir/res1/dfs-first-look.txt" &&
	test "$(grep -c '^  GlusterFS volume: check: (stand-in) medians of 15 runs: none$' "$dir/res1/look-strided-vol/dfs.txt")" = 2
ok $? "the first look's tables and the second look's own are kept"

bench always res2
rc=$?
test $rc = 1; ok $? "a row still below in the second look: exit 1 (got $rc)"
grep -q 'FAILED: ffio rows below 0.95x of raw with no reason in bench/known_slower (see the check under each table): dfs-strided-write-vol$' "$dir/res2.out"
ok $? "and the failure names the table"
tap_end
