"""The default test run: in parallel when pytest-xdist is installed.

Plain ``pytest`` (the README's command, run by ``.ci/run``) over the whole suite runs it on
``min(4, CPUs)`` pytest-xdist workers (2 on the 2-core CI machine): most of the suite is CPU
work (Numba compilation on a fresh clone, games, searches), so two workers take about half
the wall time of one even on a busy machine. It stays sequential when:

- pytest-xdist is absent (``-n`` in ``addopts`` would make ``pytest`` a usage error there, so
  the choice is made here instead), or disabled (``-p no:xdist``);
- ``-n`` is given (``-n 0``: sequential; ``-n 4``: four workers);
- test paths are named (``pytest tests/test_rules.py``: one file runs faster without starting
  workers), or ``--pdb`` / ``--collect-only`` is given.

It also sets ``NUMBA_OPT=1`` for the run (below), and stops at once, in one line, when this
Python lacks the project or its test extra (``pytest`` run before ``pip install -e '.[test]'``,
or from another environment), instead of one import error per test file.
"""

from __future__ import annotations

import os

import pytest

# The test run compiles the kernels at LLVM optimisation level 1 instead of Numba's 3: about a
# fifth less compile time on a fresh clone, and kernels as fast as at level 3 (engine games/s,
# MCTS simulations/s: docs/benchmarks.md, "The test suite's first run"). Set here, before
# anything imports Numba; inherited by the pytest-xdist workers. NUMBA_OPT in the environment
# overrides it.
os.environ.setdefault("NUMBA_OPT", "1")

#: At most this many workers in the default run (each worker holds its own compiled kernels,
#: about 1 GB).
MAX_WORKERS = 4


