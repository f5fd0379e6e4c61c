#!/bin/sh
# bench/netcdf_tilerec.sh -- the cache issue's serial netCDF program
# (bench/netcdf_tilerec: 3-D floats tile by tile, record variables record
# by record, tiles read back), raw and through ffio (preloaded), REPS
# times each, medians and ratio; the two outputs compared with cmp.  Each
# run writes a new file (the last run's is removed before it starts), so
# that neither side pays for truncating 15 MB inside its timing.
# A third row is the ceiling (bench/bound_io.c, when built): the same
# program with its file in memory touched beforehand, handed to the kernel
# once at close in 512 KiB calls, and read back in 1 MiB calls into
# memory touched beforehand; no cache could do better here.  A fourth is
# that ceiling with its memory touched while the program runs
# (FFIO_BOUND_TOUCH=0), as a cache in a new process must.  Their outputs
# are compared with the raw one too.  Each row: median seconds, speedup
# over raw and that speedup as a fraction of the ceiling's (ceiling time
# / time); the last line gives ffio against the ceiling with memory new.
# The runs go round robin (run 1 of raw, ffio and the ceilings, then run
# 2, ...).  The table's id is [netcdf-tilerec]; under it, bench/table-check's
# check lines for the write and the read column (ids netcdf-tilerec-write,
# netcdf-tilerec-read; bench/nc_check.sh): over ffio against raw.  The
# script exits 1 when a check fails (a row below 0.95x of raw with no
# reason in bench/known_slower, or a refused table), after printing all.
#   netcdf_tilerec.sh BUILDDIR [REPS [ARGS of netcdf_tilerec...]]
set -e
nc_dir=$(dirname "$0")
. "$nc_dir/nc_check.sh"
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
col() { awk -v k="$1" '{ print $k }' "$dir/$2.t" | med; }
wr=$(col 2 raw) rr=$(col 4 raw) wf=$(col 2 ffio) rf=$(col 4 ffio)
wb=0 rb=0 wn=0 rn=0
if [ -n "$bound" ]; then
	wb=$(col 2 bound) rb=$(col 4 bound) wn=$(col 2 fresh) rn=$(col 4 fresh)
fi
echo "# netCDF tile + record program [netcdf-tilerec] (netcdf_tilerec $*), median of $reps; ffio spec *.nc($spec)"
echo "# speedup over raw; of ceil: the speedup / the ceiling's (ceiling time / time)"
printf '%-24s %10s %8s %8s %10s %8s %8s\n' case write speedup "of ceil" read speedup "of ceil"
row() { # label write read
	awk -v l="$1" -v w="$2" -v r="$3" -v w0="$wr" -v r0="$rr" -v wc="$wb" -v rc="$rb" 'BEGIN {
		printf "%-24s %10.4f %8.2f", l, w, w0 / w; if (wc > 0) printf " %8.2f", wc / w; else printf " %8s", "-"
		printf " %10.4f %8.2f", r, r0 / r; if (rc > 0) printf " %8.2f", rc / r; else printf " %8s", "-"
		printf "\n" }'
}
row raw "$wr" "$rr"
row "over ffio" "$wf" "$rf"
if [ -n "$bound" ]; then
	row "ceiling (bound_io)" "$wb" "$rb"
	row "ceiling, memory new" "$wn" "$rn"
	awk -v wf="$wf" -v rf="$rf" -v wn="$wn" -v rn="$rn" 'BEGIN {
		printf "over ffio against the ceiling with memory new: write %.2f, read %.2f\n", wn / wf, rn / rf }'
fi
# the checks: each column, over ffio against raw (the ceilings are baselines)
for k in 2 4; do
	{
		printf 'raw\t-\t%s\t%s\n' "$(col $k raw)" "$(wc -l <"$dir/raw.t")"
		printf 'over ffio\traw\t%s\t%s\n' "$(col $k ffio)" "$(wc -l <"$dir/ffio.t")"
		if [ -n "$bound" ]; then
			printf 'ceiling (bound_io)\t-\t%s\t%s\n' "$(col $k bound)" "$(wc -l <"$dir/bound.t")"
			printf 'ceiling, memory new\t-\t%s\t%s\n' "$(col $k fresh)" "$(wc -l <"$dir/fresh.t")"
		fi
	} >"$dir/check"
	if [ $k = 2 ]; then nc_check netcdf-tilerec-write "write times" "$dir/check"
	else nc_check netcdf-tilerec-read "read times" "$dir/check"; fi
done
if [ -n "$bound" ] && { ! cmp -s "$dir/raw.nc" "$dir/bound.nc" || ! cmp -s "$dir/raw.nc" "$dir/fresh.nc"; }; then
	echo "the ceiling's output differs from the raw one: its figures mean nothing"; exit 1
fi
if cmp -s "$dir/raw.nc" "$dir/ffio.nc" && ncdump -h "$dir/ffio.nc" >/dev/null; then
	echo "output byte-identical and readable by ncdump: yes"
else
	echo "output byte-identical and readable by ncdump: NO"; exit 1
fi
exit $nc_status
