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
#   netcdf_ncrcat.sh BUILDDIR [TASKS INPUTS NVARS NREC RECLEN REPS]
set -e
bld=$1; tasks=${2:-2}; inputs=${3:-4}; nvars=${4:-32}; nrec=${5:-200}; reclen=${6:-256}; reps=${7:-3}
lib=$bld/.libs
spec=${FFIO_NC_SPEC:-cache:1m:64:4}
sim=${SIM-delay:200us:1g}
command -v ncrcat >/dev/null || { echo "ncrcat (NCO) not installed: skipped"; exit 0; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-ncrcat.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$bld/bench/netcdf_tilerec" "$dir/in0.nc" 48 48 4 1 1 "$nvars" "$nrec" "$reclen" >/dev/null
for i in $(seq 1 $((inputs - 1))); do cp "$dir/in0.nc" "$dir/in$i.nc"; done
ins=$(for i in $(seq 0 $((inputs - 1))); do printf '%s ' "$dir/in$i.nc"; done)

# run_all NAME [STACK]: TASKS ncrcat at once, preloaded with STACK for the
# inputs and the temporary outputs (none: raw); prints the wall time
run_all() {
	for k in $(seq 1 "$tasks"); do rm -f "$dir/out.$1.$k.nc"; done
	t0=$(date +%s.%N)
	for k in $(seq 1 "$tasks"); do
		if [ -z "$2" ]; then
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
# table TITLE RAWSTACK FFIOSTACK
table() {
	for r in $(seq 1 "$reps"); do run_all raw "$2"; done | med >"$dir/raw.t"
	compare raw
	for r in $(seq 1 "$reps"); do run_all ffio "$3"; done | med >"$dir/ffio.t"
	compare ffio
	echo "# $1"
	printf '%-28s %10s\n' case seconds
	printf '%-28s %10.4f\n' "ncrcat raw${2:+ ($2)}" "$(cat "$dir/raw.t")"
	printf '%-28s %10.4f\n' "ncrcat over ffio" "$(cat "$dir/ffio.t")"
	echo "ratio raw / ffio $(echo "scale=2; $(cat "$dir/raw.t") / $(cat "$dir/ffio.t")" | bc)"
}
size=$(stat -c %s "$dir/in0.nc")
echo "# ncrcat: $tasks tasks at once, each $inputs inputs of $size bytes ($nvars record variables x $nrec records of $reclen floats), median of $reps"
table "local file system; ffio stack $spec" "" "$spec"
[ -z "$sim" ] || table "simulated parallel file system: raw is $sim alone, ffio is $spec, $sim" "$sim" "$spec, $sim"
echo "outputs byte-identical and readable by ncdump: $same"
[ "$same" = yes ]
