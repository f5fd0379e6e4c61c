#!/bin/sh
# t/advise_rules.sh -- ffio-advise on synthetic JSON event logs, one per
# access pattern, checked against the exact spec the rules give: large
# sequential reads stay uncached, 16 KiB requests too on a local file
# system (8 KiB ones are cached), 64 KiB ones unless they wait for a
# slow file system; small strided writes by one process get cache.sieve,
# by two processes no cache (never .sieve), two processes' sequential
# writes a plain cache; strides too far apart stay uncached, but reads 4
# KiB apart of a file that the reading process alone writes sieved get
# .sieve and read-ahead (not when another process writes it, or two do,
# or it is read only); pages hold a sixteenth of the working set, up to
# 256 KiB in 16 pages for data passed once, up to 1 MiB for data that
# comes back (random small reads that come back too); random small
# writes never get .sieve; uring only for a
# high measured latency off a local file system; globs *.nc and
# out_*.dat; a log merged by --keep-log keeps its processes apart; /proc
# files stay uncached; a file one process reads while another writes
# gets a note; malformed lines give FILE:LINE and exit 1.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
ADV=$top_builddir/ffio-advise
[ -x "$ADV" ] || skip_all "ffio-advise not built"
d=$scratch
nodir=$d/not-made  # paths under it have no file system: latency alone decides

# summ DIRECTION PATH CALLS BYTES SECONDS SEQ STRIDED STRIDE RANDOM BUCKET:
# one event.summary line as the event layer writes it.
summ() {
	printf '{"event":"event[0] of * (above sys)","layer":"event","position":0,"path":"%s","units":"bytes","ops":{"open":{"calls":1,"errors":0,"bytes":0,"seconds":0.000010000},"%s":{"calls":%s,"errors":0,"bytes":%s,"seconds":%s},"close":{"calls":1,"errors":0,"bytes":0,"seconds":0.000001000}},"%s":{"sequential":%s,"strided":%s,"stride":%s,"random":%s,"sizes":{"%s":%s}}}\n' \
		"$2" "$1" "$3" "$4" "$5" "$1" "$6" "$7" "$8" "$9" "${10}" "$3"
}
# advise LOG: the last line of ffio-advise --from LOG (its status in $st)
advise() {
	"$ADV" --from "$@" >"$d/out" 2>"$d/err"
	st=$?
	tail -n 1 "$d/out"
}

# -- large sequential reads: uncached
summ read "$d/big.dat" 1000 1048576000 0.5 1000 0 0 0 1048576 >"$d/l1.json"
is "$(advise "$d/l1.json")" "FF_IO_OPTS=''" "sequential 1 MiB reads: nothing advised"
grep -q 'uncached: read sequentially in large requests' "$d/out"; ok $? "... and the reason is printed"
grep -q 'no file needs a stack' "$d/out"; ok $? "... with a message before the empty spec"

# -- 64 KiB requests: uncached on a local disk, gathered where they wait
summ write "$d/mid.dat" 10000 655360000 0.05 10000 0 0 0 65536 >"$d/l16.json"
is "$(advise "$d/l16.json")" "FF_IO_OPTS=''" "sequential 64 KiB writes on a local file system: uncached"
grep -q 'uncached: the writes are large already (median 64 KiB, 16 KiB or more here)' "$d/out"; ok $? "... saying why"
# -- 8 KiB requests (netCDF's blocks) are cached on a local file system,
# from 16 KiB on they are not
summ read "$d/blk.nc" 10000 81920000 0.01 10000 0 0 0 8192 >"$d/l18.json"
is "$(advise "$d/l18.json")" "FF_IO_OPTS='blk.nc(cache:512k:16:2)'" "sequential 8 KiB reads on a local file system: cached"
summ read "$d/blk16.nc" 10000 163840000 0.01 10000 0 0 0 16384 >"$d/l19.json"
is "$(advise "$d/l19.json")" "FF_IO_OPTS=''" "sequential 16 KiB reads on a local file system: uncached"
grep -q 'uncached: read sequentially in large requests (median 16 KiB, 16 KiB or more here)' "$d/out"; ok $? "... saying why"

