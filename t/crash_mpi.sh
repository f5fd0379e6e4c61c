#!/bin/sh
# t/crash_mpi.sh -- an MPI job ended by MPI_Abort keeps every byte its
# ranks' writes returned for: 2 to 4 ranks (MPICH's launcher) each write
# their own file with random calls, logging them (t/crash_mpi); after a
# barrier rank 0 calls MPI_Abort while the others write.  Once the job has
# ended and the guardians the ranks saw have exited, t/crash_kill check
# (not preloaded) replays each rank's log through the kernel and compares
# it with the rank's file.  Raw (must always pass), then over two cache
# stacks.  CRASH_MPI_SEEDS=N jobs per line (default 2), from CRASH_SEED.
# Under MPICH's launcher and Open MPI's (which ends the job's ranks
# itself; its I/O component plays no part: the ranks write with POSIX
# calls).  Skips without MPI.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
. "$top_srcdir/t/mpi_lib.sh"
check=$top_builddir/t/crash_kill
mpi_flavours crash_mpi posix
{ [ -n "$flavours" ] && [ -x "$check" ]; } || skip_all "MPI not configured"
: "${CRASH_MPI_SEEDS:=2}"
: "${CRASH_SEED:=1}"
last=$((CRASH_SEED + CRASH_MPI_SEEDS - 1))
d=$scratch/job

tally() { # what the tally file says: cases, failed, MiB
	awk '{ c += $1; f += $2; b += $3 } END { printf "%d files, %d failed, %.1f MiB compared", c, f, b / 1048576 }' "$1"
}

for flavour in $flavours; do
mpi_use $flavour
prog=$top_builddir/t/crash_mpi$mpi_suffix
for spec in raw '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:1m:16:2)'; do
	name=$spec
	[ "$name" != raw ] && { name=${spec#*(}; name=${name%)}; }
	stack_bad=0
	: >"$scratch/tally.stack"
	for np in 2 3 4; do
		bad=0
		: >"$scratch/tally"
		s=$CRASH_SEED
		while [ $s -le "$last" ]; do
			rm -rf "$d"; mkdir "$d" || exit 1
			nabort=$((1 + s * 397 % 1500))
			# the launcher reads no input; it ends with MPI_Abort's code
			if [ "$spec" = raw ]; then
				timeout 120 $mpirun -n $np "$prog" "$d" $s $nabort </dev/null >"$d/out" 2>&1
			else
				FF_IO_LOGFILE=$d/ffio.log pre "$spec" timeout 120 $mpirun -n $np "$prog" "$d" $s $nabort \
					</dev/null >"$d/out" 2>&1
			fi
			st=$?
			if [ $st -eq 124 ] || [ $st -eq 0 ]; then
				echo "# seed $s, $np ranks: the job ended with status $st, not by MPI_Abort"
				sed 's/^/#   /' "$d/out" | head -5
				bad=$((bad + 1))
			fi
			r=0
			while [ $r -lt $np ]; do
				out=$(CRASH_SPEC= "$check" check "$d/rank$r.log" "$d/rank$r.dat" "seed $s, $np ranks, rank $r" 2>&1) ||
					bad=$((bad + 1))
				printf '%s\n' "$out" | sed '$d'
				r=$((r + 1))
			done
			[ -f "$d/tally" ] && cat "$d/tally" >>"$scratch/tally"
			s=$((s + 1))
		done
		cat "$scratch/tally" >>"$scratch/tally.stack"
		[ $bad -ne 0 ] && stack_bad=$((stack_bad + 1))
		ok $bad "$mpi_label: [$name] $np ranks, MPI_Abort by rank 0, seeds $CRASH_SEED-$last: $(tally "$scratch/tally")"
	done
	ok $stack_bad "$mpi_label: [$name] all: $(tally "$scratch/tally.stack")"
done
done
done_testing
