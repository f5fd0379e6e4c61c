#!/bin/sh
# t/layer_preload.sh -- the event and fault layers under an unmodified
# program (t/blocks, which reads and writes in blocks as dd does) run with
# the library preloaded and FF_IO_OPTS: exact counts, labels, JSON,
# unmatched files untouched, fault errors reaching the program; and dd
# itself, whose files land on descriptors 0 and 1 (passed through to the
# kernel, where stdio writes too): its output is whole.
if [ -z "$FFIO_LIB" ] || [ ! -f "$FFIO_LIB" ]; then
	echo "1..0 # SKIP FFIO_LIB not set (run through make check)"
	exit 0
fi
blocks=$(cd "${top_builddir:-.}/t" && pwd)/blocks
[ -x "$blocks" ] || { echo "1..0 # SKIP t/blocks not built"; exit 0; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-preload-XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99

n=0
failed=0
ok() { # ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
has() { grep -qxF -- "$2" "$1"; }          # has FILE LINE: an exact line
row() { # row FILE OP: "calls errors bytes" of the first summary row of OP
	awk -v op="$2" '$1 == op { print $2, $3, $4; exit }' "$1"
}
run() { # run SPEC LOG PROGRAM ARGS...
	spec=$1 log=$2
	shift 2
	FF_IO_OPTS=$spec FF_IO_LOGFILE=$log LD_PRELOAD=$FFIO_LIB "$@"
}

echo "1..15"

run '*.dat(event.summary.bytes, sys)' w.log "$blocks" w x.dat 4096 4
ok $? "blocks writes x.dat preloaded"
has w.log "ffio: event[0] of *.dat (above sys) summary: x.dat"; ok $? "one labelled summary"
[ "$(row w.log write)" = "4 0 16384" ]; ok $? "write row: 4 calls, 0 errors, 16384 bytes ($(row w.log write))"
[ "$(row w.log open)" = "1 0 -" ] && [ "$(row w.log close)" = "1 0 -" ]; ok $? "one open, one close"
has w.log "  write pattern: 4 sequential, 0 strided, 0 random"; ok $? "write pattern"
has w.log "  write sizes: 4k:4"; ok $? "write sizes"

run '*.dat(event.summary.bytes, sys)' r.log "$blocks" r x.dat 1000
# 16 reads of 1000 bytes, one of 384, one at the end of file.
[ "$(row r.log read)" = "18 0 16384" ]; ok $? "read row: 18 calls, 16384 bytes ($(row r.log read))"
has r.log "  read sizes: 512:18"; ok $? "read sizes"

run '*.dat(event.summary.bytes, sys)' u.log "$blocks" w x.txt 4096 1
[ ! -s u.log ]; ok $? "a file no entry matches is not touched"

run '*.dat(event.bytes, event.kbytes, sys)' two.log "$blocks" w t.dat 2048 2
has two.log "ffio: event[0] of *.dat (above event) summary: t.dat" &&
	has two.log "ffio: event[1] of *.dat (below event, above sys) summary: t.dat"
ok $? "two event layers, both labelled"

FF_IO_LOGFORMAT=json run '*.dat(event, sys)' j.log "$blocks" w j.dat 100 3
[ "$(wc -l < j.log)" -eq 1 ] && grep -q '^{"event":"event\[0\] of \*\.dat (above sys)".*}$' j.log
ok $? "FF_IO_LOGFORMAT=json: one JSON line"
grep -qF '"write":{"calls":3,"errors":0,"bytes":300,' j.log; ok $? "JSON write counts"

run '*.dat(fault:write:ENOSPC:2, sys)' f.log "$blocks" w f.dat 4096 4 2>err.txt
st=$?
[ $st -ne 0 ] && grep -q "No space left on device" err.txt; ok $? "the program sees ENOSPC from the fault layer"
[ "$(wc -c < f.dat)" -eq 8192 ]; ok $? "after exactly 2 writes"

if command -v dd >/dev/null 2>&1; then
	run '*.dat(cache:4k:2:1)' d.log dd if=x.dat of=d.dat bs=1000 status=none &&
		cmp -s x.dat d.dat && [ ! -s d.log ]
	ok $? "dd copies x.dat to d.dat whole, its descriptors 0 and 1 passed through"
else
	n=$((n + 1)); echo "ok $n # SKIP no dd"
fi

[ $failed -eq 0 ]
