#!/bin/sh
# t/judges_python.sh -- Python's own standard-library tests as a judge of
# ffio's transparency (make check-judges; too slow for make check).  Each
# module (test_os, test_fileio, test_io, test_tempfile, test_subprocess,
# test_mmap, test_posix, test_pathlib, test_shutil, test_fileinput,
# test_gzip, test_tarfile, test_zipfile, test_mailbox, test_dbm_dumb,
# test_largefile, test_logging, test_signal, test_threadsignals,
# test_multiprocessing_fork, test_support, test_fcntl, test_file, test_bz2,
# test_lzma, test_shelve, test_dbm, test_py_compile, test_zipimport,
# test_pty, test_csv, test_univnewlines, test_threading, test_faulthandler) runs first without ffio, then preloaded
# under each stack below with every file matched ('*'); a module passes
# under ffio when it passes without.  A module that runs past its time
# limit (a hang) fails.
# On a failure the failing tests and the key lines of their output are
# shown as TAP comments; the whole output of every run is kept under
# t/judges-logs/ in the build tree, and t/judges-logs/summary.txt has one
# line per module and stack.
# Needs Debian's libpython3.11-testsuite (python3 -m test).
#   FFIO_PYTHON              the interpreter (default /usr/bin/python3)
#   FFIO_JUDGE_MODULES       the modules (default: those above)
#   FFIO_JUDGE_TIMEOUT       seconds a module may take (default 900)
#   FFIO_JUDGE_TEST_TIMEOUT  seconds one test may take (regrtest --timeout,
#                            which names the test that hangs; default 300)
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
py=${FFIO_PYTHON:-/usr/bin/python3}
modules=${FFIO_JUDGE_MODULES:-test_os test_fileio test_io test_tempfile test_subprocess test_mmap test_posix \
test_pathlib test_shutil test_fileinput test_gzip test_tarfile test_zipfile test_mailbox test_dbm_dumb \
test_largefile test_logging test_signal test_threadsignals test_multiprocessing_fork test_support \
test_fcntl test_file test_bz2 test_lzma test_shelve test_dbm test_py_compile test_zipimport test_pty test_csv \
test_univnewlines test_threading test_faulthandler}
limit=${FFIO_JUDGE_TIMEOUT:-900}
test_limit=${FFIO_JUDGE_TEST_TIMEOUT:-300}
[ -x "$py" ] || skip_all "$py not installed"
"$py" -c 'import test.libregrtest, test.test_os' 2>/dev/null ||
	skip_all "Python's test suite not installed for $py (Debian: libpython3.11-testsuite)"
command -v timeout >/dev/null || skip_all "timeout (coreutils) not installed"

logs=$top_builddir/t/judges-logs
rm -rf "$logs" && mkdir -p "$logs" || exit 1
summary=$logs/summary.txt
printf '%-16s %-28s %-8s %s\n' module stack result seconds >"$summary"
# The tests' own temporary files go to the scratch directory (removed at exit).
TMPDIR=$scratch
export TMPDIR
unset FF_IO_OPTS LD_PRELOAD

# run LOG [VAR=VALUE...]: run the module $m, its output (through a pipe:
# never a file ffio might hold) in LOG, its exit status in LOG.rc and its
# duration in LOG.time.  timeout runs it in a process group of its own;
# what is left of that group at the end (a forked child stuck where the
# test left it, holding the pipe open) is killed.
run() {
	log=$1; shift
	start=$(date +%s)
	{ env "$@" timeout -k 10 "$limit" "$py" -m test --timeout "$test_limit" -v "$m" </dev/null 2>&1 &
	  pid=$!
	  wait $pid
	  echo $? >"$log.rc"
	  kill -s KILL -- "-$pid" 2>/dev/null; } | cat >"$log"
	echo $(($(date +%s) - start)) >"$log.time"
}

