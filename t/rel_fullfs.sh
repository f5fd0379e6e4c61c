#!/bin/sh
# t/rel_fullfs.sh -- write-behind errors from a real file system: a 1 MiB
# tmpfs filled through the cache (ENOSPC), in a private mount namespace,
# and RLIMIT_FSIZE (EFBIG, SIGXFSZ ignored).  The error must reach the
# program at a write, fsync or close; the file must hold only bytes the
# program wrote (a prefix of what it wrote).
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
SPECS='*.dat(cache:64k:8:0) *.dat(cache.sieve:4k:16:1) *.dat(cache:64k:4:0,uring:8) *.dat(event.notrace,cache:16k:4:0,event.notrace)'
run_fill() { # run_fill SPEC PATH MAX WANT-ERRNO LABEL
	out=$(FF_IO_LOGFILE=/dev/null pre "$1" "$TOOL" fill "$2" 4096 "$3")
	ok $? "[$5] $1: the program ran to its end ($out)"
	case $out in *"$4"*) r=0 ;; *) r=1 ;; esac
	ok $r "[$5] $1: $4 reached the program"
	accepted=${out#accepted }; accepted=${accepted%% *}
	# up to one more chunk: the write that failed may have been taken in part
	"$TOOL" prefix "$2" $((accepted + 4096)) >"$scratch/chk"
	ok $? "[$5] $1: the file holds only bytes written (accepted $accepted): $(cat "$scratch/chk")"
}
if [ -z "$REL_IN_NS" ]; then
	if unshare -m true 2>/dev/null; then
		REL_IN_NS=1 exec unshare -m sh "$0" "$@"
	fi
	REL_IN_NS=none
fi
# RLIMIT_FSIZE: 300000 bytes
for spec in $SPECS; do
	REL_FSIZE=300000 run_fill "$spec" "$scratch/big.dat" 1048576 EFBIG fsize
done
out=$(REL_FSIZE=300000 "$TOOL" fill "$scratch/raw.dat" 4096 1048576)
is "$out" "accepted 300000 writes 75 write EFBIG fsync ok close ok" "raw: the same limit without ffio"
# ENOSPC: a 1 MiB tmpfs
if [ "$REL_IN_NS" = 1 ] && mkdir "$scratch/mnt" && mount -t tmpfs -o size=1m ffio-rel "$scratch/mnt" 2>/dev/null; then
	for spec in $SPECS; do
		rm -f "$scratch/mnt"/*
		run_fill "$spec" "$scratch/mnt/full.dat" 4194304 ENOSPC tmpfs
	done
	umount "$scratch/mnt"
else
	n=$((n + 1)); echo "ok $n # SKIP no private mount namespace or tmpfs mount not allowed here"
fi
done_testing
