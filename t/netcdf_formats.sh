#!/bin/sh
# t/netcdf_formats.sh -- netCDF files written through ffio (classic, 64-bit
# offset, CDF-5, netCDF-4) are byte-identical to the same file written raw
# and read back right by ncdump: relinked (t/netcdf_write, linked with
# libffio_netcdf and libffio ahead of -lnetcdf) and preloaded
# (t/netcdf_write_plain under LD_PRELOAD), over several cache shapes.
. "${top_srcdir:-.}/t/netcdf_lib.sh"

formats="classic 64bit cdf5 nc4"
stacks="cache:64k:8:2 cache.sieve:16k:4:1 event.summary,cache:1m:16:4,event.summary"
n=0
for f in $formats; do n=$((n + 1)); for s in $stacks; do n=$((n + 8)); done; done
echo "1..$n"

for f in $formats; do
	env -u LD_PRELOAD -u FF_IO_OPTS "$bld/t/netcdf_write_plain" "$dir/raw.$f.nc" "$f" 2>"$dir/err" &&
	ncdump "$dir/raw.$f.nc" | sed 1d >"$dir/raw.$f.cdl"
	ok $? "$f: raw file written and dumped"
	for s in $stacks; do
		for how in relinked preloaded; do
			out="$dir/$how.$f.nc"
			log="$dir/$how.$f.log"
			rm -f "$out" "$log"
			if [ $how = relinked ]; then
				FF_IO_OPTS="*.nc($s)" FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$log" \
					"$bld/t/netcdf_write" "$out" "$f" 2>"$dir/err"
			else
				LD_PRELOAD="$FFIO_LIB $NCGLUE_LIB" FF_IO_OPTS="*.nc($s)" FF_IO_OPEN_DIAGS=1 \
					FF_IO_LOGFILE="$log" "$bld/t/netcdf_write_plain" "$out" "$f" 2>"$dir/err"
			fi
			ok $? "$f, $how, $s: written and read back right" "$dir/err"
			grep -q "$how.$f.nc" "$log" 2>/dev/null
			ok $? "$f, $how, $s: the file went through ffio (FF_IO_OPEN_DIAGS)" "$log"
			cmp "$dir/raw.$f.nc" "$out" >"$dir/err" 2>&1
			ok $? "$f, $how, $s: byte-identical to raw" "$dir/err"
			ncdump "$out" 2>"$dir/err" | sed 1d | cmp - "$dir/raw.$f.cdl" >>"$dir/err" 2>&1
			ok $? "$f, $how, $s: ncdump reads the same data" "$dir/err"
		done
	done
done
exit $fail
