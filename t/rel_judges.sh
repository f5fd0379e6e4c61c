#!/bin/sh
# t/rel_judges.sh -- external programs as judges, each preloaded with a
# cache and checked against raw: fio (psync engine, verify=crc32c, then a
# raw verify-only pass over what is on disk), SQLite (rollback journal,
# fcntl locks, fsync; two processes writing one database; raw
# integrity_check and row counts; WAL mode with readers in other processes
# while one writes, t/sqlite_wal.py), tar, cp and dd round trips
# (byte-identical).  Each judge is skipped with a message when missing.
. "${top_srcdir:-$(dirname "$0")/..}/t/rel_lib.sh"
d=$scratch
export FF_IO_LOGFILE=/dev/null
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# -- fio
if command -v fio >/dev/null; then
	for spec in '*fio.dat(cache:64k:16:2)' '*fio.dat(cache.sieve:4k:8:1, uring:8)'; do
		rm -f "$d/fio.dat"
		# --verify_state_save=0: fio would leave a state file in the current directory.
		set -- --name=rel --filename="$d/fio.dat" --verify_state_save=0 --ioengine=psync --size=4m --bsrange=512-16k \
			--verify=crc32c --verify_fatal=1 --randseed=42 --rw=randwrite --norandommap=0
		pre "$spec" fio "$@" --do_verify=1 >"$d/fio.out" 2>&1
		st=$?
		[ $st -ne 0 ] && head -3 "$d/fio.out" | sed 's/^/#   /'
		ok $st "fio randwrite 512-16k + verify=crc32c through $spec"
		fio "$@" --verify_only >"$d/fio2.out" 2>&1
		st=$?; grep -qi 'verify.*fail\|bad magic\|crc32c' "$d/fio2.out" && st=1
		ok $st "fio verify_only, raw, on what $spec left on disk"
		[ $st -ne 0 ] && tail -5 "$d/fio2.out" | sed 's/^/#   /'
	done
else
	skip "fio not installed"
fi
# -- SQLite
if command -v sqlite3 >/dev/null; then
	SQ='*.db(cache:4k:64:2) *.db-journal(cache:4k:16:0)'
	db=$d/t.db
	pre "$SQ" sqlite3 "$db" 'CREATE TABLE t(id INTEGER PRIMARY KEY, who TEXT, v BLOB);' ; ok $? "sqlite3 creates a database through the cache"
	writer() { # writer NAME ROWS: ROWS inserts, 10 per transaction
		awk -v w="$1" -v n="$2" 'BEGIN { print ".timeout 20000"; for (i = 0; i < n; i += 10) {
			print "BEGIN IMMEDIATE;"; for (j = i; j < i + 10; j++) printf "INSERT INTO t(who, v) VALUES (\"%s\", randomblob(%d));\n", w, 100 + j % 900;
			print "COMMIT;" } }' | pre "$SQ" sqlite3 "$db" >"$d/$1.out" 2>&1
	}
	writer a 1000 & pa=$!
	writer b 1000 & pb=$!
	wait $pa; sa=$?; wait $pb; sb=$?
	ok $((sa + sb)) "two sqlite3 processes insert 1000 rows each into one database at once"
	[ $((sa + sb)) -ne 0 ] && cat "$d/a.out" "$d/b.out" | head -5 | sed 's/^/#   /'
	is "$(sqlite3 "$db" 'PRAGMA integrity_check;')" ok "raw sqlite3: integrity_check"
	is "$(sqlite3 "$db" "SELECT count(*), sum(who = 'a'), sum(who = 'b') FROM t;")" "2000|1000|1000" "raw sqlite3: every row of both writers"
	pre "$SQ" sqlite3 "$db" "UPDATE t SET v = zeroblob(50) WHERE id % 3 = 0; DELETE FROM t WHERE id % 7 = 0; VACUUM;" 2>&1 | head -3
	is "$(sqlite3 "$db" "PRAGMA integrity_check; SELECT count(*), sum(length(v) = 50) FROM t;" | tr '\n' ' ')" \
		"ok 1715|571 " "update, delete and VACUUM through the cache: raw integrity_check and counts"
	is "$(pre "$SQ" sqlite3 "$db" "SELECT count(*), sum(length(v)) FROM t;")" "$(sqlite3 "$db" "SELECT count(*), sum(length(v)) FROM t;")" "reads through the cache agree with raw"
else
	skip "sqlite3 not installed"
fi
# -- SQLite in WAL mode: readers in other processes while one inserts.
# SQLite publishes new frames in the index it maps from its -shm file
# before it releases its write lock: every file of the database cached.
if python3 -c 'import sqlite3' 2>/dev/null; then
	out=$(pre '*w.db*(cache:64k:8:2)' python3 "$top_srcdir/t/sqlite_wal.py" "$d/w.db" 2 1500 2>&1)
	st=$?
	echo "$out" | sed 's/^/#   /'
	ok $st "SQLite WAL, one writer and two readers at once through the cache: no read fails, every row there"
	is "$(sqlite3 "$d/w.db" 'PRAGMA integrity_check; SELECT count(*) FROM t;' 2>&1 | tr '\n' ' ')" "ok 1500 " \
		"raw sqlite3 after the WAL run: integrity_check and rows"
else
	skip "python3 with sqlite3 not installed"
	skip "python3 with sqlite3 not installed"
fi
# -- tar, cp, dd
mkdir "$d/src"
i=0
for size in 0 1 511 4096 4097 65536 100000 1048577 3000000; do
	head -c $size /dev/urandom >"$d/src/f$i.bin"; i=$((i + 1))
done
C='*.bin(cache:64k:8:2) *.tar(cache.sieve:16k:4:1) *.img(cache:4k:3:1)'
pre "$C" tar -C "$d" -cf "$d/a.tar" src && tar -C "$d" -cf "$d/raw.tar" src
ok $? "tar c through the cache"
cmp -s "$d/a.tar" "$d/raw.tar"; ok $? "tar archive byte-identical to raw"
mkdir "$d/x" && pre "$C" tar -C "$d/x" -xf "$d/a.tar"
ok $? "tar x through the cache"
diff -r "$d/src" "$d/x/src" >/dev/null; ok $? "extracted tree byte-identical"
pre "$C" cp "$d/src/f8.bin" "$d/copy.bin"; cmp -s "$d/src/f8.bin" "$d/copy.bin"; ok $? "cp of 3000000 bytes byte-identical"
if [ -n "$san" ]; then
	skip "dd under a sanitizer build: dd's own aligned_alloc(4096, 1000) is rejected by ASan"
else
	pre "$C" dd if="$d/src/f8.bin" of="$d/d.img" bs=1000 status=none
	cmp -s "$d/src/f8.bin" "$d/d.img"; ok $? "dd bs=1000 byte-identical"
	dd if="$d/src/f7.bin" of="$d/raw.img" bs=777 seek=3 conv=notrunc status=none 2>/dev/null
	cp "$d/d.img" "$d/raw2.img" && dd if="$d/src/f7.bin" of="$d/raw2.img" bs=777 seek=3 conv=notrunc status=none
	pre "$C" dd if="$d/src/f7.bin" of="$d/d.img" bs=777 seek=3 conv=notrunc status=none
	cmp -s "$d/raw2.img" "$d/d.img"; ok $? "dd seek=3 conv=notrunc over an existing file: byte-identical to raw"
fi
done_testing
