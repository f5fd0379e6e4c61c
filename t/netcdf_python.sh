#!/bin/sh
# t/netcdf_python.sh -- netCDF4-python and xarray under ffio-run --netcdf
# (both preloaded libraries; libnetcdf comes with a dlopened Python
# extension there, not with the program).  Each writes a file in each of
# NETCDF3_CLASSIC, NETCDF3_64BIT, NETCDF4 and NETCDF4_CLASSIC and reads it
# back; the same script run without ffio is the reference: ncdump output
# identical, data values read back identical, and a netCDF-3 file
# byte-identical.  Skipped when python3 or netCDF4-python is missing;
# xarray's half when xarray is.  FFIO_PYTHON: the interpreter
# (/usr/bin/python3, Debian's, which the packages are for).
. "${top_srcdir:-.}/t/netcdf_lib.sh"
run=$bld/bin/ffio-run
export FFIO_LIB
py=${FFIO_PYTHON:-/usr/bin/python3}

[ -x "$py" ] || { echo "1..0 # SKIP $py not installed"; exit 0; }
"$py" -c 'import netCDF4' 2>/dev/null ||
	{ echo "1..0 # SKIP netCDF4-python not installed for $py (Debian: python3-netcdf4)"; exit 0; }

# nc.py LIB FORMAT PATH: write PATH with LIB (netCDF4 or xarray) in FORMAT,
# records appended one by one along an unlimited dimension; then open it
# again and print every variable and attribute, with a digest of the values.
cat >"$dir/nc.py" <<'EOF'
import hashlib, sys
import numpy as np
lib, fmt, path = sys.argv[1:4]
nt, ny, nx = 12, 48, 40
temp = (np.arange(nt * ny * nx, dtype='f8').reshape(nt, ny, nx) * 0.25 - 7.0)
count = np.arange(nt, dtype='i4') * 3 - 5
mask = (np.arange(ny * nx, dtype='f4').reshape(ny, nx) % 7) / 7

def show(name, values, attrs):
    a = np.ascontiguousarray(values)
    print(name, a.dtype, a.shape, hashlib.sha256(a.tobytes()).hexdigest(),
          sorted((k, str(v)) for k, v in attrs.items()))

if lib == 'netCDF4':
    import netCDF4
    with netCDF4.Dataset(path, 'w', format=fmt) as d:
        d.title = 'ffio netCDF4-python judge'
        d.createDimension('time', None)
        d.createDimension('y', ny)
        d.createDimension('x', nx)
        t = d.createVariable('temp', 'f8', ('time', 'y', 'x'))
        t.units = 'K'
        c = d.createVariable('count', 'i4', ('time',))
        m = d.createVariable('mask', 'f4', ('y', 'x'))
        m[:] = mask
        for i in range(nt):
            t[i] = temp[i]
            c[i] = count[i]
            if i == nt // 2:
                d.sync()
    with netCDF4.Dataset(path) as d:
        print(d.file_format, sorted(d.ncattrs()), {k: len(v) for k, v in d.dimensions.items()})
        for name, v in sorted(d.variables.items()):
            show(name, v[:].filled(), {k: v.getncattr(k) for k in v.ncattrs()})
elif lib == 'xarray':
    import xarray as xr
    ds = xr.Dataset(
        {'temp': (('time', 'y', 'x'), temp, {'units': 'K'}),
         'count': (('time',), count),
         'mask': (('y', 'x'), mask)},
        coords={'time': np.arange(nt, dtype='f8') * 0.5, 'y': np.arange(ny, dtype='i4')},
        attrs={'title': 'ffio xarray judge'})
    ds.to_netcdf(path, format=fmt, engine='netcdf4', unlimited_dims=['time'])
    with xr.open_dataset(path, engine='netcdf4') as back:
        back.load()
        print('identical to what was written:', back.identical(ds))
        print(sorted(back.attrs.items()), dict(back.sizes))
        for name, v in sorted(back.variables.items()):
            show(name, v.values, v.attrs)
EOF

libs=netCDF4
if "$py" -c 'import xarray' 2>/dev/null; then
	libs="netCDF4 xarray"
	xskip=
else
	xskip="xarray not installed for $py (Debian: python3-xarray)"
fi

mkdir "$dir/raw" "$dir/ffio"
for lib in $libs; do
	for fmt in NETCDF3_CLASSIC NETCDF3_64BIT NETCDF4 NETCDF4_CLASSIC; do
		f=$lib.$fmt.nc
		what="$lib $fmt"
		env -u LD_PRELOAD -u FF_IO_OPTS "$py" "$dir/nc.py" $lib $fmt "$dir/raw/$f" >"$dir/raw/$f.out" 2>"$dir/err"
		ok $? "$what: raw: written and read back" "$dir/err"
		env -u FF_IO_OPTS FF_IO_OPEN_DIAGS=1 FF_IO_LOGFILE="$dir/log" \
			"$run" --netcdf "$py" "$dir/nc.py" $lib $fmt "$dir/ffio/$f" >"$dir/ffio/$f.out" 2>"$dir/err"
		ok $? "$what: ffio-run --netcdf: written and read back" "$dir/err"
		grep -q "^ffio: open $dir/ffio/$f: entry 1 (\*.nc)\$" "$dir/log"
		ok $? "$what: the file went through entry *.nc" "$dir/log"
		diff "$dir/raw/$f.out" "$dir/ffio/$f.out" >"$dir/diff" 2>&1
		ok $? "$what: the values read back are those of the raw run" "$dir/diff"
		(cd "$dir/raw" && ncdump "$f") >"$dir/raw.cdl" 2>&1 &&
			(cd "$dir/ffio" && ncdump "$f") >"$dir/ffio.cdl" 2>&1 &&
			diff "$dir/raw.cdl" "$dir/ffio.cdl" >"$dir/diff" 2>&1
		ok $? "$what: ncdump output identical to the raw file's" "$dir/diff"
		case $fmt in
		NETCDF3*)
			cmp "$dir/raw/$f" "$dir/ffio/$f" >"$dir/diff" 2>&1
			ok $? "$what: byte-identical to the raw file" "$dir/diff" ;;
		esac
	done
done
[ -n "$xskip" ] && for i in 1 2 3 4; do t=$((t + 1)); echo "ok $t # SKIP $xskip"; done
echo "1..$t"
exit $fail
