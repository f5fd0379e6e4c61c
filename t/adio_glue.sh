#!/bin/sh
# t/adio_glue.sh -- libffio_mpi.so: the ffio_opts hint selects a file's
# stack without FF_IO_OPTS; a malformed hint gives a message and plain I/O;
# FF_IO_OPTS_RANK<n> adds entries for one rank; atomic mode makes other
# ranks' writes visible without sync; MPI_Finalize prints one summary, on
# rank 0 only (per-rank logs through FF_IO_LOGFILE's %r); MPI_File_sync
# reaches the kernel's fsync only through MPI's own; a file opened
# for writing by several ranks takes small writes around the cache until
# they merge (records between the other ranks' reach the kernel at once,
# as without the glue they do not; a rank's records in order are taken in
# after a few).  3 ranks; the
# files are verified by t/adio_check.  Skips without MPI.
# Under each MPI built (t/mpi_lib.sh).
bin="${top_builddir:-.}/t"
. "${top_srcdir:-$(dirname "$0")/..}/t/mpi_lib.sh"
mpi_require adio_mpi_glue
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-adio.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
echo "1..$((18 * nflavours))"
i=0
ok() { i=$((i + 1)); if [ "$1" = 0 ]; then echo "ok $i - $mpi_label: $2"; else echo "not ok $i - $mpi_label: $2"; fi; }

# run MODE [VAR=VALUE...]: run the glue program (or $prog), then check its
# file; sets held ("MIN MAX" of the records and sequence modes: records the
# kernel held before any sync, on the rank with fewest and with most).
run() {
	mode=$1; shift
	file="$dir/adio_$mode.dat"
	rm -f "$file" "$dir"/log.*
	held=
	out=$(env "$@" LD_PRELOAD="$FFIO_LIB" FF_IO_LOGFILE="$dir/log.%r" \
		timeout 60 $mpirun -n 3 "$bin/${prog:-adio_mpi_glue}$mpi_suffix" "$mode" "$file" 2>"$dir/err") || {
		echo "# exit $?: $(head -c 300 "$dir/err" | tr '\n' ' ')"; return 1; }
	held=$(echo "$out" | sed -n 's/^kernel //p')
	res=$("$bin/adio_check" "$file" $(echo "$out" | sed -n 's/^expect //p')) || { echo "# $res"; return 1; }
	return 0
}
count() { grep -c "$1" "$2" 2>/dev/null || true; }

for flavour in $flavours; do
mpi_use $flavour
# The hint alone (FF_IO_OPTS unset) puts an event layer on the file.
run contig ADIO_FFIO_OPTS="event.summary, cache:4k:16:2"; ok $? "contig with the ffio_opts hint"
ok "$([ "$(count 'MPI summary over 3 ranks' "$dir/log.0")" = 1 ] && echo 0)" \
	"rank 0 prints the finalize summary exactly once"
ok "$([ "$(cat "$dir"/log.1 "$dir"/log.2 2>/dev/null | grep -c 'MPI summary')" = 0 ] && echo 0)" \
	"the other ranks print no summary"
ok "$(grep -q 'adio_contig.dat, layer 0 (event)' "$dir/log.0" && echo 0)" \
	"the summary shows the hinted event layer"
ok "$(grep -Eq 'write calls +[0-9]+ +[0-2] ' "$dir/log.0" && echo 0)" \
	"the summary reduces write calls over ranks"
# contig syncs twice (sync-barrier-sync): the kernel's fsync is MPI's own,
# at most one a sync (ROMIO's: on the ranks that wrote since the last);
# the glue's flush point adds none (it added one a sync)
syncs=$(sed -n '/layer 2 (sys)/,/layer\|MPI summary/p' "$dir/log.0" | awk '$2 == "sync" { print $7 }')
ok "$([ -n "$syncs" ] && [ "$syncs" -le 2 ] && echo 0)" \
	"at most one fsync a sync on any rank (the most: ${syncs:-none})"

# A malformed hint: one message, the program runs with plain I/O.
run contig ADIO_FFIO_OPTS="cache:nonsense"; ok $? "contig with a malformed hint"
ok "$(cat "$dir"/log.* 2>/dev/null | grep -q 'ffio_opts' && echo 0)" "the malformed hint is reported"
ok "$([ "$(cat "$dir"/log.* 2>/dev/null | grep -c 'MPI summary')" = 0 ] && echo 0)" \
	"no summary when no file was managed"

# FF_IO_OPTS_RANK1 applies to rank 1 only.
run contig FF_IO_OPTS_RANK1="adio_*.dat(event.summary, cache:4k:16:2)"; ok $? "contig with FF_IO_OPTS_RANK1"
ok "$(grep -Eq 'write calls +0 +0 ' "$dir/log.0" && grep -q 'layer 0 (event)' "$dir/log.0" && echo 0)" \
	"only rank 1's file has the event layer (min 0 on rank 0)"

# Atomic mode over a cache, with and without uring below.
run atomic FF_IO_OPTS="adio_*.dat(cache:4k:16:2)"; ok $? "atomic mode over cache"
run atomic ADIO_FFIO_OPTS="cache:4k:16:2, uring:16"; ok $? "atomic mode over cache, uring (hint)"

# 256 records of 64 B per rank, each between the other ranks' records:
# with the glue the cache steps aside from the first write (each reaches
# the kernel as its call returns); with libffio alone it holds them.
recs="FF_IO_OPTS=adio_*.dat(cache:64k:16:2)"
run records "$recs"; ok $? "records between other ranks' (glue): the file is exact"
ok "$([ "$held" = "256 256" ] && echo 0)" "every rank's 256 records were in the kernel before any sync (got $held)"
prog=adio_mpi; run records "$recs"; rc=$?; prog=
ok $rc "records between other ranks' (libffio alone): the file is exact"
ok "$([ "$held" = "0 0" ] && echo 0)" "without the glue the cache held them all (got $held)"
# Each rank's records in order, in a block of its own: after a few that
# went around, the cache takes them in.
run sequence "$recs"
rc=$?
set -- $held
ok "$([ $rc = 0 ] && [ "${1:-0}" -ge 1 ] && [ "${2:-256}" -lt 256 ] && echo 0)" \
	"a rank's records in order (glue): the first went around, the rest were cached (got $held), the file is exact"
done
