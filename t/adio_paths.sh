#!/bin/sh
# t/adio_paths.sh -- every ROMIO path (t/adio_mpi's modes) run by 3 ranks
# with libffio preloaded and libffio_mpi linked (t/adio_mpi_glue), over the
# specs cache, cache.sieve and cache over uring; then with libffio alone
# (t/adio_mpi) for the paths that need no MPI knowledge, over cache and
# cache.sieve.  Each file is
# verified byte for byte by t/adio_check, a plain process without ffio.  An
# event layer on top proves the file went through ffio (its per-rank log
# must name the file).  Skips without MPI.
#
# Without libffio_mpi, MPI_File_sync on a rank that did not write is no
# flush point (ROMIO calls fsync only on ranks that wrote) and set_size
# changes the size on one rank only: coll and size need the glue.
#
# Under each MPI built (t/mpi_lib.sh): MPICH, and Open MPI with each of its
# I/O components (OMPIO reaches the file through the same POSIX calls).
bin="${top_builddir:-.}/t"
. "${top_srcdir:-$(dirname "$0")/..}/t/mpi_lib.sh"
mpi_require adio_mpi_glue
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-adio.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

# cache.sieve fills gaps only with bytes read under a lock that keeps the
# other writers out, so it runs every path too, ranks writing at once.
all="contig noncontig coll nb size shared atomic"
set -- "adio_mpi_glue|cache:4k:16:2|$all" \
       "adio_mpi_glue|cache.sieve:4k:16:2|$all" \
       "adio_mpi|cache.sieve:64k:8:2|contig noncontig nb shared atomic" \
       "adio_mpi_glue|cache:4k:16:2, uring:16|$all" \
       "adio_mpi|cache:4k:16:2|contig noncontig nb shared atomic"
n=0
for s in "$@"; do
	for m in ${s##*|}; do n=$((n + 1)); done
done
echo "1..$((n * nflavours))"

# What Open MPI's OMPIO does otherwise than ROMIO: set_size and
# preallocate fail t/adio_mpi's checks without ffio too (ranks see the old
# size); atomic mode takes no lock, so without libffio_mpi nothing tells
# ffio of it (ffio-run preloads the glue).
ompio_skip() { # prog mode -> the reason, when skipped
	[ "$flavour" = openmpi-ompio ] || return 1
	case $2 in
	size) echo "OMPIO's set_size and preallocate fail these checks without ffio too" ;;
	atomic) [ "$1" = adio_mpi ] || return 1
		echo "OMPIO's atomic mode takes no lock: ffio learns of it from libffio_mpi only" ;;
	*) return 1 ;;
	esac
}

i=0
for flavour in $flavours; do
mpi_use $flavour
for s in "$@"; do
	prog=${s%%|*}
	rest=${s#*|}
	spec=${rest%%|*}
	for mode in ${s##*|}; do
		i=$((i + 1))
		if skip=$(ompio_skip "$prog" "$mode"); then
			echo "ok $i - $mpi_label: $mode over $spec ($prog) # SKIP $skip"
			continue
		fi
		file="$dir/adio_$mode.dat"
		rm -f "$file" "$dir"/log.*
		out=$(LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="adio_*.dat(event.summary, $spec)" \
			FF_IO_LOGFILE="$dir/log.%r" \
			timeout 60 $mpirun -n 3 "$bin/$prog$mpi_suffix" "$mode" "$file" 2>"$dir/err")
		rc=$?
		why=
		if [ $rc -ne 0 ]; then
			why="exit $rc: $(head -c 300 "$dir/err")"
		elif ! res=$("$bin/adio_check" "$file" ${out#expect }); then
			why="$res"
		elif ! grep -q "adio_$mode.dat" "$dir/log.0" 2>/dev/null; then
			why="the file did not go through ffio (no event summary in log.0)"
		fi
		if [ -z "$why" ]; then
			echo "ok $i - $mpi_label: $mode over $spec ($prog)"
		else
			echo "not ok $i - $mpi_label: $mode over $spec ($prog)"
			echo "# $why" | tr '\n' ' '; echo
		fi
	done
done
done
