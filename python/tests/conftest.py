"""Shared set-up of the hloc package's tests: a private compile cache per session, the paths
of the repository's test data and of ../shared/conformance, and a helper that compiles HLO
text written in a test.  Run: PYTHONPATH=python HLOC_PREFIX=build /usr/bin/python3 -m pytest python/tests
(CTest does so through tests/python.cmake)."""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.environ.get("HLOC_SHARED_DIR") or os.path.normpath(os.path.join(REPO, "..", "shared"))
CASES = os.path.join(SHARED, "conformance", "cases")


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Every compile of the session goes to a fresh cache folder."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield os.environ["XDG_CACHE_HOME"]
    if old is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def repo():
    return REPO


ADD4 = """HloModule add4
ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} add(%a, %b)
}
"""


@pytest.fixture(scope="session")
def add4():
    import hloc
    return hloc.compile(ADD4)