# -- small strided writes, one process: cache.sieve
summ write "$d/x.dat" 10000 640000 0.01 0 10000 256 0 64 >"$d/l2.json"
is "$(advise "$d/l2.json")" "FF_IO_OPTS='x.dat(cache.sieve:64k:16:0)'" "strided 64 B writes, one writer: cache.sieve"
grep -q '^    - \.sieve: one process writes strided records' "$d/out"; ok $? "... with the reason for .sieve"
grep -q 'system calls: 10000 -> 40 (250.0x fewer, estimated)' "$d/out"; ok $? "... and the expected calls (10000 -> 40: 256 B strides in 64 KiB pages)"
grep -q 'pages: 16 of 64k: the data passes about once (625 KiB moved over a working set of 2.441 MiB)' "$d/out"
ok $? "... in 16 pages: the records pass once"

# -- the same by two processes (one log each): never .sieve, and no plain
# cache either: its gaps are the other's, it would save no call (measured
# slower); two processes each writing its own part sequentially: cache
mkdir "$d/two" "$d/seg"
summ write "$d/x.dat" 5000 320000 0.005 0 5000 256 0 64 >"$d/two/ev.101.json"
summ write "$d/x.dat" 5000 320000 0.005 0 5000 256 0 64 >"$d/two/ev.102.json"
is "$(advise "$d/two")" "FF_IO_OPTS=''" "the same by two writer processes: no .sieve (uncached)"
grep -q 'uncached: 2 processes write strided records (stride 256 B) with gaps between them: .sieve would overwrite' \
	"$d/out"; ok $? "... saying why"
summ write "$d/seg.dat" 20000 1280000 0.02 20000 0 0 0 64 >"$d/seg/ev.101.json"
summ write "$d/seg.dat" 20000 1280000 0.02 20000 0 0 0 64 >"$d/seg/ev.102.json"
is "$(advise "$d/seg")" "FF_IO_OPTS='seg.dat(cache:128k:10:0)'" "two processes writing 64 B records sequentially: plain cache"
grep -q 'no .sieve: the writes leave no regular gaps' "$d/out"; ok $? "... no .sieve"
grep -q '2 writing (written by more than one process)' "$d/out"; ok $? "... and the writers are counted"
# a log merged by --keep-log keeps the two processes apart
"$ADV" -q --from "$d/two" --keep-log "$d/merged.json" >/dev/null 2>&1
is "$(advise "$d/merged.json")" "FF_IO_OPTS=''" "the merged log (--keep-log) still shows two writers"
# one log file with both records and no process names: taken as two processes
cat "$d/two/ev.101.json" "$d/two/ev.102.json" >"$d/one.json"
is "$(advise "$d/one.json")" "FF_IO_OPTS=''" "one log of unknown processes: never .sieve"
"$ADV" -q --from "$d/one.json" --keep-log "$d/merged1.json" >/dev/null 2>&1
is "$(advise "$d/merged1.json")" "FF_IO_OPTS=''" "... nor once merged by --keep-log"
# -- strides too far apart for the gaps to pay
summ write "$d/far.dat" 10000 640000 0.01 0 10000 32768 0 64 >"$d/lf1.json"
is "$(advise "$d/lf1.json")" "FF_IO_OPTS=''" "64 B writes 32 KiB apart, one writer: uncached"
grep -q 'uncached: strided writes with a stride of 32 KiB (more than 16 KiB on this file system)' "$d/out"; ok $? "... saying why"
summ write "$d/far.dat" 4096 16777216 0.01 0 4096 16384 0 4096 >"$d/lf5.json"
is "$(advise "$d/lf5.json")" "FF_IO_OPTS='far.dat(cache.sieve:256k:16:0)'" "4 KiB writes 16 KiB apart, one writer: .sieve (the limit)"
summ read "$d/far.dat" 10000 640000 0.01 0 10000 4096 0 64 >"$d/lf2.json"
is "$(advise "$d/lf2.json")" "FF_IO_OPTS=''" "64 B reads 4 KiB apart of a file read only: uncached"
grep -q 'uncached: strided reads with a stride of 4 KiB (more than 2 KiB on this file system)' "$d/out"; ok $? "... saying why"
summ read "$d/near.dat" 10000 640000 0.01 0 10000 2048 0 64 >"$d/lf3.json"
is "$(advise "$d/lf3.json")" "FF_IO_OPTS='near.dat(cache:64k:16:2)'" "64 B reads 2 KiB apart: cache with read-ahead"
summ read "$nodir/far.dat" 10000 640000 2.0 0 10000 8192 0 64 >"$d/lf4.json"
is "$(advise "$d/lf4.json")" "FF_IO_OPTS='far.dat(cache:64k:16:2, uring:64)'" "64 B reads 8 KiB apart at 200 us: cache and uring"

