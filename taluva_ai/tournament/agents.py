"""The agents of a match or tournament, by their specs (``"random"``, ``"mcts:time=0.5"``,
``"pkg.mod:Class"``).

:func:`make_agent` makes one with the agent registry of ``taluva_ai.agents``, looked up by name
at run time: the tournament package reaches agents only through names, never by a static
import (DESIGN.md, Layout). :func:`time_budget` reads a spec's per-move budget (``time=S``),
:func:`check_fits` lets an agent refuse a game it cannot play before any move, and
:func:`pinned_files` gives the files whose content decides its play (an ``az`` agent's
network), which a tournament pins in its ``config.json`` and checks in every game.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

from taluva_ai.agents.base import time_budget as time_budget  # its home; re-exported here
from taluva_ai.errors import RunConfigError
from taluva_ai.protocol import Game


def check_fits(agent: Any, game: Game) -> None:
    """Let an agent that plays only some games (an ``az`` checkpoint: one game, one number of
    players) refuse ``game`` before any move, through its optional ``check_game(game)``.

    Raises:
        ValueError: the agent cannot play ``game`` (its message says why).
    """
    check = getattr(agent, "check_game", None)
    if check is not None:
        check(game)


def pinned_files(agent: Any) -> dict[str, str]:
    """``{file: SHA-256}`` of the files whose content decides ``agent``'s play, through its
    optional ``pinned_files()`` (:meth:`taluva_ai.agents.base.Agent.pinned_files`; an ``az``
    agent: its network); empty for an agent without files."""
    get = getattr(agent, "pinned_files", None)
    return {} if get is None else {str(k): str(v) for k, v in get().items()}


def _pins_ok(pins: Any) -> bool:
    """``pins`` has the form of ``agent_files`` (config.json, a record's header): a mapping of
    agent specs to ``{file: SHA-256 (64 lowercase hex digits)}``."""
    return isinstance(pins, dict) and all(
        isinstance(files, dict) and all(
            isinstance(d, str) and re.fullmatch(r"[0-9a-f]{64}", d) is not None
            for d in files.values())
        for files in pins.values())


def _check_pins(spec: str, got: Mapping[str, str], want: Mapping[str, str] | None) -> None:
    """Refuse the agent of ``spec`` when a file it loaded (``got``: :func:`pinned_files`) is
    not the one the tournament pinned (``want``, from ``config.json``'s ``agent_files``).

    Raises:
        RunConfigError: one line naming the file, the agent and both checksums.
    """
    for name, digest in (want or {}).items():
        now = got.get(name)
        if now != digest:
            raise RunConfigError(
                f"{name}: changed since the tournament pinned it (SHA-256 {digest[:12]}..., now "
                f"{'none' if now is None else now[:12] + '...'}), so agent {spec!r} would play "
                "another network; restore that file and resume, or start a new --out (to rate "
                "a network that training replaces, give a copy: checkpoints/iter_NNNN.pt)")


def make_agent(spec: str, seed: int | None = None) -> Any:
    """Make an agent from its spec (``"random"``, ``"greedy:epsilon=0.1"``, ``"module:Class"``)
    with the agent registry of ``taluva_ai.agents``, looked up by name at run time: the core
    reaches agents only through names, never by a static import (DESIGN.md, Layout).

    Raises:
        ValueError: an unknown agent or a bad parameter (the message lists the known names).
        ImportError, AttributeError: a ``module:Class`` spec that does not resolve.
    """
    registry = importlib.import_module("taluva_ai.agents")
    return registry.make_agent(spec, seed=seed)
