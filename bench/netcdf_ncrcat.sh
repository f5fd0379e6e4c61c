#!/bin/sh
# bench/netcdf_ncrcat.sh -- ncrcat (NCO, unmodified) over replicated inputs
# with many record variables, several tasks at once (as in the second
# seed), raw and through ffio (preloaded); outputs compared with cmp and
# checked with ncdump.
#   netcdf_ncrcat.sh BUILDDIR [TASKS INPUTS NVARS NREC RECLEN REPS]
set -e
bld=$1; tasks=${2:-2}; inputs=${3:-4}; nvars=${4:-32}; nrec=${5:-200}; reclen=${6:-256}; reps=${7:-3}
lib=$bld/.libs
spec=${FFIO_NC_SPEC:-cache:1m:64:4}
command -v ncrcat >/dev/null || { echo "ncrcat (NCO) not installed: skipped"; exit 0; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-ncrcat.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$bld/bench/netcdf_tilerec" "$dir/in0.nc" 48 48 4 1 1 "$nvars" "$nrec" "$reclen" >/dev/null
for i in $(seq 1 $((inputs - 1))); do cp "$dir/in0.nc" "$dir/in$i.nc"; done
ins=$(for i in $(seq 0 $((inputs - 1))); do printf '%s ' "$dir/in$i.nc"; done)

# run_all KIND: TASKS ncrcat at once; prints the wall time
run_all() {
	t0=$(date +%s.%N)
	for k in $(seq 1 "$tasks"); do
		if [ "$1" = raw ]; then
			ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		else
			LD_PRELOAD="$lib/libffio.so $lib/libffio_netcdf.so" FF_IO_OPTS="*.nc($spec)" \
				ncrcat -O -h $ins "$dir/out.$1.$k.nc" &
		fi
	done
	wait
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$reps"); do run_all raw; done | med >"$dir/raw.t"
for r in $(seq 1 "$reps"); do run_all ffio; done | med >"$dir/ffio.t"
same=yes
for k in $(seq 1 "$tasks"); do
	cmp -s "$dir/out.raw.$k.nc" "$dir/out.ffio.$k.nc" || same=NO
	ncdump -h "$dir/out.ffio.$k.nc" >/dev/null || same=NO
done
size=$(stat -c %s "$dir/in0.nc")
echo "# ncrcat: $tasks tasks at once, each $inputs inputs of $size bytes ($nvars record variables x $nrec records), median of $reps; ffio spec *.nc($spec)"
printf '%-28s %10s\n' case seconds
printf '%-28s %10s\n' "ncrcat raw" "$(cat "$dir/raw.t")"
printf '%-28s %10s\n' "ncrcat over ffio" "$(cat "$dir/ffio.t")"
echo "ratio raw / ffio $(echo "scale=2; $(cat "$dir/raw.t") / $(cat "$dir/ffio.t")" | bc)"
echo "outputs byte-identical and readable by ncdump: $same"
[ "$same" = yes ]