# key LOG: the failing tests and the lines that tell why, as TAP comments:
# each test reported FAIL or ERROR (its verdict may come lines after its
# name, past what ffio printed), the test running when the module crashed
# or hung, and the most frequent error and ffio lines.
key() { (
	LC_ALL=C # file names in the output need not be UTF-8
	export LC_ALL
	{
		awk '/^test[A-Za-z0-9_]* \(/ { name = $1 " " $2 }
		     /(^|\.\.\. )(FAIL|ERROR)$/ && name != "" { print $NF ": " name }
		     /^test .* crashed/ { print; crash = 1 }
		     crash == 1 && /File ".*\/test_[a-z0-9_]*\.py", line [0-9]*, in / {
			print "  crashed in:" $0; crash = 2 }
		     END { if (name != "") print "last test reported: " name }' "$1" | uniq | head -40
		grep -aE '^0:[0-9:]+ .* (failed|crashed)' "$1" | head -3
		# regrtest --timeout: faulthandler's dump of the test that hung
		grep -a -A12 '^Timeout (' "$1" | grep -aE '^Timeout|File .*test_' | head -6
		grep -aE '^[A-Za-z]*(Error|Exception)(: |$)' "$1" | sort | uniq -c | sort -rn | head -6
		grep -ao 'ffio: .*' "$1" | sed 's/^ffio: [^ ]*: data written/ffio: FILE: data written/' |
			sort | uniq -c | sort -rn | head -5
		case $(cat "$1.rc") in
		124|137) echo "hung: killed after ${limit}s (timeout)" ;;
		*) [ "$(cat "$1.time")" -ge "$test_limit" ] &&
			echo "hung: stopped by regrtest --timeout ${test_limit}s (its traceback dump may be lost)" ;;
		esac
	} | sed 's/^/#   /'
) }

stacks='*(cache:64k:8:2)|*(cache:64k:8:2, uring:8)'
# First: is the preloaded interpreter's file I/O really ffio's?
set -f; IFS='|'; set -- $stacks; unset IFS; set +f
for spec; do
	env LD_PRELOAD="$PRELOAD" FF_IO_OPTS="$spec" FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$scratch/diag" \
		"$py" -c 'import sys; open(sys.argv[1], "w").write("judge")' "$scratch/probe" >"$scratch/out" 2>&1
	grep -q "^ffio: open $scratch/probe: entry 1" "$scratch/diag"
	st=$?
	ok $st "$py opens its files through ffio under $spec"
	[ $st -eq 0 ] || cat "$scratch/out" "$scratch/diag" 2>/dev/null | tail -5 | sed 's/^/#   /'
done
for m in $modules; do
	run "$logs/$m.raw.log"
	raw=$(cat "$logs/$m.raw.log.rc")
	printf '%-16s %-28s %-8s %s\n' "$m" "(without ffio)" "$([ "$raw" = 0 ] && echo pass || echo "fail:$raw")" \
		"$(cat "$logs/$m.raw.log.time")" >>"$summary"
	set -f; IFS='|'; set -- $stacks; unset IFS; set +f
	i=0
	for spec; do
		i=$((i + 1))
		log=$logs/$m.ffio$i.log
		if [ "$raw" != 0 ]; then
			n=$((n + 1)); echo "ok $n # SKIP $m under $spec: it fails without ffio too (status $raw, see $logs/$m.raw.log)"
			printf '%-16s %-28s %-8s\n' "$m" "$spec" skipped >>"$summary"
			continue
		fi
		run "$log" LD_PRELOAD="$PRELOAD" FF_IO_OPTS="$spec"
		st=$(cat "$log.rc")
		ok "$st" "$m under $spec, as without ffio ($(cat "$log.time")s; log $log)"
		[ "$st" != 0 ] && key "$log"
		printf '%-16s %-28s %-8s %s\n' "$m" "$spec" "$([ "$st" = 0 ] && echo pass || echo "FAIL:$st")" \
			"$(cat "$log.time")" >>"$summary"
	done
done
sed 's/^/# /' "$summary"
done_testing
