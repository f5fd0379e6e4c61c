# t/tap.sh -- sourced by the benchmark harness's shell tests: TAP results
# counted, and a temporary directory removed at exit.
#   tap_begin NAME     $dir, a new directory under $TMPDIR (NAME.XXXXXX)
#   ok STATUS TEXT     "ok N - TEXT" when STATUS is 0, else "not ok N - TEXT"
#   tap_end            exits 1 if any result was "not ok", else 0
n=0 failed=0
tap_begin() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	trap 'rm -rf "$dir"' EXIT
}
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tap_end() {
	exit $((failed > 0))
}
