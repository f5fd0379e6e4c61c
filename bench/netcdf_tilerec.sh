#!/bin/sh
# bench/netcdf_tilerec.sh -- the cache issue's serial netCDF program
# (bench/netcdf_tilerec: 3-D floats tile by tile, record variables record
# by record, tiles read back), raw and through ffio (preloaded), REPS
# times each, medians and ratio; the two outputs compared with cmp.  Each
# run writes a new file (the last run's is removed before it starts), so
# that neither side pays for truncating 15 MB inside its timing.
# A third row is the ceiling (bench/bound_io.c, when built): the same
# program with its file in memory touched beforehand, handed to the kernel
# once at close, and read back from the page cache mapped; no cache could
# do better here.  A fourth is that ceiling with its memory touched while
# the program runs (FFIO_BOUND_TOUCH=0), as a cache in a new process must.
# Their outputs are compared with the raw one too.
#   netcdf_tilerec.sh BUILDDIR [REPS [ARGS of netcdf_tilerec...]]
set -e
bld=$1; reps=${2:-5}; shift 2 2>/dev/null || shift $#
lib=$bld/.libs
spec=${FFIO_NC_SPEC:-cache:1m:64:4}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-tilerec.XXXXXX")
trap 'rm -rf "$dir"' EXIT
bound=$bld/bench/.libs/ffio_bound.so
[ -f "$bound" ] || bound=
# the ceiling's memory: the file's size, rounded up (LON LAT LEV, NV NREC RECLEN)
mb=$(( (${1:-240} * ${2:-240} * ${3:-60} + ${6:-8} * ${7:-400} * ${8:-64}) * 4 / 1048576 + 2 ))
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$reps"); do
	rm -f "$dir/raw.nc" "$dir/ffio.nc" "$dir/bound.nc" "$dir/fresh.nc"
	"$bld/bench/netcdf_tilerec" "$dir/raw.nc" "$@" >>"$dir/raw.t"
	LD_PRELOAD="$lib/libffio.so $lib/libffio_netcdf.so" FF_IO_OPTS="*.nc($spec)" \
		"$bld/bench/netcdf_tilerec" "$dir/ffio.nc" "$@" >>"$dir/ffio.t"
	[ -z "$bound" ] || LD_PRELOAD="$bound" FFIO_BOUND_SUFFIX=bound.nc FFIO_BOUND_MB=$mb \
		"$bld/bench/netcdf_tilerec" "$dir/bound.nc" "$@" >>"$dir/bound.t"
	[ -z "$bound" ] || LD_PRELOAD="$bound" FFIO_BOUND_SUFFIX=fresh.nc FFIO_BOUND_MB=$mb FFIO_BOUND_TOUCH=0 \
		"$bld/bench/netcdf_tilerec" "$dir/fresh.nc" "$@" >>"$dir/fresh.t"
done
wr=$(awk '{print $2}' "$dir/raw.t" | med); wf=$(awk '{print $2}' "$dir/ffio.t" | med)
rr=$(awk '{print $4}' "$dir/raw.t" | med); rf=$(awk '{print $4}' "$dir/ffio.t" | med)
echo "# netCDF tile + record program (netcdf_tilerec $*), median of $reps; ffio spec *.nc($spec)"
printf '%-24s %10s %10s\n' case write read
printf '%-24s %10s %10s\n' raw "$wr" "$rr"
printf '%-24s %10s %10s\n' "over ffio" "$wf" "$rf"
if [ -n "$bound" ]; then
	wb=$(awk '{print $2}' "$dir/bound.t" | med); rb=$(awk '{print $4}' "$dir/bound.t" | med)
	printf '%-24s %10s %10s\n' "ceiling (bound_io)" "$wb" "$rb"
	wn=$(awk '{print $2}' "$dir/fresh.t" | med); rn=$(awk '{print $4}' "$dir/fresh.t" | med)
	printf '%-24s %10s %10s\n' "ceiling, memory new" "$wn" "$rn"
fi
echo "ratio raw / ffio: write $(echo "scale=2; $wr / $wf" | bc) read $(echo "scale=2; $rr / $rf" | bc)"
[ -z "$bound" ] ||
	echo "ratio raw / ceiling: write $(echo "scale=2; $wr / $wb" | bc) read $(echo "scale=2; $rr / $rb" | bc)"
[ -z "$bound" ] ||
	echo "ratio raw / ceiling, memory new: write $(echo "scale=2; $wr / $wn" | bc) read $(echo "scale=2; $rr / $rn" | bc)"
if [ -n "$bound" ] && { ! cmp -s "$dir/raw.nc" "$dir/bound.nc" || ! cmp -s "$dir/raw.nc" "$dir/fresh.nc"; }; then
	echo "the ceiling's output differs from the raw one: its figures mean nothing"; exit 1
fi
if cmp -s "$dir/raw.nc" "$dir/ffio.nc" && ncdump -h "$dir/ffio.nc" >/dev/null; then
	echo "output byte-identical and readable by ncdump: yes"
else
	echo "output byte-identical and readable by ncdump: NO"; exit 1
fi
