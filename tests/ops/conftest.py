"""The fixture every op test shares: one Shims per test module."""
import pytest

from shim_harness import Shims


@pytest.fixture(scope="module")
def shims():
    s = Shims()
    yield s
    s.release()
