#!/bin/sh
# bench/netcdf_seed.sh -- runs bench/netcdf_seed (the second seed's
# Method 1 / Method 2 / tile reads) with libffio and MPICH's glue
# preloaded on every rank (as ffio-run runs an MPI program) and FF_IO_OPTS giving only *.ffio.nc to ffio, so raw and ffio cases run
# in the same job.  When bench/bound_io.c was built it is preloaded ahead
# of libffio for *.bound.nc: the ceiling rows (bench/README.md).
# When Open MPI and PnetCDF were found, bench/netcdf_seed_openmpi runs next:
# the same cases under Open MPI, and the seed's Method 2 through PnetCDF
# (bench/netcdf_seed_pnetcdf.c), with the glue of Open MPI preloaded too;
# then the PnetCDF file's data is compared with Method 1's by ncmpidump
# against ncdump (where pnetcdf-bin is installed).
# Every case runs REPS times (default 6), raw and ffio interleaved in each
# round, and a pair below 0.95x of raw up to 8 REPS times more (the looks
# again, bench/netcdf_seed.c).  The tables' ids: [netcdf-seed-mpich],
# [netcdf-seed-openmpi] and [netcdf-pnetcdf]; under each, bench/table-check's
# check line (each over-ffio row against the raw row of its group), made
# from the rows the program prints (bench/nc_check.sh, nc_filter).  The
# program's output is printed when it ends.  The script exits 1 when a
# check fails (a row below 0.95x of raw with no reason in
# bench/known_slower, or a refused table), after printing every table.
#   netcdf_seed.sh BUILDDIR [LON LAT LEV PX PY REPS]   (default 240 240 60 3 2 6:
#   an even number, so that raw and ffio each run first in half of the
#   rounds (bench/netcdf_seed.c); with 5, ffio ran second in 3 of them,
#   and the second of two runs in a row is slower under Open MPI;
#   the seed's full size: 600 600 150 5 3 3, 16 processes)
# Environment: MPIEXEC (MPICH's launcher), MPIRUN_OPENMPI (Open MPI's),
# FFIO_NC_SPEC (the spec, cache:1m:64:4).
set -e
nc_dir=$(dirname "$0")
. "$nc_dir/nc_check.sh"
bld=$1; shift
lon=${1:-240}; lat=${2:-240}; lev=${3:-60}; px=${4:-3}; py=${5:-2}; reps=${6:-6}
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
mb=$((lon * lat * lev * 4 / 1048576 + 2))
if [ -x "$bld/bench/netcdf_seed" ]; then
	echo "# MPICH (MPICH's glue preloaded too, as ffio-run preloads it)"
	rc=0
	$mpiexec -n $((px * py + 1)) -env LD_PRELOAD "$pre $bld/adio_glue/.libs/libffio_mpi.so" \
		-env FF_IO_OPTS "*.ffio.nc($spec)" -env FF_IO_LOGFILE "$dir/summary-mpich.log" \
		-env FFIO_BOUND_SUFFIX "$suffix" -env FFIO_BOUND_MB $mb -env FFIO_SEED_ID netcdf-seed-mpich \
		"$bld/bench/netcdf_seed" "$dir" "$lon" "$lat" "$lev" "$px" "$py" "$reps" >"$dir/mpich.out" || rc=$?
	nc_filter "$dir/mpich.out"
	[ $rc = 0 ] || exit $rc
	ncdump -h "$dir/seed-m1.ffio.nc" >/dev/null && echo "ncdump reads the ffio output: yes"
fi
if [ -x "$bld/bench/netcdf_seed_openmpi" ] && [ -n "$MPIRUN_OPENMPI" ]; then
	echo
	echo "# Open MPI, with PnetCDF (the glue of Open MPI preloaded; ffio's summary of the MPI-IO files: $dir/summary.log, printed below)"
	rm -f "$dir"/*.nc
	rc=0
	$MPIRUN_OPENMPI --allow-run-as-root --oversubscribe -n $((px * py + 1)) \
		-x LD_PRELOAD="$pre $bld/adio_glue/.libs/libffio_mpi_openmpi.so" \
		-x FF_IO_OPTS="*.ffio.nc($spec)" -x FF_IO_LOGFILE="$dir/summary.log" \
		-x FFIO_BOUND_SUFFIX="$suffix" -x FFIO_BOUND_MB=$mb -x FFIO_SEED_ID=netcdf-seed-openmpi \
		"$bld/bench/netcdf_seed_openmpi" "$dir" "$lon" "$lat" "$lev" "$px" "$py" "$reps" >"$dir/openmpi.out" || rc=$?
	nc_filter "$dir/openmpi.out"
	[ $rc = 0 ] || exit $rc
	if command -v ncmpidump >/dev/null; then
		# the data section of each (the header's name and layout differ)
		ncdump -v field "$dir/seed-m1.raw.nc" | sed '1,/^data:/d' >"$dir/m1.cdl"
		ncmpidump -v field "$dir/seed-pn-put.ffio.nc" | sed '1,/^data:/d' >"$dir/pn.cdl"
		if cmp -s "$dir/m1.cdl" "$dir/pn.cdl"; then same=yes; else same=NO; fi
		echo "ncmpidump of PnetCDF's file over ffio = ncdump of Method 1's raw file (data): $same"
		[ $same = yes ]
	fi
	grep -A3 'seed-pn-.*layer 1' "$dir/summary.log" | grep -E 'layer 1|write calls|read calls' || true
fi
echo "# ffio spec *.ffio.nc($spec); the machine's cores are shared: figures are indicative"
exit $nc_status
