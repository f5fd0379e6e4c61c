#!/bin/sh
# t/bench_tables.sh -- the checks under the benchmark tables
# (bench/table-check), fed synthetic rows, no timing: a time column that
# holds request counts (the strided reads table of make bench-dfs once
# showed 8192.0000 "seconds"), or a time that is not a number, negative,
# zero or absurdly large, is refused; an ffio row below 0.95x of its raw
# row fails the check unless bench/known_slower's format gives a reason;
# medians of fewer than 5 runs are not judged.  Last, bench/strided -m
# gives the RESULT lines the harnesses read instead of its columns.  Then
# bench/nc_check.sh, which puts the check line under the netCDF tables.
: "${top_srcdir:=.}" "${top_builddir:=.}"
check=$top_srcdir/bench/table-check
. "$top_srcdir/t/tap.sh"
tap_begin bench_tables
T=$(printf '\t')
rows() { # lines of "ROW|RAW|MEDIAN|RUNS|COUNTS..." -> the tab-separated file
	for l in "$@"; do echo "$l"; done | tr '|' "$T" >"$dir/in"
}
run() { # table-check arguments: sets rc, out (stdout), err (stderr)
	"$check" -k "$dir/known" "$@" "$dir/in" >"$dir/out" 2>"$dir/err"
	rc=$?
	out=$(cat "$dir/out") err=$(head -n 1 "$dir/err")
}
: >"$dir/known"
echo "1..31"

# the strided reads table as it was: the read time cells held the counts
rows "raw|-|8192.0000|5|8192|8192" "cache:1m:16:2|raw|4096.0000|5|4096|5" "ceiling|-|0.0028|5|256|128"
run -T dfs-strided-read-vol
test $rc = 2; ok $? "a time cell that equals the row's request count is refused (exit $rc)"
case $err in *"table dfs-strided-read-vol, row \"raw\""*"8192.0000"*"a count, not a time"*) r=0 ;; *) r=1 ;; esac
ok $r "the message names the table, the row and the value: $err"
test -z "$out"; ok $? "and no check line is printed for it"
rows "raw|-|0.6|5|4096" "cache|raw|5|5|5"
run -T t
test $rc = 2; ok $? "a small count (5) in a time cell is refused too, though 5 s would be plausible"

rows "raw|-|1.2 s|5"; run -T t
test $rc = 2 && grep -q 'not a number' "$dir/err"; ok $? "a time cell that is not a number is refused"
rows "raw|-|1.0|5" "cache|raw|-0.5|5"; run -T t
test $rc = 2 && grep -q '"-0.5"' "$dir/err"; ok $? "a negative time is refused"
rows "raw|-|0|5"; run -T t
test $rc = 2 && grep -q 'holds 0' "$dir/err"; ok $? "a time of 0 is refused (no ratio can be made of it)"
rows "raw|-|1.0|5" "cache|raw|86400|5"; run -T t
test $rc = 2 && grep -q 'not a plausible time' "$dir/err"; ok $? "an absurdly large time is refused"
rows "raw|-|4000|5" "cache|raw|3000|5"; run -T t -l 5000
test $rc = 0; ok $? "the limit can be raised (-l)"
rows "raw|-|1.0|5" "cache|nosuch|0.5|5"; run -T t
test $rc = 2 && grep -q 'raw row "nosuch" is not in the table' "$dir/err"; ok $? "a row compared with a missing raw row is refused"