# -- reads 4 KiB apart of a file the reading process alone writes, sieved:
# .sieve and read-ahead (one log file, both summaries: one process)
mkdir "$d/own" "$d/other" "$d/both" "$d/seqw"
{
	summ write "$d/s4.dat" 16384 4194304 0.02 0 16384 4096 0 256
	summ read "$d/s4.dat" 32768 8388608 0.03 0 32768 4096 0 256
} >"$d/own/ev.301.json"
is "$(advise "$d/own")" "FF_IO_OPTS='s4.dat(cache.sieve:64k:16:2)'" "256 B records 4 KiB apart written and read back by one process: .sieve and read-ahead"
grep -q 'cache: strided reads with a stride of 4 KiB of a file that only the reading process writes, its writes sieved' \
	"$d/out"; ok $? "... saying why"
grep -q '^    - \.sieve: one process writes strided records' "$d/out"; ok $? "... and why .sieve"
grep -q 'read-ahead: 2 pages' "$d/out"; ok $? "... with read-ahead"
grep -q 'pages: 16 of 64k: the data passes about once (12 MiB moved over a working set of 128 MiB)' "$d/out"; ok $? "... in 16 pages: the data passes once"
# not when another process writes the file
summ write "$d/s4.dat" 16384 4194304 0.02 0 16384 4096 0 256 >"$d/other/ev.401.json"
summ read "$d/s4.dat" 32768 8388608 0.03 0 32768 4096 0 256 >"$d/other/ev.402.json"
is "$(advise "$d/other")" "FF_IO_OPTS=''" "... read by a process that did not write it: uncached"
grep -q 'uncached: strided reads with a stride of 4 KiB (more than 2 KiB on this file system)' "$d/out"; ok $? "... saying why"
# nor when two processes write it (each reading back its records)
for p in 501 502; do
	{
		summ write "$d/s4.dat" 8192 2097152 0.01 0 8192 4096 0 256
		summ read "$d/s4.dat" 16384 4194304 0.015 0 16384 4096 0 256
	} >"$d/both/ev.$p.json"
done
is "$(advise "$d/both")" "FF_IO_OPTS=''" "... written and read back by two processes: never .sieve (uncached)"
# nor when the process writes it in sequence: nothing is sieved
{
	summ write "$d/s4.dat" 64 4194304 0.01 64 0 0 0 65536
	summ read "$d/s4.dat" 32768 8388608 0.03 0 32768 4096 0 256
} >"$d/seqw/ev.601.json"
is "$(advise "$d/seqw")" "FF_IO_OPTS=''" "... written by it in large sequential requests: uncached"

# -- the page: 64 records and 8 strides where the data passes once, in 16
# pages (8 B records 64 B apart over 4 MiB, written and read back: 64
# KiB); where it comes back, also a sixteenth of the working set, up to
# 1 MiB, the pages holding all of it (a file of 16 MiB written 10 times
# over)
mkdir "$d/ws"
{
	summ write "$d/s8.dat" 65536 524288 0.02 0 65536 64 0 8
	summ read "$d/s8.dat" 131072 1048576 0.03 0 131072 64 0 8
} >"$d/ws/ev.701.json"
is "$(advise "$d/ws")" "FF_IO_OPTS='s8.dat(cache.sieve:64k:16:2)'" "8 B records 64 B apart over 4 MiB, passed once: 64 KiB pages"
truncate -s 16M "$d/re.dat"
summ write "$d/re.dat" 40960 167772160 0.08 40960 0 0 0 4096 >"$d/lw1.json"
is "$(advise "$d/lw1.json")" "FF_IO_OPTS='re.dat(cache:1m:16:0)'" "4 KiB writes 10 times over a file of 16 MiB: 1 MiB pages"
grep -q 'pages: 16 of 1m for a working set of 16 MiB (all of it)' "$d/out"; ok $? "... holding all of it"

