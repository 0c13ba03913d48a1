"""cache_lock.held: while one process holds a cache entry's lock, another
cannot take it, and takes it as soon as the first lets go (or dies)."""
from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

import cache_lock

HERE = Path(__file__).resolve().parent

# Holds the lock, says so, and lets go when told to (or exits without a word,
# which must release it too).
HOLDER = r"""
import sys
sys.path.insert(0, sys.argv[1])
import cache_lock
with cache_lock.held(sys.argv[2]):
    print("held", flush=True)
    if sys.stdin.readline().strip() == "die":
        import os
        os._exit(3)
"""


def _try_lock(path: Path) -> bool:
    with open(path, "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return True


@pytest.mark.parametrize("how", ["release", "die"])
def test_a_held_lock_blocks_others_until_let_go(tmp_path, how):
    lock = tmp_path / "sub" / ".entry.lock"  # its folder is made on the way
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(HERE), str(lock)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not _try_lock(lock), "a second process took a held lock"
        holder.stdin.write(f"{how}\n")
        holder.stdin.flush()
        assert holder.wait(timeout=60) == (0 if how == "release" else 3)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert _try_lock(lock), "the lock stayed held after its holder let go"
    with cache_lock.held(lock):
        assert not _try_lock(lock)
