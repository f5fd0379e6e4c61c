#!/bin/sh
# t/uring_model.sh -- the cache's model-based random test (t/cache_model)
# run over uring stacks: tiny queue depths that force back-pressure,
# .direct, .sieve, write-through, and the forced fallback to sys.  Each
# run of the model is one TAP result here; its own lines are diagnostics.
model="${top_builddir:-.}/t/cache_model"
if [ ! -x "$model" ]; then
	echo "1..0 # SKIP t/cache_model not built"
	exit 0
fi
echo "1..4"
run() { # N DESCRIPTION COMMAND...
	n=$1 what=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok'; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
	fi
}
run 1 "model over uring stacks (depth 64, 4, 2, 1; direct; sieve; wt)" "$model" \
	"cache:4k:8:2, uring:64" "cache:16k:4:4, uring:1" "cache:4k:8:2, uring:2" \
	"cache.sieve:8k:4:2, uring:4" "cache.direct:4k:8:2, uring.direct:2" \
	"cache.wt:4k:4:1, uring:1"
run 2 "model over uring with io_uring disabled (sys behaviour)" \
	env FF_IO_URING_DISABLE=1 FF_IO_LOGFILE=/dev/null "$model" "cache:4k:8:2, uring:4" "cache:8k:4:2, uring:1"
# Longer runs at small depths: the write-behind and split paths meet old
# dirty pages only after many steps (a bug of the split needed ~100 seeds).
run 3 "model over uring, 150 seeds each at depth 1 and 2" env FFIO_MODEL_SEEDS=150 "$model" \
	"cache:4k:8:2, uring:1" "cache.sieve:512:4:1, uring:2"
# Files 16 times larger: writes up to 1.1 MB and flushed runs of several
# MiB, cut into pieces of 512 KiB below (SQEs over uring, calls over sys).
run 4 "model at scale 16 (requests below cut into pieces), over uring and sys" \
	env FFIO_MODEL_SCALE=16 FFIO_MODEL_SEEDS=6 "$model" "cache:1m:4:2, uring:2" \
	"cache.sieve:256k:8:2, uring:1" "cache:256k:4:1, sys" "cache.sieve:1m:3:1, sys"