# -- random small writes: never sieve
summ write "$d/r.dat" 10000 40960000 0.02 0 0 0 10000 4096 >"$d/l3.json"
is "$(advise "$d/l3.json")" "FF_IO_OPTS='r.dat(cache:64k:625:0)'" "random 4 KiB writes over 39 MiB: plain cache, no sieve"
summ write "$d/r.dat" 100000 409600000 0.2 0 0 0 100000 4096 >"$d/l4.json"
is "$(advise "$d/l4.json")" "FF_IO_OPTS=''" "random 4 KiB writes over 390 MiB: uncached"
grep -q 'uncached: random writes (100%) over a working set of 390.6 MiB' "$d/out"; ok $? "... saying so"
summ write "$d/r8.dat" 10000 81920000 0.02 0 0 0 10000 8192 >"$d/l3b.json"
is "$(advise "$d/l3b.json")" "FF_IO_OPTS=''" "random 8 KiB writes: uncached"
summ read "$d/q.dat" 10000 40960000 0.02 0 0 0 10000 4096 >"$d/l5.json"
is "$(advise "$d/l5.json")" "FF_IO_OPTS=''" "random 4 KiB reads read once: uncached"
# -- random small reads that come back: the working set in the fewest loads
truncate -s 32M "$d/q8.dat"
summ read "$d/q8.dat" 65536 268435456 0.1 0 0 0 65536 4096 >"$d/l5b.json"
is "$(advise "$d/l5b.json")" "FF_IO_OPTS='q8.dat(cache:1m:32:0)'" "random 4 KiB reads 8 times over 32 MiB: 1 MiB pages, all of it"
grep -q 'pages: 32 of 1m for a working set of 32 MiB (all of it)' "$d/out"; ok $? "... holding all of it"
truncate -s 2M "$d/q2.dat"
summ read "$d/q2.dat" 2048 8388608 0.01 0 0 0 2048 4096 >"$d/l5c.json"
is "$(advise "$d/l5c.json")" "FF_IO_OPTS='q2.dat(cache:128k:16:0)'" "the same 4 times over 2 MiB: a sixteenth of it a page"

# -- uring only for a high latency, not on a local file system
summ read "$nodir/h.dat" 10000 40960000 2.0 10000 0 0 0 4096 >"$d/l6.json"
is "$(advise "$d/l6.json")" "FF_IO_OPTS='h.dat(cache:256k:16:2, uring:64)'" "sequential 4 KiB reads at 200 us: cache and uring"
summ read "$nodir/h.dat" 10000 40960000 0.02 10000 0 0 0 4096 >"$d/l7.json"
is "$(advise "$d/l7.json")" "FF_IO_OPTS='h.dat(cache:256k:16:2)'" "the same at 2 us: no uring"
grep -q 'no uring: mean request latency 2.0 us < 100 us' "$d/out"; ok $? "... saying why"
summ read "$d/h.dat" 10000 40960000 2.0 10000 0 0 0 4096 >"$d/l8.json"
is "$(advise "$d/l8.json")" "FF_IO_OPTS='h.dat(cache:256k:16:2)'" "200 us on the local file system of $d: no uring"
"$ADV" --latency 1000 --from "$d/l6.json" | tail -n 1 >"$d/o"
is "$(cat "$d/o")" "FF_IO_OPTS='h.dat(cache:256k:16:2)'" "--latency 1000: 200 us is not enough"

# -- globs: *.nc, out_*.dat beside an uncached in.dat
for f in a b c; do summ write "$d/$f.nc" 10000 640000 0.01 0 10000 256 0 64; done >"$d/l9.json"
is "$(advise "$d/l9.json")" "FF_IO_OPTS='*.nc(cache.sieve:64k:16:0)'" "three netCDF files alike: *.nc"
grep -q '^group \*\.nc: 3 files' "$d/out"; ok $? "... reported as one group"
{
	for f in 1 2 17; do summ write "$d/out_$f.dat" 20000 2621440 0.02 20000 0 0 0 128; done
	summ read "$d/in.dat" 1000 1048576000 0.5 1000 0 0 0 1048576
} >"$d/l10.json"
is "$(advise "$d/l10.json")" "FF_IO_OPTS='out_*.dat(cache:64k:16:0)'" "out_1, out_2, out_17.dat beside an uncached in.dat: out_*.dat"
summ write "$d/lone.tmp" 20000 2621440 0.02 20000 0 0 0 128 >"$d/l11.json"
is "$(advise "$d/l11.json")" "FF_IO_OPTS='lone.tmp(cache:64k:16:0)'" "a file alone: its literal name"
# relative paths resolve against --cwd (or the current directory)
summ write "rel.tmp" 20000 2621440 0.02 20000 0 0 0 128 >"$d/l12.json"
advise "$d/l12.json" --cwd "$d" >/dev/null
grep -q "^group rel.tmp: 1 file (rel.tmp)" "$d/out"; ok $? "a relative path is kept as the program gave it"

