#!/bin/sh
# t/share_ranks.sh -- the ranks of an MPI job (2 to 4, under MPICH's
# launcher) writing interleaved records into one file at once
# (t/share_ranks), through POSIX calls and through MPI-IO: records of 1 B
# to 4 KiB, in order and at random, into a new file, over older bytes and
# after reading it; the ranks close in several orders.  Each case runs raw,
# then with libffio preloaded over every stack; the file must hold every
# rank's records.  Skips without MPI.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
prog=$top_builddir/t/share_ranks
{ [ -n "$MPIEXEC" ] && [ -x "$prog" ]; } || skip_all "MPI not configured"
export FF_IO_LOGFILE="$scratch/log"
f=$scratch/ranks.dat
# API RANKS RECSIZE LAYOUT BEFORE ORDER SEED
cases='posix 2 256 seq none 10 1
posix 2 1 rand old 01 2
posix 3 8 seq read 201 3
posix 4 100 rand none 3120 4
mpiio 2 4096 seq read 10 5
mpiio 3 24 rand old 012 6
mpiio 4 512 seq none 2301 7'
run() { # run SPEC API RANKS ARGS...: raw when SPEC is empty (the launcher
	# reads no input: it would take the list of cases)
	sp=$1 api=$2 np=$3; shift 3
	if [ -z "$sp" ]; then
		timeout 60 $MPIEXEC -n "$np" "$prog" "$api" "$f" "$@" </dev/null 2>&1
	else
		pre "$sp" timeout 60 $MPIEXEC -n "$np" "$prog" "$api" "$f" "$@" </dev/null 2>&1
	fi
}
for spec in '' '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:4k:4:1)' \
	'*.dat(cache.sieve:1m:16:2)' '*.dat(cache.sieve:1m:16:2, uring:64)'; do
	while read -r api np r l b o s; do
		out=$(run "$spec" "$api" "$np" "$r" "$l" "$b" "$o" "$s")
		ok $? "${spec:-raw}: $api, $np ranks, $r B records, $l, $b, closing $o: $(echo "$out" | tail -n 1)"
	done <<EOC
$cases
EOC
done
done_testing
