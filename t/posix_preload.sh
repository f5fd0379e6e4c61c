#!/bin/sh
# t/posix_preload.sh -- the POSIX interposition with the library preloaded
# (LD_PRELOAD=$FFIO_LIB) into programs not linked with it: the call test
# built plain, with 64-bit offsets and fortified, under several specs
# (cache, sys only, malformed); exact event counts; and the symbol
# versions those programs reference (fstat64@GLIBC_2.33, fcntl64@GLIBC_2.28,
# the fortified __read_chk / __pread64_chk).
t=$(cd "${top_builddir:-.}/t" && pwd) || exit 1
lib=${FFIO_LIB:?FFIO_LIB is not set}
[ -f "$lib" ] || { echo "1..0 # SKIP $lib not built"; exit 0; }

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description, command...
	d=$1; shift
	if out=$("$@" 2>&1); then ok "$d"; else notok "$d"; echo "$out" | sed 's/^/# /'; fi
}

echo "1..13"

run() { # program spec [env...]
	prog=$1 spec=$2; shift 2
	env "$@" LD_PRELOAD="$lib" "$t/$prog" "$spec"
}
for prog in posix_calls_plain posix_calls_plain64 posix_calls_plainfort; do
	check "$prog preloaded, cache stack" run $prog '*.dat(event.summary, cache:4k:4:1, sys)'
done
check "posix_calls_plain preloaded, sys only" run posix_calls_plain '*.dat(sys)'
check "posix_calls_plain64 preloaded, event over cache over event" \
	run posix_calls_plain64 '*.dat(event.summary, cache:1k:2:1, event.summary, sys)'
check "posix_calls_plain preloaded, malformed spec: message and correct data" \
	run posix_calls_plain '*.dat(cache:4k:4:1, sys' FFIO_POSIX_TEST_MALFORMED=1

# Exact counts of the event layer for a known sequence of calls.
dir=$(mktemp -d /tmp/ffio-count-XXXXXX) || exit 1
if (cd "$dir" && FF_IO_OPTS='*.dat(event.summary, sys)' FF_IO_LOGFILE="$dir/log" \
	LD_PRELOAD="$lib" "$t/posix_calls_plain" --count); then
	ok "count program ran preloaded"
else
	notok "count program ran preloaded"
fi
count() { awk -v op="$1" '$1 == op && $2 ~ /^[0-9]+$/ { print $2 }' "$dir/log"; }
[ "$(count open)" = 1 ] && [ "$(count close)" = 1 ] && ok "event: 1 open, 1 close" ||
	{ notok "event: 1 open, 1 close"; sed 's/^/# /' "$dir/log"; }
[ "$(count write)" = 4 ] && ok "event: exactly 4 writes" || notok "event: exactly 4 writes (got '$(count write)')"
[ "$(count read)" = 3 ] && ok "event: exactly 3 reads" || notok "event: exactly 3 reads (got '$(count read)')"
rm -rf "$dir"

# The names the unlinked programs reference, with their versions.
syms() { nm -D "$t/$1" 2>/dev/null || nm -D "$t/.libs/$1"; }
if command -v nm >/dev/null 2>&1; then
	syms posix_calls_plain64 | grep -q 'fstat64@GLIBC_2.33' && ok "64-bit build references fstat64@GLIBC_2.33" ||
		notok "64-bit build references fstat64@GLIBC_2.33"
	syms posix_calls_plain64 | grep -q 'fcntl64@GLIBC_2.28' && ok "64-bit build references fcntl64@GLIBC_2.28" ||
		notok "64-bit build references fcntl64@GLIBC_2.28"
	f=$(syms posix_calls_plainfort)
	echo "$f" | grep -q '__read_chk' && echo "$f" | grep -q '__pread64_chk' &&
		echo "$f" | grep -q '__open64_2' &&
		ok "fortified build references __read_chk, __pread64_chk, __open64_2" ||
		notok "fortified build references __read_chk, __pread64_chk, __open64_2"
else
	for i in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP nm not installed"; done
fi
[ $failed -eq 0 ]
