#!/bin/sh
# t/rel_threads.sh -- the thread stress test (t/rel_threads.c) preloaded
# over several stacks, then built together with the library's sources under
# ThreadSanitizer (skipped with a message where the compiler cannot).
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
S=$top_srcdir
run() { # run LABEL CMD...: the program's TAP lines folded into one result
	label=$1; shift
	rm -rf "$scratch/w"; mkdir "$scratch/w"
	"$@" "$scratch/w" 8 3000 >"$scratch/out" 2>"$scratch/err"
	st=$?
	sed 's/^/#   /' "$scratch/out"
	[ -s "$scratch/err" ] && sed 's/^/#   stderr: /' "$scratch/err" | head -40
	ok $st "$label"
}
for spec in '*.dat(cache:4k:8:1)' '*.dat(cache.sieve:1k:4:2)' '*.dat(cache:64k:2:0, uring:4)' \
	'*.dat(event.notrace, cache.shared:2k:16:1)'; do
	run "preloaded, $spec: 8 threads x 3000 operations, data exact" \
		env FF_IO_LOGFILE=/dev/null FF_IO_OPTS="$spec" LD_PRELOAD="$PRELOAD" "$top_builddir/t/rel_threads"
done
# ThreadSanitizer: the test and the library in one binary.  The two thin
# boundary files (posix.c: the interposed calls; real.c: the table of the
# system's functions) are built without instrumentation: TSan's own
# start-up calls mmap, which they interpose, before TSan can track anything.
# jemalloc is left out (TSan replaces malloc); buffers then come from mmap.
CC=${CC:-cc}
libs="-ldl -lpthread"
grep -q '^#define HAVE_LIBURING 1' "$top_builddir/config.h" && libs="$libs -luring"
if ! echo 'int main(void){return 0;}' >"$scratch/t.c" ||
	! $CC -fsanitize=thread "$scratch/t.c" -o "$scratch/t" 2>/dev/null || ! "$scratch/t"; then
	n=$((n + 1)); echo "ok $n # SKIP $CC cannot build or run -fsanitize=thread programs here"
	done_testing
fi
mkdir "$scratch/cfg"
sed 's/^#define HAVE_JEMALLOC 1$/\/* jemalloc: not under TSan *\//' "$top_builddir/config.h" >"$scratch/cfg/config.h"
F="-std=gnu11 -g -O1 -DHAVE_CONFIG_H -I$scratch/cfg -I$S/include -I$S/libffio"
tsan_src=$(ls "$S"/libffio/*.c | grep -v -e '/posix\.c$' -e '/real\.c$')
if $CC $F -c "$S/libffio/posix.c" -o "$scratch/posix.o" 2>"$scratch/cc.err" &&
	$CC $F -c "$S/libffio/real.c" -o "$scratch/real.o" 2>>"$scratch/cc.err" &&
	$CC $F -fsanitize=thread $tsan_src "$S"/libffio/guard/*.c "$S"/layers/*.c "$S"/layers/cache/*.c "$S/t/rel_threads.c" \
		"$scratch/posix.o" "$scratch/real.o" -o "$scratch/rel_threads_tsan" $libs 2>>"$scratch/cc.err"; then
	ok 0 "ThreadSanitizer build of the library and the test"
else
	sed 's/^/#   /' "$scratch/cc.err" | head -20
	ok 1 "ThreadSanitizer build of the library and the test"
	done_testing
fi
# Races already reported to their owners (the first frame of each access):
# the shared pool's state
# read without the pool lock (cache_pwrite, cache_pool_shrink; set in
# cache_pg_new);
# liburing's inline ring accessors (liburing.h): liburing maps and unmaps
# its rings with raw system calls TSan does not see, so a ring placed where
# a closed file's ring was looks shared (probably not a real race; the
# uring layer keeps one ring per file, used under the file's lock).
known='(cache_pwrite|cache_pg_new|cache_pool_shrink) .*layers/cache/[a-z]+\.c| .*/liburing\.h$'
for spec in '*.dat(cache:4k:8:1)' '*.dat(cache:64k:2:0, uring:4)' '*.dat(event.notrace, cache.shared:2k:16:1)'; do
	rm -rf "$scratch/w"; mkdir "$scratch/w"
	FF_IO_LOGFILE=/dev/null FF_IO_OPTS="$spec" TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
		"$scratch/rel_threads_tsan" "$scratch/w" 8 3000 >"$scratch/out" 2>"$scratch/err"
	st=$?
	sed 's/^/#   /' "$scratch/out"
	grep -q '^not ok' "$scratch/out" && st=1
	ok $((st == 1)) "ThreadSanitizer, $spec: data exact"
	races=$(grep -A1 -E '(Read|Write|Previous read|Previous write|Atomic read|Atomic write) of size' "$scratch/err" |
		grep '#0' | sed -e 's/^ *#0 //' -e 's/ (.*//' -e 's/:[0-9]*$//' | sort -u)
	if [ -z "$races" ]; then
		ok 0 "ThreadSanitizer, $spec: no report"
	elif ! echo "$races" | grep -v -E "$known" | grep -q .; then
		n=$((n + 1))
		echo "not ok $n - ThreadSanitizer, $spec: known races # TODO owners to fix: $(echo $races | tr '\n' ' ')"
	else
		echo "$races" | grep -v -E "$known" | sed 's/^/#   new race at: /'
		grep -E 'WARNING|#[0-4] ' "$scratch/err" | sed 's/^/#   /' | head -60
		ok 1 "ThreadSanitizer, $spec: no report"
	fi
done
done_testing
