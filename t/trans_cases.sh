#!/bin/sh
# t/trans_cases.sh -- the kernel as the oracle for everyday situations
# (t/trans_cases.c: closefrom, fdopen/fclose, a second open, O_APPEND across
# processes, offsets shared with a forked child, O_SYNC then abort, _exit,
# system/popen/posix_spawn, mmap, a descriptor number reused, stdio opened
# first, stdout redirected to a managed file, threads, times set on a file
# with writes cached, cp -p, RLIMIT_FSIZE, ioctl, descriptor numbers and
# RLIMIT_NOFILE, stat's times and blocks after cached writes, record
# locks, a child's message to its parent, shared memory guarded by a
# record lock, signal handlers as set, a crash report a fatal signal's
# handler writes, a timer's handler logging during a long call, a lock
# wait left by an alarm's jump, files in /proc and /sys, a file
# another process grows and cuts, the list in /proc/self/fd, what the
# process reads after another one tells it of a change, a report a
# handler writes on a small alternate stack, scripts written and run at
# once): each case
# runs raw, then preloaded over several stacks, and must print the same
# lines.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
prog=$top_builddir/t/trans_cases
[ -x "$prog" ] || skip_all "t/trans_cases not built"
export FF_IO_LOGFILE="$scratch/log"
# Every stack also matches the files the kernel makes (case kernel_files).
kernel='/proc/*(cache:4k:2:1) /sys/*(cache:64k:8:2)'
for c in $("$prog" list); do
	mkdir -p "$scratch/raw" && "$prog" "$c" "$scratch/raw" >"$scratch/raw.out" 2>&1
	for spec in '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:64k:8:2)' \
		'*.dat(cache:64k:8:2, uring:8)'; do
		mkdir -p "$scratch/ffio" && pre "$spec $kernel" "$prog" "$c" "$scratch/ffio" >"$scratch/ffio.out" 2>&1
		if cmp -s "$scratch/raw.out" "$scratch/ffio.out"; then
			ok 0 "$c over $spec: as the kernel alone"
		else
			ok 1 "$c over $spec: as the kernel alone"
			diff "$scratch/raw.out" "$scratch/ffio.out" | sed 's/^/#   /'
		fi
	done
done
done_testing
