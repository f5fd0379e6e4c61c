# t/netcdf_lib.sh -- shared by the netCDF test scripts: where things are, a
# scratch directory, a TAP "ok" helper.  Sourced, not run.
bld=${top_builddir:-.}
NCGLUE_LIB=$(dirname "${FFIO_LIB:-$bld/.libs/libffio.so}")/libffio_netcdf.so
if ! command -v ncdump >/dev/null 2>&1; then
	echo "1..0 # SKIP ncdump not installed"
	exit 0
fi
if [ ! -e "${FFIO_LIB:-}" ] || [ ! -e "$NCGLUE_LIB" ]; then
	echo "1..0 # SKIP libffio.so or libffio_netcdf.so not built"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffio-nc.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
t=0
# ok STATUS DESCRIPTION [FILE TO SHOW ON FAILURE]
ok() {
	t=$((t + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $t - $2"
	else
		echo "not ok $t - $2"
		fail=1
		[ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/# /' "$3" | head -20
	fi
	return 0
}
