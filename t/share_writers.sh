#!/bin/sh
# t/share_writers.sh -- several processes writing interleaved records into
# one file at once (t/share_writers): 2 to 4 writers, records of 1 B to
# 4 KiB, in order and at random, into a new file, over older bytes, and
# after reading the whole file; the writers close in several orders.  Each
# case runs raw (the program's own check of the kernel alone), then
# preloaded over every stack; the file must hold every writer's records.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
prog=$top_builddir/t/share_writers
[ -x "$prog" ] || skip_all "t/share_writers not built"
export FF_IO_LOGFILE="$scratch/log"
f=$scratch/shared.dat
# WRITERS RECSIZE LAYOUT BEFORE ORDER SEED
cases='2 256 seq none 01 1
2 256 seq none 10 1
2 1 seq none 10 2
2 8 rand none 01 3
2 100 rand old 10 4
2 4096 seq read 01 5
2 4096 seq read 10 5
3 8 seq read 210 6
3 24 rand none 120 7
3 512 rand read 021 8
4 64 seq none 3210 9
4 1000 rand old 1302 10
4 3 rand read 2031 11'
while read -r w r l b o s; do
	out=$("$prog" "$f" "$w" "$r" "$l" "$b" "$o" "$s" 2>&1)
	ok $? "raw: $w writers, $r B records, $l, $b, closing $o: $out"
done <<EOF
$cases
EOF
for spec in '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:4k:4:1)' \
	'*.dat(cache.sieve:64k:8:2)' '*.dat(cache.sieve:1m:16:2)' '*.dat(cache:1m:16:2, uring:64)' \
	'*.dat(cache.sieve:1m:16:2, uring:64)'; do
	while read -r w r l b o s; do
		out=$(pre "$spec" "$prog" "$f" "$w" "$r" "$l" "$b" "$o" "$s" 2>&1)
		ok $? "$spec: $w writers, $r B records, $l, $b, closing $o: $out"
	done <<EOF
$cases
EOF
done
done_testing