def default_workers(args_from_testpaths: bool, numprocesses: object, usepdb: bool,
                    collectonly: bool, cpus: int | None) -> int | None:
    """The number of xdist workers the default run gets, or None to leave the run as asked.

    Args:
        args_from_testpaths: no test paths on the command line (the ini's ``testpaths`` ran).
        numprocesses: the ``-n`` option (None when not given).
        usepdb, collectonly: ``--pdb`` / ``--collect-only`` given.
        cpus: ``os.cpu_count()``.
    """
    if not args_from_testpaths or numprocesses is not None or usepdb or collectonly:
        return None
    workers = min(MAX_WORKERS, cpus or 1)
    return workers if workers > 1 else None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Sets ``-n`` for the default run before pytest-xdist reads it (this conftest's
    ``tryfirst`` implementation runs before xdist's, which was registered earlier)."""
    if not config.pluginmanager.hasplugin("xdist") or "PYTEST_XDIST_WORKER" in os.environ:
        return  # no xdist, or a worker (whose run the controller has set up)
    workers = default_workers(
        config.args_source == pytest.Config.ArgsSource.TESTPATHS,
        config.option.numprocesses, bool(config.getoption("usepdb", False)),
        bool(config.getoption("collectonly", False)), os.cpu_count())
    if workers is not None:
        config.option.numprocesses = workers
        if config.option.dist == "no":  # not asked for: rebalance when a worker runs out
            config.option.dist = "worksteal"


#: What the controller compiles (or loads) before the workers start, as two scripts run at once
#: (one a core, about 45-60 s of CPU each from a cold cache): the rules of a 2-player game
#: with a whole game of random players and the greedy player, then a solo game's (through the
#: dispatching kernels that the envs use too); and the encoder's planes and mask. Without it,
#: the workers compiled the dispatching ``apply_action`` and ``encode_into`` each, about 48 s.
PREWARM_SCRIPTS = (
    "from taluva_ai.protocol import make_game\n"
    "from taluva_ai.warmup import warm_up\n"
    "warm_up(make_game('taluva'), ['greedy'], progress=False)\n"
    "warm_up(make_game('taluva', solo=True), [], progress=False)\n",
    "import logging\n"
    "logging.getLogger('taluva_ai').setLevel(logging.ERROR)\n"
    "from taluva_ai.games.taluva import encoding\n"
    "from taluva_ai.games.taluva.game import TaluvaGame\n"
    "state = TaluvaGame().new_initial_state(seed=0)\n"
    "state.draw()\n"
    "encoding.encode(state)\n",
)


#: While the warm-up scripts run, a line at least this often (seconds).
PREWARM_BEAT_S = 10.0


def shared_kernels() -> None:
    """Compile (a cold Numba cache) or load the kernels that most test files call
    (:data:`PREWARM_SCRIPTS`, each in a process of its own, both at once). The first script
    prints :func:`taluva_ai.warmup.warm_up`'s lines when it compiles; while they run, this
    prints a line every :data:`PREWARM_BEAT_S` seconds (after the first 5, so a cached run
    stays quiet). A script that fails prints its error (the run goes on, and the tests then
    fail on it)."""
    import subprocess
    import sys
    import time

    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", code]) for code in PREWARM_SCRIPTS]
    beat = start + 5.0
    while any(p.poll() is None for p in procs):
        time.sleep(0.1)
        if time.monotonic() >= beat:
            beat = time.monotonic() + PREWARM_BEAT_S
            print(f"tests/conftest.py: compiling the kernels the tests share, two processes "
                  f"(first run only): {time.monotonic() - start:.0f} s", file=sys.stderr,
                  flush=True)
    for p in procs:
        if p.returncode != 0:
            print(f"tests/conftest.py: a kernel warm-up script ended with status {p.returncode}",
                  file=sys.stderr, flush=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In the controller of an xdist run, before it starts the workers (xdist's own
    ``pytest_sessionstart`` runs last): :func:`shared_kernels`, so that on a cold kernel cache
    the kernels most tests need are compiled once and cached, and the workers load them
    instead of each compiling them at once (Numba writes each cache file to a temporary name
    and renames it into place, so two writers do not corrupt it, but both pay for the
    compile). On a warm cache it loads them (a few seconds). ``TALUVA_TEST_PREWARM=0`` skips it."""
    config = session.config
    if ("PYTEST_XDIST_WORKER" in os.environ or os.environ.get("TALUVA_TEST_PREWARM") == "0"
            or not config.pluginmanager.hasplugin("xdist")
            or not config.getoption("numprocesses", None)
            or bool(config.getoption("collectonly", False))):
        return
    shared_kernels()


@pytest.fixture(autouse=True, scope="session")
def _compile_notice_said() -> None:
    """Counts the once-per-process compile notice (:data:`taluva_ai.warmup.COMPILING`) as
    already printed, so that a test comparing a command's stderr exactly does not depend on
    whether the kernels it runs were compiled earlier in its worker (a cold Numba cache on a
    fresh clone) or loaded; ``tests/test_warmup.py`` resets it to test the notice itself. The
    same for the Python API's notice (:mod:`taluva_ai.games.compiling`; tests/test_compile.py
    tests it)."""
    from taluva_ai import warmup
    from taluva_ai.games import compiling

    warmup._announced = True
    compiling.announced()


def missing_requirements(dist: str = "taluva-ai", extra: str = "test") -> list[str]:
    """The distributions that ``pip install -e '.[<extra>]'`` would install and this Python
    lacks (``[dist]`` when the project itself is not installed), from the installed
    project's metadata."""
    from importlib import metadata

    from packaging.requirements import Requirement  # a dependency of pytest

    try:
        requires = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return [dist]
    missing = []
    for text in requires:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        try:
            metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(req.name)
    return list(dict.fromkeys(missing))  # a name listed twice (base and extra) once


def web_tests_only(args: list[str]) -> bool:
    """Whether the test paths named are all the browser board's tests (``tests/test_web*.py``,
    a node id in one, or several of them): those need only the project's ``web`` extra and
    pytest (docs/web.md, "Tests and screenshots"; httpx and selenium, when missing, skip
    theirs), so such a run asks for no more than that."""
    import re

    named = [a for a in args if not a.startswith("-")]
    return bool(named) and all(
        re.fullmatch(r"(.*/)?test_web[a-z_]*\.py(::.*)?", a.replace("\\", "/")) for a in named)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Stops the run in one line when the project or its test extra is not installed (its
    ``web`` extra for a run of the browser board's tests alone, :func:`web_tests_only`)."""
    web = config.args_source == pytest.Config.ArgsSource.ARGS and web_tests_only(config.args)
    missing = missing_requirements(extra="web" if web else "test")
    if missing:
        import sys

        extra = "web" if web else "test"
        pytest.exit(f"this Python ({sys.executable}) lacks {', '.join(missing)}: install the "
                    f"project with its {extra} extra first: pip install -e '.[{extra}]' "
                    "(README)", returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture
def one_torch_thread():
    """One torch thread while a test runs (its small batches: several threads spin-wait on a
    busy machine), the number before restored after it. A module of network tests takes it
    for all its tests: ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every agent spec the browser board hands to the agent registry
    (``taluva_ai.tournament.make_agent``, patched for the test), in order."""
    from typing import Any

    from taluva_ai import tournament

    specs: list[str] = []
    real = tournament.make_agent

    def spy(spec: str, seed: int | None = None) -> Any:
        specs.append(spec)
        return real(spec, seed=seed)

    monkeypatch.setattr(tournament, "make_agent", spy)
    return specs
