#!/bin/sh
# bench/netcdf_seed.sh -- runs bench/netcdf_seed (the second seed's
# Method 1 / Method 2 / tile reads) with libffio preloaded on every rank
# and FF_IO_OPTS giving only *.ffio.nc to ffio, so raw and ffio cases run
# in the same job.  When bench/bound_io.c was built it is preloaded ahead
# of libffio for *.bound.nc: the ceiling rows (bench/README.md).
#   netcdf_seed.sh BUILDDIR [LON LAT LEV PX PY REPS]   (default 240 240 60 3 2 3;
#   the seed's full size: 600 600 150 5 3 3, 16 processes)
set -e
bld=$1; shift
lon=${1:-240}; lat=${2:-240}; lev=${3:-60}; px=${4:-3}; py=${5:-2}; reps=${6:-3}
lib=$bld/.libs
spec=${FFIO_NC_SPEC:-cache:1m:64:4}
mpiexec=${MPIEXEC:-mpiexec}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-seed.XXXXXX")
trap 'rm -rf "$dir"' EXIT
bound=$bld/bench/.libs/ffio_bound.so
if [ -f "$bound" ]; then
	pre="$bound $lib/libffio.so $lib/libffio_netcdf.so"; suffix=.bound.nc
else
	pre="$lib/libffio.so $lib/libffio_netcdf.so"; suffix=
fi
$mpiexec -n $((px * py + 1)) -env LD_PRELOAD "$pre" \
	-env FF_IO_OPTS "*.ffio.nc($spec)" \
	-env FFIO_BOUND_SUFFIX "$suffix" -env FFIO_BOUND_MB $((lon * lat * lev * 4 / 1048576 + 2)) \
	"$bld/bench/netcdf_seed" "$dir" "$lon" "$lat" "$lev" "$px" "$py" "$reps"
echo "# ffio spec *.ffio.nc($spec); the machine's cores are shared: figures are indicative"
ncdump -h "$dir/seed-m1.ffio.nc" >/dev/null && echo "ncdump reads the ffio output: yes"
