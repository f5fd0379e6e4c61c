#!/bin/sh
# t/rel_lifecycle.sh -- dirty cached data across the life of a process:
# exit, exit from a thread, _exit/abort/SIGKILL/SIGTERM (lost, like any
# user-space buffer), the opt-in flush on SIGTERM/SIGINT
# (FF_IO_FLUSH_ON_SIGNAL=1), fork (the parent's data written once, the
# child writes nothing), exec/posix_spawn/vfork (the new program sees the
# data) and daemon(3).  Over a plain cache and a cache over uring.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
command -v flock >/dev/null || skip_all "flock(1) not installed"
N=100000
f=$scratch/life.dat
for spec in '*.dat(cache:64k:8:0)' '*.dat(cache.sieve:4k:64:0, uring:8)'; do
	s=${spec#*(}; s=${s%)}
	for how in exit thread; do
		rm -f "$f"; pre "$spec" "$TOOL" exit "$f" $N $how
		ok $? "[$s] $how with unflushed data: exit status 0"
		"$TOOL" check "$f" $N >/dev/null; ok $? "[$s] $how: all $N bytes on disk, exact"
	done
	for how in _exit abort kill term; do
		rm -f "$f"; (pre "$spec" "$TOOL" exit "$f" $N $how) 2>/dev/null
		st=$?
		case $how in _exit) want=0 ;; abort) want=134 ;; kill) want=137 ;; term) want=143 ;; esac
		is $st $want "[$s] $how: the process ends as it would without ffio"
		"$TOOL" prefix "$f" $N >"$scratch/out"
		ok $? "[$s] $how: what was not yet flushed is lost (documented); no wrong byte: $(cat "$scratch/out")"
	done
	for how in term int; do
		rm -f "$f"; FF_IO_FLUSH_ON_SIGNAL=1 pre "$spec" "$TOOL" exit "$f" $N $how
		st=$?
		case $how in term) want=143 ;; int) want=130 ;; esac
		is $st $want "[$s] FF_IO_FLUSH_ON_SIGNAL=1, SIG$(echo $how | tr a-z A-Z): ended by that signal"
		"$TOOL" check "$f" $N >/dev/null; ok $? "[$s] FF_IO_FLUSH_ON_SIGNAL=1, $how: all $N bytes flushed, exact"
	done
	# A forked child's SIGTERM is its own: it flushes and ends by it, the
	# parent lives on (rounds: the two flusher threads once raced for it).
	for r in 1 2 3 4; do
		if [ -n "$san" ]; then
			# The sanitizer's allocator is not fork-safe: a child forked
			# while the parent's flusher thread starts (and allocates)
			# can inherit its lock held, and wait for it for ever.
			for what in "ends by it" "bytes flushed"; do
				n=$((n + 1))
				echo "ok $n # SKIP [$s] forked child's SIGTERM (round $r), $what: AddressSanitizer's allocator across fork"
			done
			continue
		fi
		rm -f "$f"; FF_IO_FLUSH_ON_SIGNAL=1 pre "$spec" timeout 30 "$TOOL" childterm "$f" $N
		ok $? "[$s] FF_IO_FLUSH_ON_SIGNAL=1, a forked child's SIGTERM (round $r): the child ends by it, the parent waits"
		"$TOOL" check "$f" $N >/dev/null; ok $? "[$s] FF_IO_FLUSH_ON_SIGNAL=1, forked child (round $r): all $N bytes flushed"
	done
	rm -f "$f"; pre "$spec" "$TOOL" fork "$f" $N
	ok $? "[$s] fork with dirty data: child exits normally"
	"$TOOL" check2 "$f" $N 1 >/dev/null
	ok $? "[$s] fork: the parent's later data stands (the child wrote nothing)"
	for how in exec spawn vfork; do
		rm -f "$f"; pre "$spec" "$TOOL" exec "$f" $N $how >/dev/null
		ok $? "[$s] $how: the new program reads all $N bytes"
	done
	rm -f "$f" "$scratch/lock"; pre "$spec" "$TOOL" daemon "$f" $N "$scratch/lock"
	ok $? "[$s] daemon(3): the parent returns"
	flock "$scratch/lock" true
	"$TOOL" check "$f" $((2 * N)) >/dev/null
	ok $? "[$s] daemon(3): data before and after it written once, exact"
done
done_testing
