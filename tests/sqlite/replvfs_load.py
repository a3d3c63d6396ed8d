# SPDX-License-Identifier: BSD-3-Clause
"""replvfs_load -- the replvfs extension loaded into this Python process
(the tests' shared loader): it registers the "repl" VFS process-wide."""
import ctypes
import sqlite3


def load(ext):
    loader = sqlite3.connect(":memory:")
    if hasattr(loader, "enable_load_extension"):
        loader.enable_load_extension(True)
        loader.load_extension(ext.rsplit(".so", 1)[0])
        return
    # a Python built without extension loading (pyenv's default): the same
    # libsqlite3 its module uses loads it, for the whole process
    lib = ctypes.CDLL("libsqlite3.so.0")
    db = ctypes.c_void_p()
    err = ctypes.c_char_p()
    assert lib.sqlite3_open(b":memory:", ctypes.byref(db)) == 0
    assert lib.sqlite3_enable_load_extension(db, 1) == 0
    rc = lib.sqlite3_load_extension(db, ext.encode(), None, ctypes.byref(err))
    assert rc == 0, "load_extension: %d %s" % (rc, err.value)
