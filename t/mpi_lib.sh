# t/mpi_lib.sh -- sourced by the MPI tests: the MPIs they run under.
#   mpi_flavours NAME   sets $flavours: for each MPI built (configure's
#                       MPIEXEC, MPIRUN_OPENMPI), the flavours whose
#                       program t/NAME (t/NAME_openmpi) exists:
#                       mpich; openmpi-ompio and openmpi-romio (Open MPI's
#                       two I/O components: OMPIO, its default, and ROMIO
#                       3.2.1's ADIO)
#   mpi_use FLAVOUR     sets $mpirun (the launcher, to which -n N and the
#                       program follow), $mpi_suffix (of the programs
#                       built for that MPI) and $mpi_label (for the test
#                       names)
# Open MPI refuses root without --allow-run-as-root and more ranks than
# cores without --oversubscribe; its environment reaches the ranks as
# MPICH's does.

mpi_flavours() {
	flavours=
	[ -n "$MPIEXEC" ] && [ -x "${top_builddir:-.}/t/$1" ] && flavours=mpich
	[ -n "$MPIRUN_OPENMPI" ] && [ -x "${top_builddir:-.}/t/$1_openmpi" ] &&
		flavours="$flavours openmpi-ompio openmpi-romio"
	flavours=${flavours# }
}

mpi_use() {
	case $1 in
	mpich)
		mpirun=$MPIEXEC mpi_suffix= mpi_label=MPICH ;;
	openmpi-ompio)
		mpirun="$MPIRUN_OPENMPI --allow-run-as-root --oversubscribe --mca io ompio"
		mpi_suffix=_openmpi mpi_label="Open MPI, OMPIO" ;;
	openmpi-romio)
		mpirun="$MPIRUN_OPENMPI --allow-run-as-root --oversubscribe --mca io romio321"
		mpi_suffix=_openmpi mpi_label="Open MPI, ROMIO" ;;
	*)
		echo "mpi_lib.sh: unknown flavour $1" >&2
		return 1 ;;
	esac
}
