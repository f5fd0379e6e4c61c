#!/bin/sh
# t/crash_kill.sh -- every byte a write returned for is in the file after
# the writer dies, whatever kills it, as with the kernel alone: writers
# (t/crash_kill, preloaded) make random writes, pwrites, writevs, appends
# and truncations and die of SIGTERM, SIGKILL, SIGABRT, SIGSEGV, SIGHUP,
# SIGXCPU, SIGINT, _exit and abort at a random call; in a forked child
# that never execs; as a process group (SIGTERM, SIGKILL after 5 s); in an
# fsync or an eviction while a slow write-back is in flight (the delay
# layer under the cache); and the guardian that keeps their cached bytes
# is killed while they write.  Each file is compared with the kernel's
# replay of the calls that returned (t/crash_kill.c says how).  Raw first
# (the kernel alone: must always pass), then over the cache stacks.
#
# CRASH_SEEDS=N runs N seeds per line (default 8; CRASH_SEEDS=1000 for a
# soak), from CRASH_SEED (default 1).  CRASH_STACKS='SPEC ...' (specs
# separated by |) replaces the list of stacks; "raw" means no ffio.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
prog=$top_builddir/t/crash_kill
[ -x "$prog" ] || skip_all "t/crash_kill not built"
: "${CRASH_SEEDS:=8}"
: "${CRASH_SEED:=1}"
CRASH_PRELOAD=$PRELOAD
export CRASH_PRELOAD
# In a sanitizer build, SIGSEGV ends the writer as it ends any process,
# not through the sanitizer's report and exit status.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export ASAN_OPTIONS
half=$(((CRASH_SEEDS + 1) / 2))
last=$((CRASH_SEED + CRASH_SEEDS - 1))
d=$scratch/run

tap() { # tap STATUS DESCRIPTION: 77 is a skip
	n=$((n + 1))
	case $1 in
	0) echo "ok $n - $2" ;;
	77) echo "ok $n # SKIP $2" ;;
	*) echo "not ok $n - $2"; failed=$((failed + 1)) ;;
	esac
}

# run SPEC DESCRIPTION MODE ARGS...: one line; the program's messages
# (# ...) before it, its last line (what was checked) in it.
run() {
	sp=$1 what=$2 mode=$3; shift 3
	rm -rf "$d"; mkdir "$d" || exit 1
	[ "$sp" = raw ] && sp=
	out=$(CRASH_SPEC=$sp "$prog" "$mode" "$d" "$@" 2>&1)
	st=$?
	printf '%s\n' "$out" | sed '$d'
	[ -f "$d/tally" ] && cat "$d/tally" >>"$scratch/tally"
	[ $st -ne 0 ] && stack_bad=$((stack_bad + 1))
	tap $st "[$name] $what: $(printf '%s\n' "$out" | tail -n 1)"
}

# the stack's last line: every case of it
stack_done() {
	read -r c f b <<EOF
$(awk '{ c += $1; f += $2; b += $3 } END { printf "%d %d %.1f", c, f, b / 1048576 }' "$scratch/tally")
EOF
	tap $stack_bad "[$name] all: $c cases, $f failed, $b MiB compared"
	rm -f "$scratch/tally"
}

seeds="seeds $CRASH_SEED-$last"
stacks=${CRASH_STACKS:-'raw|*.dat(cache:64k:8:2)|*.dat(cache.sieve:1m:16:2)|*.dat(cache:512:8:1)|*.dat(cache:1m:16:2, uring:64)'}
IFS_=$IFS
IFS='|'
set -- $stacks
IFS=$IFS_
for spec; do
	name=$spec
	[ "$name" != raw ] && { name=${spec#*(}; name=${name%)}; }
	stack_bad=0
	: >"$scratch/tally"
	for how in TERM KILL ABRT SEGV HUP XCPU INT; do
		run "$spec" "SIG$how at a random call, $seeds" kill "$how" "$CRASH_SEED" "$CRASH_SEEDS"
	done
	for how in _exit abort; do
		run "$spec" "$how() after a random call, $seeds" kill "$how" "$CRASH_SEED" "$CRASH_SEEDS"
	done
	for how in KILL TERM _exit; do
		run "$spec" "a forked child's death before exec ($how), then the parent's (SIGKILL), $half seeds" \
			fork "$how" "$CRASH_SEED" "$half"
	done
	run "$spec" "SIGTERM to a process group of two writers, $half seeds" job "$CRASH_SEED" "$half"
	if [ "$spec" = raw ]; then
		tap 77 "[$name] the guardian killed in mid-run: no guardian without ffio"
	else
		run "$spec" "the guardian killed in mid-run, the writer exits normally, $half seeds" \
			guardian "$CRASH_SEED" "$half"
	fi
	stack_done
done

# A write-back in flight: the delay layer makes each request below the
# cache take 20 ms; the writer dies in its fsync, or while it writes all
# over 4 MiB through a cache of four 64 KiB pages (evicting at each call).
if [ -z "$CRASH_STACKS" ]; then
	spec='*.dat(cache:64k:4:1, delay:20ms)'
	name='cache:64k:4:1, delay:20ms'
	stack_bad=0
	: >"$scratch/tally"
	for how in KILL TERM ABRT; do
		run "$spec" "SIG$how inside an fsync, $half seeds" fsync "$how" "$CRASH_SEED" "$half"
	done
	run "$spec" "SIGKILL while evicting (40 calls at most), $half seeds" kill KILL "$CRASH_SEED" "$half" 40
	stack_done
	name=raw
	stack_bad=0
	: >"$scratch/tally"
	run raw "SIGKILL inside an fsync, $half seeds" fsync KILL "$CRASH_SEED" "$half"
	stack_done
fi
done_testing