# -- few calls: uncached
summ write "$d/few.dat" 10 640 0.0001 0 10 256 0 64 >"$d/l13.json"
is "$(advise "$d/l13.json")" "FF_IO_OPTS=''" "10 requests: nothing advised"

# -- files the kernel makes: never cached
summ read "/proc/advise-test/stat" 10000 4096 0.01 10000 0 0 0 4096 >"$d/l15.json"
is "$(advise "$d/l15.json")" "FF_IO_OPTS=''" "small sequential reads of a /proc file: uncached"
# -- one process reads what another writes: advised, with a note
mkdir "$d/rw"
summ write "$d/pipe.dat" 20000 2560000 0.02 20000 0 0 0 128 >"$d/rw/ev.201.json"
summ read "$d/pipe.dat" 20000 2560000 0.02 20000 0 0 0 128 >"$d/rw/ev.202.json"
is "$(advise "$d/rw")" "FF_IO_OPTS='pipe.dat(cache:256k:10:2)'" "one process writes, another reads: cache"
grep -q 'note: a process reads what another writes' "$d/out"; ok $? "... with a note on when the reader sees the writes"

# -- trace lines and text messages are skipped; topmost event layer wins
{
	echo 'ffio: a text message of the library'
	echo '{"trace":"event[0] of * (above sys)","op":"write","offset":0,"size":64,"result":64,"seconds":0.000001}'
	summ write "$d/x.dat" 10000 640000 0.01 0 10000 256 0 64 | sed 's/"position":0/"position":2/; s/"sizes":{"64"/"sizes":{"65536"/'
	summ write "$d/x.dat" 10000 640000 0.01 0 10000 256 0 64
} >"$d/l14.json"
is "$(advise "$d/l14.json")" "FF_IO_OPTS='x.dat(cache.sieve:64k:16:0)'" "text, trace and a lower event layer's lines do not count"
"$ADV" -q --from "$d/l14.json" --keep-log "$d/merged2.json" >/dev/null 2>&1
is "$(wc -l <"$d/merged2.json" | tr -d ' ')" 1 "--keep-log keeps only the summary used"
is "$(advise "$d/merged2.json")" "FF_IO_OPTS='x.dat(cache.sieve:64k:16:0)'" "... which gives the same advice"

# -- malformed logs: FILE:LINE, exit 1, no advice
{ summ write "$d/x.dat" 10 640 0.0001 0 10 256 0 64; echo '{"event":"e","layer":"event","path":"x","position":0,"ops":{'; } >"$d/bad1.json"
advise "$d/bad1.json" >/dev/null; is "$st" 1 "a truncated line: exit 1"
is "$(cat "$d/out")" "" "... and nothing on standard output"
grep -q "^ffio-advise: $d/bad1.json:2: malformed JSON: column" "$d/err"; ok $? "... the message names the file and line"
printf 'hello\n' >"$d/bad2.json"
advise "$d/bad2.json" >/dev/null; is "$st" 1 "a line that is no JSON: exit 1"
grep -q "bad2.json:1: not a line of an ffio event log" "$d/err"; ok $? "... said so"
summ write "$d/x.dat" 10 640 0.0001 0 10 256 0 64 | sed 's/"sizes":{"64"/"sizes":{"65"/' >"$d/bad3.json"
advise "$d/bad3.json" >/dev/null; is "$st" 1 "a size bucket that is no power of two: exit 1"
grep -q 'bad3.json:1: not an ffio event summary: size bucket "65"' "$d/err"; ok $? "... said so"
summ write "$d/x.dat" 10 640 0.0001 0 10 256 0 64 | sed 's/"calls":10,/"calls":-10,/' >"$d/bad4.json"
advise "$d/bad4.json" >/dev/null; is "$st" 1 "a negative count: exit 1"
advise "$d/nonexistent.json" >/dev/null; is "$st" 1 "a log that does not exist: exit 1"
done_testing
