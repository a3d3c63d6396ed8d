#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""replvfs_ha.py -- one node of a replicated SQLite database with automatic
failover (docs/sqlite.md, "Automatic failover").

    python3 replvfs_ha.py EXTENSION DATABASE NODE.conf [--bootstrap]

Run one on every node, each with its own database file and its own
repld.conf, whose coordinator block names etcd.  While its node is the
primary it adds a row to `hits` every 200 ms; while it is a replica it reads
how many rows its copy holds and where the primary is.  When its node
changes role its connection fails (SQLITE_IOERR | 64 << 8): it closes it and
opens the database again.  --bootstrap: the cluster's first start (every
node, once).  SIGUSR1: hand the primary over to the most advanced replica
(repl_switchover(), from whichever node gets it).  Stops on SIGINT or
SIGTERM.
"""
import signal
import sqlite3
import sys
import time

READONLY_REPLICA = 8 | 64 << 8   # SQLITE_READONLY: a write on a replica
IOERR_ROLE = 10 | 64 << 8        # SQLITE_IOERR: the node changed role

ext, path, conf = sys.argv[1:4]
bootstrap = "--bootstrap" in sys.argv[4:]
stopping = False
switchover = False


def stop(signum, frame):
    global stopping
    stopping = True


def ask_switchover(signum, frame):
    global switchover
    switchover = True


signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGUSR1, ask_switchover)

# the extension registers the "repl" VFS for the whole process
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(ext)


def connect():
    uri = f"file:{path}?vfs=repl&repl_conf={conf}"
    if bootstrap:
        uri += "&repl_bootstrap=1"   # taken at the node's first open only
    while not stopping:
        try:
            con = sqlite3.connect(uri, uri=True, timeout=2.0,
                                  isolation_level=None)
            # a replicated database is in WAL mode ("wal" on a replica too)
            con.execute("PRAGMA journal_mode=WAL")
            role = con.execute("SELECT repl_role()").fetchone()[0]
            print(f"opened as the {role}", flush=True)
            return con, role
        except sqlite3.Error as e:
            print(f"open: {e}", flush=True)
            time.sleep(0.5)
    sys.exit(0)


con, role = connect()
while not stopping:
    try:
        if switchover:
            switchover = False
            done = con.execute("SELECT repl_switchover()").fetchone()[0]
            print(f"switchover: {done}", flush=True)
        if role == "primary":
            con.execute("CREATE TABLE IF NOT EXISTS hits(id INTEGER PRIMARY "
                        "KEY, at REAL)")
            con.execute("INSERT INTO hits(at) VALUES (?)", (time.time(),))
        else:
            where = con.execute("SELECT repl_primary()").fetchone()[0]
            n = con.execute("SELECT count(*) FROM hits").fetchone()[0]
            print(f"replica: {n} rows here; the primary: {where}",
                  flush=True)
        time.sleep(0.2)
    except sqlite3.Error as e:
        code = getattr(e, "sqlite_errorcode", 0)
        if code == IOERR_ROLE or (code & 0xff) == sqlite3.SQLITE_IOERR:
            print(f"{e} ({code}): opening again", flush=True)
            con.close()
            con, role = connect()
        elif code == READONLY_REPLICA:
            role = "replica"
        else:
            # a replica's copy before its first transaction: no table yet
            print(f"{e}", flush=True)
            time.sleep(0.5)
con.close()
