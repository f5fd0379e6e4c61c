#!/bin/sh
# t/rel_fuzz.sh -- a fixed-time libFuzzer run (FFIO_FUZZ_SECONDS, default
# 30) of the FF_IO_OPTS parser and pattern matcher (t/fuzz_spec.c) with
# AddressSanitizer and UndefinedBehaviorSanitizer, from the seed corpus
# t/fuzz/spec/.  Skipped with a message when clang cannot build
# -fsanitize=fuzzer programs.  Reports executions and crashes.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
S=$top_srcdir
FUZZ_CC=${FUZZ_CC:-clang}
secs=${FFIO_FUZZ_SECONDS:-30}
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$scratch/f.c"
if ! command -v "$FUZZ_CC" >/dev/null || ! "$FUZZ_CC" -fsanitize=fuzzer,address "$scratch/f.c" -o "$scratch/f" 2>/dev/null; then
	skip_all "$FUZZ_CC with -fsanitize=fuzzer is not available"
fi
libs="-ldl -lpthread"
grep -q '^#define HAVE_LIBURING 1' "$top_builddir/config.h" && libs="$libs -luring"
# ASan replaces malloc: leave jemalloc out.  The harness needs the parser,
# the layer tables and the core, not the interposed POSIX calls (nor
# setrlimit and ioctl, which libFuzzer and its sanitizers call).
mkdir "$scratch/cfg"
sed 's/^#define HAVE_JEMALLOC 1$/\/* jemalloc: not under ASan *\//' "$top_builddir/config.h" >"$scratch/cfg/config.h"
src=$(ls "$S"/libffio/*.c | grep -v -e '/posix\.c$' -e '/aio\.c$' -e '/rlimit\.c$' -e '/ioctl\.c$')
if "$FUZZ_CC" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DFFIO_LIBFUZZER -DHAVE_CONFIG_H -I"$scratch/cfg" -I"$S/include" -I"$S/libffio" \
	$src "$S"/libffio/guard/*.c "$S"/layers/*.c "$S"/layers/cache/*.c "$S/t/fuzz_spec.c" -o "$scratch/fuzz_spec" $libs 2>"$scratch/cc.err"; then
	ok 0 "libFuzzer build of the parser harness ($FUZZ_CC, ASan + UBSan)"
else
	grep -E 'error' "$scratch/cc.err" | sed 's/^/#   /' | head -20
	ok 1 "libFuzzer build of the parser harness ($FUZZ_CC, ASan + UBSan)"
	done_testing
fi
mkdir "$scratch/corpus"
(cd "$scratch" && ./fuzz_spec -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
	-dict="$S/t/fuzz/spec.dict" corpus "$S/t/fuzz/spec" >"$scratch/fuzz.out" 2>&1)
st=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$scratch/fuzz.out")
grep -E '^(stat::|Done|==[0-9]+==ERROR|SUMMARY|fuzz_spec:)' "$scratch/fuzz.out" | sed 's/^/#   /'
[ $st -ne 0 ] && tail -30 "$scratch/fuzz.out" | sed 's/^/#   /'
ok $st "libFuzzer ${secs}s: ${runs:-?} executions, no crash, leak or broken message"
[ -n "$runs" ] && [ "$runs" -gt 0 ]; ok $? "the fuzzer ran (${runs:-0} executions)"
done_testing
