#!/bin/sh
# t/trans_signal.sh -- a signal handler's write to a self-pipe while the
# program writes a cached file and calls malloc (t/trans_signal.c): the
# program ends normally with every byte as written over each stack.  (Raw,
# the same program takes minutes here: each record is a system call that
# the timer's signals keep interrupting.)
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
prog=$top_builddir/t/trans_signal
[ -x "$prog" ] || skip_all "t/trans_signal not built"
export FF_IO_LOGFILE="$scratch/log"
for spec in '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:64k:8:2)' \
	'*.dat(cache:64k:8:2, uring:8)'; do
	out=$(pre "$spec" timeout 300 "$prog" "$scratch/x.dat" 2>&1)
	is "$out" ok "over $spec: every record as written, no crash, no hang"
done
done_testing
