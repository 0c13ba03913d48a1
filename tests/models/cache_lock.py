"""An exclusive lock for the test caches under $AOTIRT_CACHE_DIR.

scripts/test.sh runs the model tests two files at a time (pytest-xdist), and
several files need the same exported packages. Whoever takes the lock first
exports a package; the others wait, then find it cached, instead of
exporting it again or seeing a folder while it is being replaced. The lock is
an flock on a file beside the cache entry, so it goes away with the process
that held it, however that process ends."""
from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path


@contextlib.contextmanager
def held(lock_file: Path):
    """Holds the exclusive lock on |lock_file| (made if missing) for the block."""
    lock_file = Path(lock_file)
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
