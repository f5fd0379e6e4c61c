#!/bin/sh
# t/bench_progio.sh -- runs Program I and Program II (bench/progio) once in
# every version at tiny sizes on 2 processes and checks that each reports
# a correct read-back; and that a deliberately corrupted byte is caught.
progio=$top_builddir/bench/progio
ffapi=$top_builddir/bench/progio-ffapi
if [ -z "$MPIEXEC" ] || [ ! -x "$progio" ] || [ ! -x "$ffapi" ]; then
	echo "1..0 # SKIP MPI not configured (bench/progio not built)"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_progio.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
spec="cache:64k:4:1"
n=0 failed=0

# check DESCRIPTION EXPECTED-EXIT EXPECTED-RESULT-FIELDS -- COMMAND...
check() {
	desc=$1 want_rc=$2 want=$3
	shift 4
	"$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	line=$(grep '^RESULT ' "$dir/out")
	n=$((n + 1))
	ok=1
	[ "$rc" = "$want_rc" ] || ok=0
	for f in $want; do
		case " $line " in *" $f "*) ;; *) ok=0 ;; esac
	done
	if [ $ok = 1 ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		echo "# exit $rc (expected $want_rc); wanted fields: $want"
		echo "# result: $line"
		sed 's/^/# /' "$dir/err" | head -n 10
		failed=$((failed + 1))
	fi
	# no file left behind
	n=$((n + 1))
	left=$(find "$dir" -name '*.dat')
	if [ -z "$left" ]; then
		echo "ok $n - $desc: files removed"
	else
		echo "not ok $n - $desc: files left: $left"
		failed=$((failed + 1))
	fi
}

echo "1..26"
tiny="-s 64k -r 4k -i 2 -d $dir"
for p in 1 2; do
	fields="prog=$p procs=2 size=65536 iters=2 req=4096 flush=sync wrong=0 verify=ok"
	check "Program $p, POSIX direct" 0 "version=posix $fields" -- \
		$MPIEXEC -n 2 "$progio" -p $p -v posix $tiny
	check "Program $p, MPI-IO direct" 0 "version=mpiio $fields" -- \
		$MPIEXEC -n 2 "$progio" -p $p -v mpiio $tiny
	check "Program $p, POSIX via ffio ($spec)" 0 "version=posix $fields" -- \
		$MPIEXEC -n 2 env LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="progio*.dat($spec)" "$progio" -p $p -v posix $tiny
	check "Program $p, ffio API ($spec)" 0 "version=ffapi $fields" -- \
		$MPIEXEC -n 2 "$ffapi" -p $p -v ffapi -S "$spec" $tiny
	check "Program $p, MPI-IO via ffio ($spec)" 0 "version=mpiio $fields" -- \
		$MPIEXEC -n 2 env LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="progio*.dat($spec)" "$progio" -p $p -v mpiio $tiny
done
# The other flush mode: close and reopen per phase.
fields="prog=2 procs=2 size=65536 iters=2 req=4096 flush=close wrong=0 verify=ok"
check "Program 2, POSIX via ffio ($spec), close per phase" 0 "version=posix $fields" -- \
	$MPIEXEC -n 2 env LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="progio*.dat($spec)" "$progio" -p 2 -v posix $tiny --flush close
check "Program 2, MPI-IO via ffio ($spec), close per phase" 0 "version=mpiio $fields" -- \
	$MPIEXEC -n 2 env LD_PRELOAD="$FFIO_LIB" FF_IO_OPTS="progio*.dat($spec)" "$progio" -p 2 -v mpiio $tiny --flush close
# The check itself: one wrong byte is reported and fails the run.
check "a corrupted byte is caught (Program 2, POSIX)" 1 "wrong=1 verify=FAILED" -- \
	$MPIEXEC -n 2 "$progio" -p 2 -v posix $tiny --corrupt
exit $((failed > 0))
