#!/bin/sh
# t/posix_ffio_run.sh -- bin/ffio-run: --help, -o/-l, the preload reaching
# an unlinked program (exact event counts), and under mpiexec when MPI is
# available (one log per rank through %r); an MPICH program gets the glue
# of a build tree's library, and one whose glue is missing is refused
# (exit 2, a message), never run without it.
b=$(cd "${top_builddir:-.}" && pwd) || exit 1
run=$b/bin/ffio-run
prog=$b/t/posix_calls_plain
export FFIO_LIB="${FFIO_LIB:?FFIO_LIB is not set}"
[ -f "$FFIO_LIB" ] || { echo "1..0 # SKIP $FFIO_LIB not built"; exit 0; }

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
count() { awk -v op="$1" '$1 == op && $2 ~ /^[0-9]+$/ { print $2 }' "$2"; }
counts_ok() { [ "$(count write "$1")" = 4 ] && [ "$(count read "$1")" = 3 ] && [ "$(count open "$1")" = 1 ]; }

echo "1..8"
dir=$(mktemp -d /tmp/ffio-run-XXXXXX) || exit 1

"$run" --help >"$dir/help" 2>&1 && grep -q 'usage: ffio-run' "$dir/help" && ok "--help" || notok "--help"
"$run" >/dev/null 2>&1 && notok "no program: usage error" || ok "no program: usage error"

(cd "$dir" && "$run" -o '*.dat(event.summary, sys)' -l "$dir/log" -- "$prog" --count) &&
	ok "ffio-run -o -l runs the program" || notok "ffio-run -o -l runs the program"
counts_ok "$dir/log" && ok "the preloaded library counted 4 writes, 3 reads, 1 open" ||
	{ notok "the preloaded library counted 4 writes, 3 reads, 1 open"; sed 's/^/# /' "$dir/log"; }

if [ -n "${MPIEXEC:-}" ] && command -v "${MPIEXEC%% *}" >/dev/null 2>&1; then
	export dir prog
	$MPIEXEC -n 2 "$run" -o '*.dat(event.summary, sys)' -l "$dir/mpi.%r" -- \
		sh -c 'd=$dir/rank$$ && mkdir "$d" && cd "$d" && exec "$prog" --count' &&
		ok "mpiexec -n 2 ffio-run" || notok "mpiexec -n 2 ffio-run"
	counts_ok "$dir/mpi.0" && counts_ok "$dir/mpi.1" && ok "one log per rank with exact counts" ||
		{ notok "one log per rank with exact counts"; ls "$dir" | sed 's/^/# /'; }
else
	echo "ok 5 # SKIP no MPI"
	echo "ok 6 # SKIP no MPI"
fi
mpiprog=$b/bench/mpiio_noncontig # an MPICH program (no arguments: it says so and stops)
if [ -x "$mpiprog" ] && ldd "$mpiprog" 2>/dev/null | grep -q 'libmpich\.so'; then
	out=$(env -u FFIO_MPI_LIB FFIO_LIB="$b/.libs/libffio.so" "$run" -o '*.none(sys)' "$mpiprog" 2>&1)
	case $out in
	*"bad arguments"*) ok "an MPICH program, the build tree's library: its glue found, the program runs" ;;
	*) notok "an MPICH program, the build tree's library: its glue found, the program runs"; echo "$out" | sed 's/^/# /' ;;
	esac
	mkdir "$dir/lib" && ln -s "$b/.libs/libffio.so" "$dir/lib/libffio.so"
	out=$(env -u FFIO_MPI_LIB FFIO_LIB="$dir/lib/libffio.so" "$run" -o '*.none(sys)' "$mpiprog" 2>&1)
	rc=$?
	case $rc:$out in
	2:*"uses MPICH, but ffio's glue for it ($dir/lib/libffio_mpi.so) is not there"*FFIO_MPI_LIB*)
		case $out in
		*"bad arguments"*) notok "no glue: refused, exit 2 (the program ran)" ;;
		*) ok "no glue: refused, exit 2, the glue and FFIO_MPI_LIB named, the program not run" ;;
		esac ;;
	*) notok "no glue: refused, exit 2, the glue and FFIO_MPI_LIB named (exit $rc)"; echo "$out" | sed 's/^/# /' ;;
	esac
else
	echo "ok 7 # SKIP no MPICH program built"
	echo "ok 8 # SKIP no MPICH program built"
fi
rm -rf "$dir"
[ $failed -eq 0 ]
