#!/bin/sh
# bench/netcdf_ncrcat.sh -- ncrcat (NCO, unmodified) over replicated inputs
# with many record variables, several tasks at once (as in the second
# seed), raw and through ffio (preloaded); outputs compared with cmp and
# checked with ncdump.  The spec covers the inputs and the temporary file
# NCO writes its output to (OUT.pidN.ncrcat.tmp); each run writes new
# outputs (the last run's are removed before the clock starts).
# A second table runs both sides over a simulated parallel file system
# (the delay layer, SIM, at the bottom of both stacks: every request
# costs a latency), the setting of the seed, where ncrcat ran on a
# parallel file system; SIM= (empty) skips it.
# Each table has a ceiling row (when bench/bound_io.c was built): ncrcat
# with bound_io preloaded for the inputs and the output, its memory
# touched while the program runs (FFIO_BOUND_TOUCH=0: the clock runs
# from the start of the process, as any cache's must touch its memory
# inside it), inputs read in 1 MiB calls as ncrcat first wants them
# (ncrcat opens each input three times, twice for its header), the output
# written at close in 512 KiB calls; over the simulated file system
# bound_io sits above libffio's delay stack and writes the output in one
# call.
# Rows: median seconds of REPS runs (default 5), round robin (run 1 of
# raw, ffio and the ceiling, then run 2, ...), speedup over raw, that
# speedup as a fraction of the ceiling's (ceiling time / time).  The
# tables' ids are [netcdf-ncrcat-local] and [netcdf-ncrcat-sim]; under
# each, bench/table-check's check line (bench/nc_check.sh): ncrcat over
# ffio against ncrcat raw.  The script exits 1 when a check fails (a row
# below 0.95x of raw with no reason in bench/known_slower, or a refused
# table), after printing both tables.
#   netcdf_ncrcat.sh BUILDDIR [TASKS INPUTS NVARS NREC RECLEN REPS]
set -e
nc_dir=$(dirname "$0")
. "$nc_dir/nc_check.sh"
bld=$1; tasks=${2:-2}; inputs=${3:-4}; nvars=${4:-32}; nrec=${5:-200}; reclen=${6:-256}; reps=${7:-5}
lib=$bld/.libs
spec=${FFIO_NC_SPEC:-cache:1m:64:4}
sim=${SIM-delay:200us:1g}
command -v ncrcat >/dev/null || { echo "ncrcat (NCO) not installed: skipped"; exit 0; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-ncrcat.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$bld/bench/netcdf_tilerec" "$dir/in0.nc" 48 48 4 1 1 "$nvars" "$nrec" "$reclen" >/dev/null
for i in $(seq 1 $((inputs - 1))); do cp "$dir/in0.nc" "$dir/in$i.nc"; done
ins=$(for i in $(seq 0 $((inputs - 1))); do printf '%s ' "$dir/in$i.nc"; done)

bound=$bld/bench/.libs/ffio_bound.so
[ -f "$bound" ] || bound=
# run_all NAME [STACK [CEILING]]: TASKS ncrcat at once, preloaded with
# STACK for the inputs and the temporary outputs (none: raw); with CEILING
# (local or sim) bound_io takes them, above STACK when there is one;
# prints the wall time
run_all() {
	for k in $(seq 1 "$tasks"); do rm -f "$dir/out.$1.$k.nc"; done
	t0=$(date +%s.%N)
	for k in $(seq 1 "$tasks"); do
		if [ "${3:-}" = local ]; then
			LD_PRELOAD="$bound" FFIO_BOUND_SUFFIX=.nc:.ncrcat.tmp FFIO_BOUND_MB=$bmb FFIO_BOUND_TOUCH=0 \
				ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		elif [ "${3:-}" = sim ]; then
			LD_PRELOAD="$bound $lib/libffio.so" FF_IO_OPTS="*.nc($2) *.nc.pid*.tmp($2)" \
				FFIO_BOUND_SUFFIX=.nc:.ncrcat.tmp FFIO_BOUND_MB=$bmb FFIO_BOUND_TOUCH=0 \
				FFIO_BOUND_WPIECE=0 ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		elif [ -z "$2" ]; then
			ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		else
			LD_PRELOAD="$lib/libffio.so $lib/libffio_netcdf.so" FF_IO_OPTS="*.nc($2) *.nc.pid*.tmp($2)" \
				ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		fi
	done
	wait
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
same=yes
# compare NAME: every task's output is the raw one, and ncdump reads it
compare() {
	for k in $(seq 1 "$tasks"); do
		cmp -s "$dir/out.raw.1.nc" "$dir/out.$1.$k.nc" || same=NO
		ncdump -h "$dir/out.$1.$k.nc" >/dev/null || same=NO
	done
}
# table ID TITLE RAWSTACK FFIOSTACK CEILING: the runs round robin
table() {
	id=$1; shift
	: >"$dir/raw.all"; : >"$dir/ffio.all"; : >"$dir/bound.all"
	for r in $(seq 1 "$reps"); do
		run_all raw "$2" >>"$dir/raw.all"
		compare raw
		run_all ffio "$3" >>"$dir/ffio.all"
		compare ffio
		if [ -n "$bound" ]; then
			run_all bound "$2" "$4" >>"$dir/bound.all"
			compare bound
		fi
	done
	raw=$(med <"$dir/raw.all") ff=$(med <"$dir/ffio.all") cl=$(med <"$dir/bound.all")
	echo "# [$id] $1"
	printf '%-40s %10s %8s %8s\n' case seconds speedup "of ceil"
	row() { awk -v l="$1" -v t="$2" -v r="$raw" -v c="$cl" 'BEGIN {
		printf "%-40s %10.4f %8.2f", l, t, r / t; if (c > 0) printf " %8.2f", c / t; printf "\n" }'; }
	row "ncrcat raw${2:+ ($2)}" "$raw"
	row "ncrcat over ffio" "$ff"
	[ -z "$bound" ] || row "ceiling (bound_io, memory new)" "$cl"
	{
		printf 'ncrcat raw\t-\t%s\t%s\n' "$raw" "$(wc -l <"$dir/raw.all")"
		printf 'ncrcat over ffio\tncrcat raw\t%s\t%s\n' "$ff" "$(wc -l <"$dir/ffio.all")"
		[ -z "$bound" ] || printf 'ceiling (bound_io, memory new)\t-\t%s\t%s\n' "$cl" "$(wc -l <"$dir/bound.all")"
	} >"$dir/check"
	nc_check "$id" times "$dir/check"
}
size=$(stat -c %s "$dir/in0.nc")
bmb=$((size * inputs / 1048576 + 2)) # the ceiling's memory: the output's size
echo "# ncrcat: $tasks tasks at once, each $inputs inputs of $size bytes ($nvars record variables x $nrec records of $reclen floats), median of $reps"
table netcdf-ncrcat-local "local file system; ffio stack $spec" "" "$spec" local
[ -z "$sim" ] || table netcdf-ncrcat-sim "simulated parallel file system: raw is $sim alone, ffio is $spec, $sim" "$sim" "$spec, $sim" sim
echo "outputs byte-identical and readable by ncdump${bound:+ (and the ceiling outputs)}: $same"
[ "$same" = yes ]
exit $nc_status
