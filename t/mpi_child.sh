#!/bin/sh
# t/mpi_child.sh -- under ffio-run, an MPI program's children that have no
# MPI (system(3), popen(3); Open MPI's orted, which a singleton's MPI_Init
# starts) run as they do without ffio: LD_PRELOAD passes the MPI glue on
# to them, and it must load where MPI is not.  Before, each of them
# stopped before main ("symbol lookup error": PMPI_File_set_size,
# ompi_mpi_comm_world), and a singleton Open MPI program failed in
# MPI_Init.  For each MPI built (t/mpi_lib.sh; Open MPI with each I/O
# component, though the program does no MPI-IO): t/mpi_child by 2 ranks
# through ffio-run, the same started alone (a singleton), and each glue
# library preloaded with libffio into /bin/true with LD_BIND_NOW=1 (every
# reference resolved at load).  And the glue's own collectives at
# MPI_Finalize run on a communicator of its own (t/mpi_glue_comm), so
# that they cannot meet the application's: PnetCDF's nc_test at 4 ranks,
# whose ranks part in MPI_COMM_WORLD's collectives, aborted under ffio
# (MPI_ERR_TRUNCATE) where it hangs without.
bin="${top_builddir:-.}/t"
. "${top_srcdir:-$(dirname "$0")/..}/t/mpi_lib.sh"
mpi_require mpi_child
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-child.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
installed=$(mpi_libs "$dir/lib") || exit 1
echo "1..$((6 * nflavours))"
i=0
ok() { i=$((i + 1)); if [ "$1" = 0 ]; then echo "ok $i - $mpi_label: $2"; else echo "not ok $i - $mpi_label: $2"; fi; }
# expect N OUTPUT: 0 when each of ranks 0..N-1 printed both lines as a
# child that ran would make them
expect() {
	r=0
	while [ $r -lt "$1" ]; do
		printf '%s\n' "$2" | grep -qx "rank $r: system 1792" || return 1
		printf '%s\n' "$2" | grep -qx "rank $r: popen 'child' 0" || return 1
		r=$((r + 1))
	done
	[ "$(printf '%s\n' "$2" | grep -c '^rank ')" = $((2 * $1)) ]
}
for flavour in $flavours; do
	mpi_use $flavour
	prog=$bin/mpi_child$mpi_suffix
	glue=$dir/lib/libffio_mpi.so
	[ "$flavour" = mpich ] || glue=$dir/lib/libffio_mpi_openmpi.so
	out=$(cd "$dir" && FFIO_LIB="$installed" timeout 60 $mpirun -n 2 "${top_builddir:-.}/bin/ffio-run" \
		-o "*.dat(cache:64k:8:2)" "$prog" 2>"$dir/err")
	rc=$?
	ok $rc "2 ranks through ffio-run: exit 0 (got $rc)"
	[ $rc = 0 ] || head -n 3 "$dir/err" | cut -c1-200 | sed 's/^/# /'
	expect 2 "$out"; ok $? "each rank's system(3) and popen(3) children ran"
	! grep -q 'symbol lookup error' "$dir/err"; ok $? "no child stopped at load"
	out=$(cd "$dir" && FFIO_LIB="$installed" timeout 60 "${top_builddir:-.}/bin/ffio-run" \
		-o "*.dat(cache:64k:8:2)" "$prog" 2>"$dir/err")
	rc=$?
	expect 1 "$out"
	seen=$?
	ok "$([ $rc = 0 ] && [ $seen = 0 ] && echo 0)" "alone (a singleton) through ffio-run: MPI_Init and both children (exit $rc)"
	[ $rc = 0 ] || head -n 3 "$dir/err" | cut -c1-200 | sed 's/^/# /'
	LD_BIND_NOW=1 LD_PRELOAD="$installed $glue" /bin/true 2>"$dir/err"
	rc=$?
	ok "$([ $rc = 0 ] && [ ! -s "$dir/err" ] && echo 0)" \
		"$(basename "$glue") loads into /bin/true with every reference resolved at once (exit $rc)"
	[ -s "$dir/err" ] && head -n 3 "$dir/err" | cut -c1-200 | sed 's/^/# /'
	out=$(cd "$dir" && LD_PRELOAD="$installed" timeout 60 $mpirun -n 2 "$bin/mpi_glue_comm$mpi_suffix" 2>"$dir/err")
	printf '%s\n' "$out" | grep -qx 'glue collectives: 0 on MPI_COMM_WORLD, 3 on another communicator'
	ok $? "the glue's summary at MPI_Finalize: its 3 collectives on a communicator of its own (${out:-no output})"
done
exit 0
