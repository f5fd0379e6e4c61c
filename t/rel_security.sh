#!/bin/sh
# t/rel_security.sh -- what the environment can make ffio do:
# FF_IO_LOGFILE never follows a symlink into a file (with or without '+'),
# never writes to a file other than the one named (over-long names);
# set-uid programs ignore FF_IO_* (a copied set-uid binary, linked with
# libffio, run as nobody through setpriv(1)); paths of 4096+ bytes and the
# largest spec the environment can carry (128 KiB) handled (1 MiB specs:
# t/rel_bigspec).
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
d=$scratch
SPEC='*.dat(event.summary, cache:4k:4:0)'
# -- FF_IO_LOGFILE and symlinks
echo precious >"$d/victim"
ln -s "$d/victim" "$d/log"
FF_IO_LOGFILE=$d/log FF_IO_OPEN_DIAGS=1 pre "$SPEC" "$TOOL" fill "$d/a.dat" 4096 8192 >/dev/null 2>"$d/err"
ok $? "FF_IO_LOGFILE is a symlink: the program runs"
is "$(cat "$d/victim")" precious "FF_IO_LOGFILE is a symlink to a file: that file is unchanged"
grep -q 'cannot open FF_IO_LOGFILE' "$d/err"; ok $? "... and ffio says so on stderr"
FF_IO_LOGFILE=+$d/log FF_IO_OPEN_DIAGS=1 pre "$SPEC" "$TOOL" fill "$d/a.dat" 4096 8192 >/dev/null 2>/dev/null
is "$(cat "$d/victim")" precious "FF_IO_LOGFILE=+symlink (append): the file behind it is unchanged"
ln -s "$d/nonexistent" "$d/dangling"
FF_IO_LOGFILE=$d/dangling FF_IO_OPEN_DIAGS=1 pre "$SPEC" "$TOOL" fill "$d/a.dat" 4096 8192 >/dev/null 2>/dev/null
[ ! -e "$d/nonexistent" ]; ok $? "FF_IO_LOGFILE is a dangling symlink: nothing is created at its target"
FF_IO_LOGFILE=$d/real.log FF_IO_OPEN_DIAGS=1 pre "$SPEC" "$TOOL" fill "$d/a.dat" 4096 8192 >/dev/null
grep -q 'a.dat' "$d/real.log"; ok $? "FF_IO_LOGFILE as a plain path still works"
"$TOOL" check "$d/a.dat" 8192 >/dev/null; ok $? "... and the data file is exact"
# -- an over-long FF_IO_LOGFILE must not be cut into the name of another file:
# DIR/././.../victim (4095 bytes) + "/x.log" names nothing that can exist.
base="$d/" pad=""
while [ $((${#base} + ${#pad} + 6)) -lt 4094 ]; do pad="$pad./"; done
while [ $((${#base} + ${#pad} + 6)) -lt 4095 ]; do pad="$pad/"; done
FF_IO_LOGFILE="$base${pad}victim/x.log" FF_IO_OPEN_DIAGS=1 pre "$SPEC" "$TOOL" fill "$d/a.dat" 4096 8192 >/dev/null 2>/dev/null
is "$(cat "$d/victim")" precious "FF_IO_LOGFILE of 4101 bytes whose first 4095 name a file: that file is unchanged"
# -- long paths: 4096+ bytes in all, through a matched stack
long=$d
while [ ${#long} -lt 3800 ]; do long=$long/$(printf '%0200d' 0 | tr 0 q); done
mkdir -p "$long" 2>/dev/null
if [ -d "$long" ]; then
	f=$long/$(printf '%0200d' 0 | tr 0 z).dat
	pre "$SPEC" "$TOOL" fill "$f" 1000 50000 >"$d/out" 2>/dev/null
	is "$(cat "$d/out")" "accepted 50000 writes 50 write ok fsync ok close ok" "a path of ${#f} bytes through the cache"
	"$TOOL" check "$f" 50000 >/dev/null; ok $? "... data exact"
	f2=$long/$(printf '%0400d' 0 | tr 0 y).dat
	pre "$SPEC" "$TOOL" fill "$f2" 1000 5000 >"$d/out" 2>&1
	grep -q "ENAMETOOLONG\|File name too long" "$d/out"; ok $? "a ${#f2}-byte path (component too long): ENAMETOOLONG, no crash"
	f3=$long/$(printf '%0200d' 0 | tr 0 q)/$(printf '%0200d' 0 | tr 0 q)/x.dat
	pre "$SPEC" "$TOOL" fill "$f3" 1000 5000 >"$d/out" 2>&1
	grep -q "ENAMETOOLONG\|File name too long\|ENOENT\|No such file" "$d/out"; ok $? "a ${#f3}-byte path (over PATH_MAX): an error, no crash"
	pat=$(printf '%04000d' 0 | tr 0 '?')
	FF_IO_OPTS="*$pat(cache:4k:2:0) *.dat(cache:4k:4:0)" LD_PRELOAD=$PRELOAD "$TOOL" fill "$f" 1000 5000 >"$d/out" 2>&1
	is "$(cat "$d/out")" "accepted 5000 writes 5 write ok fsync ok close ok" "a 4000-character pattern is matched against a ${#f}-byte path"
fi
# -- the largest spec one environment variable can hold (MAX_ARG_STRLEN, 128 KiB)
big=$(awk 'BEGIN { p = sprintf("%100s", ""); gsub(/ /, "n", p); for (i = 0; i < 1000; i++) printf "%s%05d.x(cache:4k:2:0) ", p, i; print "*.dat(fault:write:EIO:0)" }')
FF_IO_OPTS=$big LD_PRELOAD=$PRELOAD "$TOOL" fill "$d/b.dat" 4096 8192 >"$d/out" 2>&1
is "$(cat "$d/out")" "accepted 0 writes 1 write EIO fsync ok close ok" "a ${#big}-byte FF_IO_OPTS (1001 entries): the last entry is in force"
# -- set-uid programs ignore FF_IO_*
# Everything the runs as nobody need (the program, a copy of the library
# it is linked with, a directory to write in) sits in a directory nobody
# can reach: the build tree may be below one only its owner can enter.
nobody_can() { $nobody sh -c "$1" sh "$2" 2>/dev/null; }
suid_skip() { n=$((n + 1)); echo "ok $n # SKIP set-uid test: $1"; }
if [ -n "$san" ]; then
	suid_skip "not with a sanitizer build of the library"
elif [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	suid_skip "needs root, setpriv(1) and the user nobody"
else
	CC=${CC:-cc}
	nobody="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
	s=$d/suid
	mkdir "$s" && chmod 755 "$d" "$s"
	if ! nobody_can 'test -x "$1"' "$s"; then
		# $TMPDIR is below a directory nobody cannot enter: use /tmp.
		s=$(mktemp -d /tmp/ffio-suid.XXXXXX) && chmod 755 "$s"
		[ -n "$FFIO_KEEP_TEST_FILES" ] || trap 'rm -rf "$scratch" "$s"' EXIT
	fi
	soname=$(readelf -d "$FFIO_LIB" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
	mkdir "$s/lib" "$s/out" && chmod 755 "$s/lib" && chmod 777 "$s/out" &&
		cp -L "$FFIO_LIB" "$s/lib/${soname:-$(basename "$FFIO_LIB")}" && chmod 755 "$s/lib/"*
	# Does the system honour a set-uid bit here (not on a nosuid mount,
	# not under no_new_privs)?  A set-uid copy of id(1) says.
	cp "$(command -v id)" "$s/id" && chown root "$s/id" && chmod 4755 "$s/id"
	if ! nobody_can 'test -x "$1"' "$s/lib"; then
		suid_skip "the user nobody cannot reach $s"
	elif [ "$($nobody "$s/id" -u 2>/dev/null)" != 0 ]; then
		suid_skip "set-uid programs do not run set-uid in $s (nosuid mount or no_new_privs)"
	elif $CC -o "$s/tool" "$top_srcdir/t/rel_tool.c" "$s/lib/${soname:-$(basename "$FFIO_LIB")}" \
		-Wl,--disable-new-dtags,-rpath,"$s/lib" -lpthread 2>"$d/cc.err"; then
		# plain copy run as nobody: FF_IO_OPTS is honoured (the fault shows)
		FF_IO_OPTS='*.dat(fault:write:EIO:0)' $nobody "$s/tool" fill "$s/out/p.dat" 4096 8192 >"$d/out" 2>&1
		is "$(cat "$d/out")" "accepted 0 writes 1 write EIO fsync ok close ok" "linked program as nobody: FF_IO_OPTS honoured (control)"
		chown root "$s/tool" && chmod 4755 "$s/tool"
		FF_IO_OPTS='*.dat(fault:write:EIO:0)' FF_IO_LOGFILE=$s/out/evil.log FF_IO_OPEN_DIAGS=1 \
			$nobody "$s/tool" fill "$s/out/s.dat" 4096 8192 >"$d/out" 2>&1
		is "$(cat "$d/out")" "accepted 8192 writes 2 write ok fsync ok close ok" "set-uid copy run as nobody: FF_IO_OPTS ignored"
		[ ! -e "$s/out/evil.log" ]; ok $? "set-uid copy: FF_IO_LOGFILE ignored (no log file)"
	else
		sed 's/^/#   /' "$d/cc.err" | head
		ok 1 "build a program linked with libffio for the set-uid test"
	fi
fi
done_testing
