"""t/sqlite_wal.py -- SQLite in WAL mode, one writer and readers in other
processes at once (t/rel_judges.sh runs it preloaded over a cache).

Usage: sqlite_wal.py DB [READERS [ROWS]]

The writer starts READERS reader processes, waits until each has its
connection open, inserts ROWS rows of 500 bytes (one transaction each,
synchronous=NORMAL: the -wal is not synced at each commit),
then leaves a DB.done file.  Each reader counts the rows and their bytes
until it finds DB.done; a read that fails or sees a row of another
length is an error.  Prints "readers: N reads, E errors" and
"integrity ok, R rows"; exits 0 when E is 0 and every row is there.
"""
import os
import sqlite3
import subprocess
import sys
import time

BYTES = 500


def connect(db):
    return sqlite3.connect(db, isolation_level=None, timeout=30)


def reader(db):
    c = connect(db)
    reads = errors = 0
    print("ready", flush=True)
    deadline = time.monotonic() + 120  # the writer's end is the usual stop
    while not os.path.exists(db + ".done") and time.monotonic() < deadline:
        try:
            n, total = c.execute("SELECT count(*), sum(length(v)) FROM t").fetchone()
            reads += 1
            if n and total != BYTES * n:
                errors += 1
        except sqlite3.Error as e:
            errors += 1
            if errors <= 2:
                print("error:", e, file=sys.stderr)
    print(reads, errors)


def writer(db, readers, rows):
    for f in (db, db + "-wal", db + "-shm", db + ".done"):
        if os.path.exists(f):
            os.unlink(f)
    c = connect(db)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")  # WAL's usual setting: no fsync at each commit
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
    procs = [subprocess.Popen([sys.executable, __file__, db, "reader"], stdout=subprocess.PIPE, text=True)
             for _ in range(readers)]
    for p in procs:
        p.stdout.readline()
    for _ in range(rows):
        c.execute("INSERT INTO t(v) VALUES (randomblob(?))", (BYTES,))
    open(db + ".done", "w").close()
    reads = errors = 0
    for p in procs:
        out, _ = p.communicate()
        r, e = (int(x) for x in out.split())
        reads += r
        errors += e + (p.returncode != 0)
    ok = c.execute("PRAGMA integrity_check").fetchone()[0]
    n = c.execute("SELECT count(*) FROM t").fetchone()[0]
    print(f"readers: {reads} reads, {errors} errors")
    print(f"integrity {ok}, {n} rows")
    return 0 if errors == 0 and ok == "ok" and n == rows else 1


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "reader":
        reader(sys.argv[1])
    else:
        sys.exit(writer(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2,
                        int(sys.argv[3]) if len(sys.argv) > 3 else 1500))
