# t/mpi_lib.sh -- sourced by the MPI tests: the MPIs they run under.
#   mpi_flavours NAME [posix]
#                       sets $flavours and $nflavours: for each MPI built
#                       (configure's MPIEXEC, MPIRUN_OPENMPI), the flavours
#                       whose program t/NAME (t/NAME_openmpi) exists:
#                       mpich; openmpi-ompio and openmpi-romio (Open MPI's
#                       two I/O components: OMPIO, its default, and ROMIO
#                       3.2.1's ADIO), or with posix (the ranks write with
#                       POSIX calls: the component plays no part) openmpi
#   mpi_require NAME [WHAT]
#                       mpi_flavours NAME; with none of them (or no
#                       FFIO_LIB) the test skips: WHAT (MPI) not configured
#   mpi_use FLAVOUR     sets $mpirun (the launcher, to which -n N and the
#                       program follow), $mpi_suffix (of the programs
#                       built for that MPI) and $mpi_label (for the test
#                       names)
#   mpi_libs DIR        links FFIO_LIB and the build tree's MPI glue into
#                       DIR, as installed (ffio-run finds the glue beside
#                       FFIO_LIB); prints DIR's libffio.so
# Open MPI refuses root without --allow-run-as-root and more ranks than
# cores without --oversubscribe; its environment reaches the ranks as
# MPICH's does.

mpi_flavours() {
	flavours=
	[ -n "$MPIEXEC" ] && [ -x "${top_builddir:-.}/t/$1" ] && flavours=mpich
	if [ -n "$MPIRUN_OPENMPI" ] && [ -x "${top_builddir:-.}/t/$1_openmpi" ]; then
		if [ "${2:-}" = posix ]; then
			flavours="$flavours openmpi"
		else
			flavours="$flavours openmpi-ompio openmpi-romio"
		fi
	fi
	flavours=${flavours# }
	nflavours=$(echo $flavours | wc -w)
}

mpi_require() {
	mpi_flavours "$1"
	if [ -z "$flavours" ] || [ -z "$FFIO_LIB" ]; then
		echo "1..0 # SKIP ${2:-MPI} not configured"
		exit 0
	fi
}

mpi_use() {
	ompi="$MPIRUN_OPENMPI --allow-run-as-root --oversubscribe"
	case $1 in
	mpich)
		mpirun=$MPIEXEC mpi_suffix= mpi_label=MPICH ;;
	openmpi)
		mpirun=$ompi mpi_suffix=_openmpi mpi_label="Open MPI" ;;
	openmpi-ompio)
		mpirun="$ompi --mca io ompio" mpi_suffix=_openmpi mpi_label="Open MPI, OMPIO" ;;
	openmpi-romio)
		mpirun="$ompi --mca io romio321" mpi_suffix=_openmpi mpi_label="Open MPI, ROMIO" ;;
	*)
		echo "mpi_lib.sh: unknown flavour $1" >&2
		return 1 ;;
	esac
}

mpi_libs() {
	mkdir -p "$1" || return 1
	for l in "$FFIO_LIB" "${top_builddir:-.}"/adio_glue/.libs/libffio_mpi.so \
		"${top_builddir:-.}"/adio_glue/.libs/libffio_mpi_openmpi.so; do
		[ -f "$l" ] && ln -sf "$(cd "$(dirname "$l")" && pwd)/$(basename "$l")" "$1/"
	done
	echo "$1/libffio.so"
}
