#!/bin/sh
# t/mpi_order.sh -- what a rank wrote before MPI_Barrier (or another call
# that orders ranks) is what another rank reads after it, over four cache
# stacks, for MPI_File_write_at, _write_shared, _write_ordered,
# _write_at_all (romio_cb_write automatic, enable, disable) and pwrite on
# a descriptor; also after MPI_Send / MPI_Recv and the other ordering
# calls t/mpi_order.c knows.  2 to 4 ranks; libffio preloaded, the
# program linked with libffio_mpi.  Under each MPI built (t/mpi_lib.sh:
# MPICH; Open MPI with OMPIO and with ROMIO).  Skips without MPI.
bin="${top_builddir:-.}/t"
. "${top_srcdir:-$(dirname "$0")/..}/t/mpi_lib.sh"
mpi_require mpi_order
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-order.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
run_tool=${top_builddir:-.}/bin/ffio-run
installed=$(mpi_libs "$dir/lib") || exit 1
i=0
# run RANKS STACK WRITE SYNC [CB]: one job; its exact bytes checked by it.
# With wo=1 (run_wo) the ranks read nothing before the ordering call.
run() {
	ranks=$1 stack=$2; shift 2
	i=$((i + 1))
	if [ "$flavour" = openmpi-ompio ] && [ "$1 $2" = "ordered sendrecv" ]; then
		echo "ok $i - $mpi_label: $ranks ranks, $stack: $* # SKIP OMPIO's write_ordered fails it without ffio too"
		return
	fi
	file="$dir/mpi_order_$i.dat"
	if out=$(LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="mpi_order_*.dat($stack)" MPI_ORDER_WRITE_ONLY=${wo:-0} \
		timeout 60 $mpirun -n "$ranks" "$bin/mpi_order$mpi_suffix" "$1" "$2" "$file" ${3:-} 2>&1); then
		echo "ok $i - $mpi_label: $ranks ranks, $stack: $*${wo:+ (nothing read before)}"
	else
		echo "not ok $i - $mpi_label: $ranks ranks, $stack: $*${wo:+ (nothing read before)}"
		printf '%s\n' "$out" | head -5 | sed 's/^#* */# /'
	fi
	rm -f "$file"
}
echo "1..$((59 * nflavours))"
for flavour in $flavours; do
mpi_use $flavour
n=2
for stack in "cache:4k:16:2" "cache:64k:8:2" "cache.sieve:1m:16:2" "cache:1m:16:2, uring:64"; do
	for write in at shared ordered posix; do
		run $n "$stack" $write barrier
		n=$((n % 4 + 1)); [ $n = 1 ] && n=2
	done
	run $n "$stack" at send
	run 3 "$stack" posix send
	for cb in automatic enable disable; do
		run $n "$stack" at_all barrier $cb
		n=$((n % 4 + 1)); [ $n = 1 ] && n=2
	done
done
for sync in ibarrier allreduce allgather alltoall sendrecv isend bcast gather fence posix; do
	case $sync in
	posix) run 3 "cache:4k:16:2" posix isend ;;
	*) run 3 "cache:4k:16:2" at $sync ;;
	esac
done
run 4 "cache:64k:8:2" ordered sendrecv
# Nothing read before the ordering call: a cache that holds only its own
# writes, in a file the writers make grow.
wo=1
for write in at posix shared; do
	run 3 "cache:4k:16:2" $write barrier
	run 2 "cache:1m:16:2, uring:64" $write send
done
run 4 "cache.sieve:1m:16:2" at barrier
run 3 "cache:64k:8:2" at_all barrier enable
wo=

# A master that writes what it receives, reading nothing: its receives
# write nothing back, so its pieces reach the file in one request at close
# (32 without the rule that a heard drops only what was read), and the
# file holds them.
for stack in "cache:4k:16:2" "cache:1m:16:2, uring:64"; do
	i=$((i + 1))
	file="$dir/mpi_order_$i.dat"
	spec=$(echo "$stack" | sed 's/, uring/, event.summary, uring/; /event/!s/$/, event.summary/')
	LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="mpi_order_*.dat($spec)" FF_IO_LOGFILE="$dir/log.%r" \
		timeout 60 $mpirun -n 3 "$bin/mpi_order$mpi_suffix" master none "$file" >"$dir/out" 2>&1
	rc=$?
	writes=$(sed -n '/below cache.*mpi_order_/,$p' "$dir/log.0" 2>/dev/null | awk '$1 == "write" { print $2; exit }')
	expect=$(i=0; while [ $i -lt 32 ]; do printf "%100s" "" | tr ' ' "$(printf "\\$(printf %o $((97 + i % 26)))")"; i=$((i + 1)); done | od -An -tx1 | tr -d ' \n')
	got=$(od -An -tx1 "$file" 2>/dev/null | tr -d ' \n')
	if [ $rc = 0 ] && [ "$writes" = 1 ] && [ "$got" = "$expect" ]; then
		echo "ok $i - $mpi_label: 3 ranks, $stack: a master's 32 received pieces, one write below the cache"
	else
		echo "not ok $i - $mpi_label: 3 ranks, $stack: a master's 32 received pieces, one write below the cache"
		echo "# exit $rc, writes below the cache: ${writes:-none}, bytes as sent: $([ "$got" = "$expect" ] && echo yes || echo no)"
	fi
	rm -f "$file" "$dir"/log.*
done

# ffio-run preloads the glue of the MPI the program loads: the same
# program built without it (t/mpi_order_plain) then reads the other rank's
# block after the barrier.  (ffio-run finds the glue beside FFIO_LIB, as
# installed: here, the build tree's libraries are linked into one folder.)
for write in at posix; do
	i=$((i + 1))
	file="$dir/mpi_order_$i.dat"
	if out=$(FFIO_LIB="$installed" timeout 60 $mpirun -n 2 "$run_tool" -o "mpi_order_*.dat(cache:64k:8:2)" \
		"$bin/mpi_order_plain$mpi_suffix" $write barrier "$file" 2>&1); then
		echo "ok $i - $mpi_label: 2 ranks, ffio-run, a program without the glue: $write barrier"
	else
		echo "not ok $i - $mpi_label: 2 ranks, ffio-run, a program without the glue: $write barrier"
		printf '%s\n' "$out" | head -5 | sed 's/^#* */# /'
	fi
	rm -f "$file"
done
done
