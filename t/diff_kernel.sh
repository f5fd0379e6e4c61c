#!/bin/sh
# t/diff_kernel.sh -- the differential test (t/diff_kernel.c): the program
# without any preload (the harness must agree with itself), then preloaded
# (LD_PRELOAD=$FFIO_LIB) with FF_IO_OPTS empty (nothing managed: must pass)
# and over several stacks.  One test point a run; the program's own TAP
# lines (a seed's trace on a difference) follow it as diagnostics.
# DIFF_KERNEL_ARGS replaces the fixed seeds, e.g. "-t 600" for a soak.
t=$(cd "${top_builddir:-.}/t" && pwd) || exit 1
lib=${FFIO_LIB:?FFIO_LIB is not set}
[ -f "$lib" ] || { echo "1..0 # SKIP $lib not built"; exit 0; }
prog=$t/diff_kernel
[ -x "$prog" ] || prog=$t/.libs/diff_kernel
out=$(mktemp /tmp/ffio-diff-out-XXXXXX) || exit 1
trap 'rm -f "$out"' EXIT

n=0
failed=0
run() { # description, command...
	d=$1; shift
	start=$(date +%s.%N)
	"$@" $DIFF_KERNEL_ARGS >"$out" 2>&1
	st=$?
	secs=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
	n=$((n + 1))
	if [ $st -eq 0 ]; then
		echo "ok $n - $d (${secs} s)"
	else
		failed=$((failed + 1))
		echo "not ok $n - $d (${secs} s, exit $st)"
	fi
	grep -v '^ok ' "$out" | sed 's/^/#   /'
}

# Every kind, then the kinds that keep a file cached (fork, mmap and stdio
# make it pass through to the kernel), with more steps.  .sieve fills holes
# with the zeros it knows, so the file system allocates them: SEEK_DATA and
# SEEK_HOLE are left out there (ffio-cache(7)).
cached=open,close,dup,dup2,write,read,seek,hole,trunc,stat,sync,fcntl,rename,closerange,spawn,peer,thread,rdonly,rawfd
echo "1..10"
run "no preload: the harness agrees with the kernel" env -u LD_PRELOAD -u FF_IO_OPTS "$prog"
run "preloaded, FF_IO_OPTS empty" env FF_IO_OPTS= LD_PRELOAD="$lib" "$prog"
for spec in '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:64k:8:2)' \
	'*.dat(cache:64k:8:2, uring:8)'; do
	case $spec in
	*sieve*)
		every=open,close,dup,dup2,write,read,seek,trunc,stat,sync,fcntl,rename,fork,mmap,closerange,stdio,spawn,peer,thread,rdonly,rawfd
		kinds=$(echo "$cached" | sed 's/,hole//') ;;
	*) every= kinds=$cached ;;
	esac
	run "preloaded, $spec" env FF_IO_OPTS="$spec" LD_PRELOAD="$lib" "$prog" ${every:+-o "$every"}
	run "preloaded, $spec, the kinds that keep it cached, 600 steps" \
		env FF_IO_OPTS="$spec" LD_PRELOAD="$lib" "$prog" -k 600 -o "$kinds"
done
[ $failed -eq 0 ]
