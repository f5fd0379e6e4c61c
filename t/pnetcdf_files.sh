#!/bin/sh
# t/pnetcdf_files.sh -- PnetCDF programs write byte-identical files over
# ffio: t/pnetcdf_files (CDF-1, CDF-2 and CDF-5; collective, independent
# and nonblocking puts; a record variable; a redefine that moves the data;
# its own read-back checks) by 4 ranks, raw, then through ffio-run (which
# preloads the glue of the program's MPI) over four cache stacks, under
# Open MPI's OMPIO and ROMIO (t/mpi_lib.sh).  Each file must equal the raw
# run's, and the event layer must have seen it.  Skips without PnetCDF.
bin="${top_builddir:-.}/t"
. "${top_srcdir:-$(dirname "$0")/..}/t/mpi_lib.sh"
mpi_require pnetcdf_files "PnetCDF (on Open MPI)"
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-pnc.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
installed=$(mpi_libs "$dir/lib") || exit 1
stacks="cache:64k:8:2|cache:4k:4:1|cache.sieve:1m:16:2|cache:1m:16:2, uring:64"
echo "1..$((9 * nflavours))"
i=0
ok() { i=$((i + 1)); if [ "$1" = 0 ]; then echo "ok $i - $mpi_label: $2"; else echo "not ok $i - $mpi_label: $2"; fi; }
for flavour in $flavours; do
	mpi_use $flavour
	rm -rf "$dir/raw" && mkdir "$dir/raw"
	out=$(timeout 120 $mpirun -n 4 "$bin/pnetcdf_files$mpi_suffix" "$dir/raw" 2>&1)
	ok "$([ "$out" = "pnetcdf ok" ] && echo 0)" "raw: the program's own checks"
	[ "$out" = "pnetcdf ok" ] || printf '%s\n' "$out" | head -3 | sed 's/^/# /'
	old_ifs=$IFS IFS='|'
	set -- $stacks
	IFS=$old_ifs
	for spec in "$@"; do
		rm -rf "$dir/ffio" && mkdir "$dir/ffio"
		out=$(FFIO_LIB="$installed" timeout 120 $mpirun -n 4 "${top_builddir:-.}/bin/ffio-run" \
			-o "pnc_*.nc(event.summary, $spec)" -l "$dir/ffio/log.%r" \
			"$bin/pnetcdf_files$mpi_suffix" "$dir/ffio" 2>&1)
		ok "$([ "$out" = "pnetcdf ok" ] && grep -q 'pnc_cdf5.nc' "$dir/ffio/log.0" && echo 0)" \
			"$spec: the program's own checks, through ffio"
		[ "$out" = "pnetcdf ok" ] || printf '%s\n' "$out" | head -3 | sed 's/^/# /'
		diff=
		for f in cdf1 cdf2 cdf5; do
			cmp -s "$dir/raw/pnc_$f.nc" "$dir/ffio/pnc_$f.nc" || diff="$diff $f"
		done
		ok "$([ -z "$diff" ] && echo 0)" "$spec: CDF-1, CDF-2 and CDF-5 files byte-identical to raw"
		[ -z "$diff" ] || echo "# differ:$diff"
	done
done
