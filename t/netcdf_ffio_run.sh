#!/bin/sh
# t/netcdf_ffio_run.sh -- ffio-run --netcdf: with no spec of its own, a
# netCDF writer's file and every file of an NCO operator (its inputs and
# the temporary file it writes its output to before renaming it) go
# through ffio, and the outputs are byte-identical to the raw runs; a spec
# the user set wins.
. "${top_srcdir:-.}/t/netcdf_lib.sh"
run=$bld/bin/ffio-run
export FFIO_LIB

echo "1..8"
env -u LD_PRELOAD -u FF_IO_OPTS "$bld/t/netcdf_write_plain" "$dir/raw.nc" 64bit 2>"$dir/err"
ok $? "raw netCDF file written" "$dir/err"
env -u FF_IO_OPTS FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$dir/w.log" \
	"$run" --netcdf "$bld/t/netcdf_write_plain" "$dir/w.nc" 64bit 2>"$dir/err"
ok $? "ffio-run --netcdf runs the writer" "$dir/err"
grep -qx "ffio: open $dir/w.nc: entry 1 (\*.nc)" "$dir/w.log" && cmp -s "$dir/raw.nc" "$dir/w.nc"
ok $? "the writer's file went through entry *.nc and is byte-identical to raw" "$dir/w.log"

if command -v ncrcat >/dev/null 2>&1; then
	cp "$dir/raw.nc" "$dir/in1.nc"
	env -u LD_PRELOAD -u FF_IO_OPTS ncrcat -O -h "$dir/raw.nc" "$dir/in1.nc" "$dir/cat.raw.nc" 2>"$dir/err"
	ok $? "raw ncrcat" "$dir/err"
	# (a sanitizer build preloads its runtime too: NCO's libraries call
	# stat from their constructors, before it would be initialised)
	env -u FF_IO_OPTS ${FFIO_SAN_PRELOAD:+LD_PRELOAD=$FFIO_SAN_PRELOAD} FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$dir/n.log" \
		"$run" --netcdf ncrcat -O -h "$dir/raw.nc" "$dir/in1.nc" "$dir/cat.nc" 2>"$dir/err" &&
		cmp "$dir/cat.raw.nc" "$dir/cat.nc" >>"$dir/err" 2>&1
	ok $? "ffio-run --netcdf ncrcat: output byte-identical to raw" "$dir/err"
	grep -q "^ffio: open $dir/in1.nc: entry 1 (\*.nc)\$" "$dir/n.log"
	ok $? "ncrcat's inputs went through entry *.nc" "$dir/n.log"
	grep -q "^ffio: open $dir/cat.nc.pid[0-9]*.ncrcat.tmp: entry 2 (\*.nc.pid\*.tmp)\$" "$dir/n.log"
	ok $? "ncrcat's temporary output went through entry *.nc.pid*.tmp" "$dir/n.log"
else
	for d in "raw ncrcat" "ncrcat byte-identical" "ncrcat inputs" "ncrcat temporary output"; do
		t=$((t + 1)); echo "ok $t # SKIP ncrcat (NCO) not installed"
	done
fi

FF_IO_OPTS='*.nc(event.summary, sys)' FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$dir/u.log" \
	"$run" --netcdf "$bld/t/netcdf_write_plain" "$dir/u.nc" 64bit 2>"$dir/err" &&
	grep -qx "ffio: open $dir/u.nc: entry 1 (\*.nc)" "$dir/u.log" &&
	grep -q "event\[0\] of \*.nc (above sys) summary: $dir/u.nc" "$dir/u.log" && cmp -s "$dir/raw.nc" "$dir/u.nc"
ok $? "--netcdf keeps the user's FF_IO_OPTS" "$dir/u.log"
exit $fail
