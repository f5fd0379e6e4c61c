#!/bin/sh
# t/trans_fortran.sh -- Fortran I/O as gfortran's runtime makes it, the
# kernel as the oracle: t/trans_fortran.f90 (direct access in strided and
# random record order, sequential unformatted with backspace and endfile,
# formatted read-write and append read by a child program, stream access
# at positions, asynchronous writes, formatted direct access) runs raw,
# then preloaded over several stacks; what it prints and every file it
# leaves must be the same.  Skipped without gfortran.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
command -v gfortran >/dev/null || skip_all "gfortran not installed"
export FF_IO_LOGFILE="$scratch/log"
prog=$scratch/trans_fortran
gfortran -O1 -o "$prog" "$top_srcdir/t/trans_fortran.f90" -J "$scratch" || skip_all "gfortran cannot build t/trans_fortran.f90"
mkdir "$scratch/raw"
(cd "$scratch/raw" && "$prog" >../raw.out 2>&1)
ok $? "the program runs raw ($(wc -l <"$scratch/raw.out") lines)"
files=$(cd "$scratch/raw" && ls)
for spec in '*.dat(cache:4k:2:1)' '*.dat(cache:64k:8:2)' '*.dat(cache.sieve:64k:8:2)' \
	'*.dat(cache:64k:8:2, uring:8)'; do
	rm -rf "$scratch/ffio" && mkdir "$scratch/ffio"
	(cd "$scratch/ffio" && pre "$spec" "$prog" >../ffio.out 2>&1)
	st=$?
	cmp -s "$scratch/raw.out" "$scratch/ffio.out"
	ok $((st + $?)) "over $spec: it prints what it prints raw"
	[ $st -eq 0 ] || echo "#   exit status $st"
	diff "$scratch/raw.out" "$scratch/ffio.out" | head -5 | sed 's/^/#   /'
	differ=""
	for f in $files; do
		cmp -s "$scratch/raw/$f" "$scratch/ffio/$f" || differ="$differ $f"
	done
	[ "$(cd "$scratch/ffio" && ls)" = "$files" ] || differ="$differ (the list of files)"
	is "$differ" "" "over $spec: the files it leaves are the raw run's ($(echo $files | wc -w) files)"
done
done_testing