# rows below 0.95x of raw
rows "raw|-|1.0|5|4096" "cache|raw|0.5|5|32" "sieve|raw|0.96|5|32" "ceiling|-|2.0|5|8"
run -T progio-p1-4k-local
test $rc = 0 && echo "$out" | grep -q '^check: .*medians of 5 runs.*: none$'; ok $? "no row below 0.95x: exit 0, the line says none ($out)"
rows "raw|-|1.0|5" "cache|raw|0.5|5" "cache, uring|raw|1.1|5" "ceiling|-|3.0|5"
run -T progio-p1-4k-local
test $rc = 1; ok $? "a row below 0.95x of raw fails the check (exit $rc)"
case $out in *"1 below: cache, uring 0.91x (raw 1.0000 s, ffio 1.1000 s) [NO REASON KNOWN]"*) r=0 ;; *) r=1 ;; esac
ok $r "the line lists it with its ratio, both medians and no reason: $out"
case $out in *ceiling*) r=1 ;; *) r=0 ;; esac
ok $r "a baseline row (raw, ceiling) is never listed, however slow"
rows "raw|-|1.0|5" "cache|raw|1.2|5" "cache, uring|raw|1.1|5" "sieve|raw|0.9|5" "ceiling|-|3.0|5"
echo "earlier line" >"$dir/list"
run -T progio-p1-4k-local -L "$dir/list"
test $rc = 1 && test "$(cat "$dir/list")" = "$(printf 'earlier line\ncache\ncache, uring')"
ok $? "-L appends the name of each row below with no reason, one a line: $(tr '\n' '/' <"$dir/list")"
printf '%s\n' "progio-p1-* | cache | measured: the reason" >"$dir/known"
: >"$dir/list"
run -T progio-p1-4k-local -L "$dir/list"
test $rc = 1 && test "$(cat "$dir/list")" = "cache, uring"
ok $? "a row with a reason known is not listed: $(tr '\n' '/' <"$dir/list")"
: >"$dir/known"
rows "raw|-|1.0|5" "cache|raw|1.0526|5"
run -T t
test $rc = 0; ok $? "0.95x itself passes"

# a known reason
printf '%s\n' "# comment" "progio-p1-*-local | cache, uring | measured: the reason" >"$dir/known"
rows "raw|-|1.0|5" "cache|raw|0.5|5" "cache, uring|raw|1.1|5"
run -T progio-p1-4k-local
test $rc = 0; ok $? "a row listed in the known file with a reason does not fail (exit $rc)"
case $out in *"cache, uring 0.91x (raw 1.0000 s, ffio 1.1000 s) [known: measured: the reason]"*) r=0 ;; *) r=1 ;; esac
ok $r "and its reason is printed beside it: $out"
run -T progio-p2-4k-local
test $rc = 1; ok $? "the reason applies only to the tables its id matches"
echo "progio-p1-4k-local | cache, uring" >"$dir/known"
run -T progio-p1-4k-local
test $rc = 2 && grep -q 'is not TABLE_ID | ROW | REASON' "$dir/err"; ok $? "a known line without a reason is refused"
: >"$dir/known"

# too few runs
rows "raw|-|1.0|3" "cache|raw|1.5|3"
run -T t
test $rc = 0 && echo "$out" | grep -q 'NOT JUDGED (medians of fewer than 5 runs)'; ok $? "medians of fewer than 5 runs are not judged, and the line says so"

# bench/strided -m: the values by name, as the harnesses read them
s=$top_builddir/bench/strided
if [ -x "$s" ]; then
	"$s" -m -k 1 -n 64 -f "$dir/strided.dat" "cache:64k:4:1, sys" >"$dir/s" 2>&1
	grep '^RESULT ' "$dir/s" | sed 's/.*write_s=\([^ ]*\) write_req=\([^ ]*\) read_s=\([^ ]*\) read_req=\([^ ]*\) runs=\([^ ]*\) case=\(.*\)/\6|-|\3|\5|\4|\2/' |
		tr '|' "$T" >"$dir/in"
	test "$(wc -l <"$dir/in")" = 3 && grep -q "^cache:64k:4:1, sys$T" "$dir/in"
	ok $? "strided -m prints a RESULT line per case, the spec (with its comma and space) last"
	"$check" -k "$dir/known" "$dir/in" >/dev/null 2>"$dir/err"
	ok $? "its read times pass the plausibility check: $(cat "$dir/err")"
else
	ok 0 "# SKIP bench/strided not built"
	ok 0 "# SKIP bench/strided not built"
fi

