"""CI runs exactly the README's test command (issue 19 A.1)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"^pip install -e '\.\[test\]' && (.+)$", readme, flags=re.M)
    assert found == ["pytest"], found
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert "python -m pip install --quiet -e '.[test]'" in lines
    assert lines[-1] == found[0]


def test_plain_pytest_finds_the_tests_package() -> None:
    """`from tests.helpers import ...` works under plain `pytest` from the root (the root is
    on sys.path through pyproject's pythonpath), as the collection of this file shows."""
    import tests.helpers  # noqa: F401

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'pythonpath = ["."]' in text


def test_plain_pytest_needs_no_optional_plugin() -> None:
    """addopts hold only core pytest options: a plugin's option there (xdist's ``-n``) makes
    plain ``pytest`` a usage error wherever that plugin is not installed."""
    import shlex

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    with (ROOT / "pyproject.toml").open("rb") as f:
        addopts = tomllib.load(f)["tool"]["pytest"]["ini_options"]["addopts"]
    assert [a for a in shlex.split(addopts) if a.startswith("-")] == ["-m", "--durations=15"]


def test_the_default_run_is_parallel_only_when_nothing_else_is_asked() -> None:
    """tests/conftest.py: plain ``pytest`` takes min(4, CPUs) xdist workers; named paths,
    ``-n``, ``--pdb``, ``--collect-only`` or one CPU leave the run as asked."""
    from tests.conftest import default_workers

    assert default_workers(True, None, False, False, 2) == 2
    assert default_workers(True, None, False, False, 64) == 4
    assert default_workers(True, None, False, False, 1) is None
    assert default_workers(True, None, False, False, None) is None
    assert default_workers(False, None, False, False, 2) is None
    assert default_workers(True, 0, False, False, 2) is None
    assert default_workers(True, 3, False, False, 2) is None
    assert default_workers(True, None, True, False, 2) is None
    assert default_workers(True, None, False, True, 2) is None


def test_the_checkout_finds_its_own_agents_and_envs_whatever_is_installed() -> None:
    """With the repository root first on sys.path (pytest's ``pythonpath``), ``taluva_ai`` is
    this checkout's folder, and ``taluva_ai.agents`` / ``taluva_ai.envs`` must be this
    checkout's ``agents/`` and ``envs/`` even when no editable install maps them here (a
    non-editable install, an editable one of another folder, or none)."""
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "sys.meta_path[:] = [f for f in sys.meta_path "
            "if '__editable__' not in getattr(f, '__module__', '')]; "
            "import taluva_ai.agents, taluva_ai.envs; "
            "print(taluva_ai.__file__); print(taluva_ai.agents.__file__); "
            "print(taluva_ai.envs.__file__)")
    res = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True,
                         text=True, cwd="/", check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [str(ROOT / "taluva_ai" / "__init__.py"),
                                       str(ROOT / "agents" / "__init__.py"),
                                       str(ROOT / "envs" / "__init__.py")]


def test_the_run_names_what_an_uninstalled_python_lacks() -> None:
    """conftest stops a run from a Python without the project (or its test extra) in one
    line; here everything is installed."""
    from tests.conftest import missing_requirements

    assert missing_requirements() == []
    assert missing_requirements("no-such-distribution-xyz") == ["no-such-distribution-xyz"]
