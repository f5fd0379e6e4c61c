#!/bin/sh
# t/core_exports.sh -- libffio.so exports its API and the C-library names it
# interposes, nothing else: every dynamic symbol it defines is either
# declared FFIO_API in include/ffio.h or include/ffio_ext.h, or a name the
# C library itself defines; and every FFIO_API name is exported.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
lib=${FFIO_LIB:-$top_builddir/.libs/libffio.so}
[ -f "$lib" ] || skip_all "libffio.so not built"
command -v nm >/dev/null || skip_all "no nm"
libc=$(ldd "$lib" | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
[ -f "$libc" ] || skip_all "libc.so.6 of libffio.so not found"
names() { nm -D --defined-only "$1" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u; }
names "$lib" >"$scratch/exported"
names "$libc" >"$scratch/libc"
sed -n 's/^FFIO_API [^(]*[ *]\([a-z_0-9]*\)(.*/\1/p' \
	"$top_srcdir/include/ffio.h" "$top_srcdir/include/ffio_ext.h" | sort -u >"$scratch/api"
[ -s "$scratch/api" ]
ok $? "the public headers declare $(wc -l <"$scratch/api") FFIO_API functions"
comm -23 "$scratch/exported" "$scratch/api" | comm -23 - "$scratch/libc" >"$scratch/extra"
[ ! -s "$scratch/extra" ]
ok $? "no exported name is neither API nor the C library's ($(wc -l <"$scratch/exported") exported)"
sed 's/^/#   /' "$scratch/extra"
comm -13 "$scratch/exported" "$scratch/api" >"$scratch/missing"
[ ! -s "$scratch/missing" ]
ok $? "every API function is exported"
sed 's/^/#   /' "$scratch/missing"
comm -12 "$scratch/exported" "$scratch/libc" | grep -q '^open$'
ok $? "the interposed C-library names are exported (open among them)"
done_testing
