# t/rel_lib.sh -- shared by the reliability scripts: TAP output, a scratch
# directory removed at exit, and the preloaded tool.  Sourced, not run.
n=0
failed=0
ok() { # ok CONDITION-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got '$1', expected '$2'"; fi
}
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
done_testing() { echo "1..$n"; [ "$failed" -eq 0 ]; exit $?; }
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${FFIO_LIB:=$top_builddir/.libs/libffio.so}"
[ -f "$FFIO_LIB" ] || skip_all "libffio.so not built ($FFIO_LIB)"
TOOL=$top_builddir/t/rel_tool
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ffio-rel.XXXXXX") || exit 1
[ -n "$FFIO_KEEP_TEST_FILES" ] || trap 'rm -rf "$scratch"' EXIT
# A library built with --enable-sanitizers needs its sanitizer runtime
# first in the preload list; leak reports of the judged programs are not ours.
PRELOAD=$FFIO_LIB
san=$(ldd "$FFIO_LIB" 2>/dev/null | awk '/libasan|libubsan/ { printf "%s ", $3 }')
if [ -n "$san" ]; then
	PRELOAD="$san$FFIO_LIB"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi
# pre SPEC CMD...: CMD preloaded with FF_IO_OPTS=SPEC
pre() { spec=$1; shift; FF_IO_OPTS=$spec LD_PRELOAD=$PRELOAD "$@"; }
