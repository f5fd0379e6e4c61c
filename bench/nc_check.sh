# bench/nc_check.sh -- sourced by the netCDF benchmarks (bench/netcdf_tilerec.sh,
# bench/netcdf_seed.sh, bench/netcdf_ncrcat.sh): the check line under each of
# their tables, from bench/table-check (bench/README.md, "The check under each
# table").  Not run by itself.
#
#   nc_check ID LABEL FILE
#	runs table-check -T ID on FILE (lines ROW <tab> RAW_ROW <tab> MEDIAN_S
#	<tab> RUNS, RAW_ROW "-" for raw and ceiling rows) and prints
#	"LABEL [ID]: check: ..." (or table-check's message when it refuses the
#	table); sets nc_status to 1 when table-check exits non-zero (a row below
#	0.95x of raw with no reason known, or a refused table).  It never stops
#	the script: the caller prints the rest and exits with $nc_status last.
#   nc_filter FILE
#	prints FILE, the output of a benchmark program that gives its own rows
#	(bench/netcdf_seed.c), with each block of lines
#		check-row <tab> ROW <tab> RAW_ROW <tab> MEDIAN_S <tab> RUNS
#		...
#		check <tab> ID <tab> LABEL
#	replaced by nc_check's line for those rows.
#
# Environment: NC_CHECK_KNOWN, a known-slower file for table-check's -k
# (default: table-check's own, bench/known_slower); NC_TABLE_CHECK, the
# checker (default: table-check beside this file).  Both are for the tests
# (t/bench_tables.sh).
nc_status=0
nc_dir=${nc_dir:-$(dirname "$0")}
nc_check() {
	nc_rc=0
	if [ -n "${NC_CHECK_KNOWN:-}" ]; then
		nc_line=$("${NC_TABLE_CHECK:-$nc_dir/table-check}" -k "$NC_CHECK_KNOWN" -T "$1" "$3" 2>&1) || nc_rc=$?
	else
		nc_line=$("${NC_TABLE_CHECK:-$nc_dir/table-check}" -T "$1" "$3" 2>&1) || nc_rc=$?
	fi
	printf '%s[%s]: %s\n' "${2:+$2 }" "$1" "$nc_line"
	[ "$nc_rc" = 0 ] || nc_status=1
}
nc_filter() {
	nc_rows=$(mktemp "${TMPDIR:-/tmp}/nc_check.XXXXXX") || { nc_status=1; return 1; }
	nc_tab=$(printf '\t')
	while IFS= read -r nc_l || [ -n "$nc_l" ]; do
		case $nc_l in
		"check-row$nc_tab"*) printf '%s\n' "${nc_l#check-row$nc_tab}" >>"$nc_rows" ;;
		"check$nc_tab"*)
			nc_l=${nc_l#check$nc_tab}
			case $nc_l in
			*"$nc_tab"*) nc_check "${nc_l%%$nc_tab*}" "${nc_l#*$nc_tab}" "$nc_rows" ;;
			*) nc_check "$nc_l" "" "$nc_rows" ;;
			esac
			: >"$nc_rows"
			;;
		*) printf '%s\n' "$nc_l" ;;
		esac
	done <"$1"
	if [ -s "$nc_rows" ]; then # rows with no check line after them: the program stopped
		echo "nc_check: $1: check rows with no \"check\" line after them: the table was not checked"
		nc_status=1
	fi
	rm -f "$nc_rows"
}