# the netCDF benchmarks' checks (bench/nc_check.sh): the program's own rows
# (bench/netcdf_seed.c's check-row and check lines) replaced by the check
# line under each table; a failed or refused table does not stop the next
filt() { # known-file output-file: the filtered output in $dir/fout, nc_status in $dir/fst
	(
		nc_dir=$top_srcdir/bench
		. "$top_srcdir/bench/nc_check.sh"
		NC_CHECK_KNOWN=$1 nc_filter "$2" >"$dir/fout" 2>&1
		echo "$nc_status" >"$dir/fst"
	)
	fst=$(cat "$dir/fst")
}
{
	echo "# netCDF seed benchmark [netcdf-seed-x]: ..."
	echo "Method 1 write (master, serial netCDF), raw   0.0600"
	echo "Method 1 write, over ffio                     0.0300"
	echo "files byte-identical: yes"
	printf 'check-row\t%s\t-\t0.060000\t5\n' "Method 1 write (master, serial netCDF), raw"
	printf 'check-row\t%s\t%s\t0.030000\t5\n' "Method 1 write, over ffio" "Method 1 write (master, serial netCDF), raw"
	printf 'check-row\t%s\t-\t0.020000\t5\n' "Method 1 write, ceiling (bound_io)"
	printf 'check-row\t%s\t-\t0.500000\t5\n' "Method 2 write (every rank, MPI-IO), raw"
	printf 'check-row\t%s\t%s\t0.600000\t5\n' "Method 2 write, over ffio" "Method 2 write (every rank, MPI-IO), raw"
	printf 'check\tnetcdf-seed-x\ttimes\n'
	echo "# PnetCDF 1.0 [netcdf-pnetcdf] ..."
	printf 'check-row\t%s\t-\t0.100000\t5\n' "PnetCDF put_vara_all (tile per rank), raw"
	printf 'check-row\t%s\t%s\t0.090000\t5\n' "PnetCDF put_vara_all (tile per rank), over ffio" "PnetCDF put_vara_all (tile per rank), raw"
	printf 'check\tnetcdf-pnetcdf\ttimes\n'
	echo "last line"
} >"$dir/prog"
: >"$dir/known"
filt "$dir/known" "$dir/prog"
test "$fst" = 1; ok $? "nc_filter: a row below 0.95x with no reason known sets the status to 1"
test "$(sed -n 5p "$dir/fout")" = "times [netcdf-seed-x]: check: ffio rows below 0.95x of raw (raw time / ffio time; medians of 5 runs): 1 below: Method 2 write, over ffio 0.83x (raw 0.5000 s, ffio 0.6000 s) [NO REASON KNOWN]"
ok $? "the check line takes the place of the rows, under its table, with its id: $(sed -n 5p "$dir/fout")"
test "$(sed -n 7p "$dir/fout")" = "times [netcdf-pnetcdf]: check: ffio rows below 0.95x of raw (raw time / ffio time; medians of 5 runs): none" &&
	test "$(sed -n 8p "$dir/fout")" = "last line" && test "$(wc -l <"$dir/fout")" = 8 && ! grep -q '^check' "$dir/fout"
ok $? "the next table is checked on its own rows only, after the failed one, and the rest is printed"
echo "netcdf-seed-* | Method 2 write, over ffio | measured: the reason" >"$dir/known"
filt "$dir/known" "$dir/prog"
test "$fst" = 0 && grep -q 'over ffio 0.83x .*\[known: measured: the reason\]' "$dir/fout"
ok $? "with a reason in the known file (table-check -k) the status is 0"
sed 's/^\(check-row\tMethod 2 write, over ffio\t[^\t]*\t\)0.600000/\10.000000/' "$dir/prog" >"$dir/prog0"
: >"$dir/known"
filt "$dir/known" "$dir/prog0"
test "$fst" = 1 && grep -q '^times \[netcdf-seed-x\]: table-check: REFUSED: table netcdf-seed-x, row "Method 2 write, over ffio"' "$dir/fout" &&
	grep -q '^times \[netcdf-pnetcdf\]: check: .*: none$' "$dir/fout"
ok $? "a refused table (a time of 0) sets the status to 1, its message in place of the check line, and the next table is still checked"
sed '/^check\tnetcdf-pnetcdf/d' "$dir/prog" >"$dir/prog1"
echo "netcdf-seed-* | Method 2 write, over ffio | measured: the reason" >"$dir/known"
filt "$dir/known" "$dir/prog1"
test "$fst" = 1 && grep -q 'no "check" line after them' "$dir/fout"
ok $? "rows with no check line after them (the program stopped) set the status to 1"
sed 's/\t5$/\t3/' "$dir/prog" >"$dir/prog3"
: >"$dir/known"
filt "$dir/known" "$dir/prog3"
test "$fst" = 0 && grep -q 'netcdf-seed-x.*2 row(s) NOT JUDGED' "$dir/fout"
ok $? "medians of 3 runs (bench-netcdf-full) are not judged and do not fail"
tap_end
