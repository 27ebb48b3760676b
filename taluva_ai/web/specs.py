"""The agent specs the browser board accepts over HTTP (docs/web.md, Security), and the agents
it makes of them.

Agent specs that arrive over HTTP are checked by :func:`check_spec` before anything is made
of them: the registered agents only, ``package.module:Class`` only from the modules an
:class:`AgentPolicy` allows (``taluva serve --allow-agent-module``), every parameter that costs
time bounded (:data:`INT_BOUNDS`). :func:`_board_agent` makes a seat's agent (a game in play,
:mod:`taluva_ai.web.play`), :func:`analysis_agent` an analysis's (:mod:`taluva_ai.web.analysis`).

Every refusal is a :class:`~taluva_ai.web.errors.WebError` (status and one line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taluva_ai import tournament
from taluva_ai.protocol import GameState
from taluva_ai.tournament import check_fits
from taluva_ai.web.errors import WebError, _one_line

#: The most simulations an analysis may ask for (``sims=`` of the agent spec).
MAX_ANALYSIS_SIMS = 20000
#: The most seconds an analysis may ask for (``time=`` of the agent spec).
MAX_ANALYSIS_SECONDS = 60.0

def _board_agent(spec: str, game: Any, seed: int | None, field: str,
                 policy: AgentPolicy | None = None) -> Any:
    """The agent ``spec`` for ``game``, checked first (:func:`check_spec`: only what
    ``policy`` allows, within the board's bounds), reset with ``seed``; made through
    ``tournament.make_agent`` at call time (the one registry).

    Raises:
        WebError: naming ``field``: 403 a ``module:Class`` spec the server was not started to
            allow, a checkpoint outside the served directories; 400 an unbounded spec, an
            unknown agent or parameter, an agent that does not fit the game; 404 no such
            checkpoint.
    """
    made = check_spec(spec, field, policy)
    try:
        agent = tournament.make_agent(made, seed=seed)
        check_fits(agent, game)
        agent.reset(seed)
    except (ValueError, ImportError, AttributeError, TypeError) as e:
        raise WebError(400, f"{field}: {_one_line(str(e).replace(made, spec))}") from None
    return agent


#: Bounds of the spec parameters that cost time or processors, for every agent made over HTTP
#: (a registered one or an allowed ``module:Class``): parameter -> (least, most) integer.
#: ``sims`` and ``time`` (below) bound a move; ``rollouts`` (OpenSpiel's random games per
#: leaf), ``samples`` (tile placements sampled per greedy-rollout decision), ``leaf_batch``
#: (leaves evaluated together) and ``threads`` (a network's CPU threads) multiply its cost.
INT_BOUNDS: dict[str, tuple[int, int]] = {
    "sims": (1, MAX_ANALYSIS_SIMS),
    "rollouts": (1, 100),
    "samples": (1, 64),
    "leaf_batch": (1, 256),
    "threads": (1, 8),
}
#: The most simulations x rollouts of a move (OpenSpiel's ``sims`` x ``rollouts``: each
#: simulation plays that many random games to the end).
MAX_SIMS_X_ROLLOUTS = MAX_ANALYSIS_SIMS
#: The checkpoint suffixes ``az:path=<dir index>/<file>`` may name.
CHECKPOINT_SUFFIXES = (".pt",)


@dataclass(frozen=True)
class AgentPolicy:
    """Which agent specs the board makes (docs/web.md, Security).

    The registered agents (``random``, ``greedy``, ``mcts``, ``ismcts``, ``az``, ``openspiel``
    and any other the process registered, :func:`taluva_ai.agents.register_agent`) always;
    a ``package.module:Class`` spec only when its module is one of ``modules`` or inside one
    of them (``taluva serve --allow-agent-module``), never otherwise: checking such a spec
    imports nothing. ``az:path=`` may name ``builtin`` or, when ``checkpoint`` is given, a
    checkpoint under the served directories as ``<dir index>/<file>.pt`` (``checkpoint``
    resolves that name to the file, raising :class:`WebError` for one outside them).
    """

    modules: tuple[str, ...] = ()
    checkpoint: Callable[[str], Path] | None = None

    def allows_module(self, module: str) -> bool:
        return any(module == m or module.startswith(m + ".") for m in self.modules)


#: The policy of a board started without flags: registered agents, ``az:builtin`` only.
DEFAULT_POLICY = AgentPolicy()


def _is_dotted_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def check_spec(spec: str, field: str = "agent", policy: AgentPolicy | None = None) -> str:
    """Check an agent spec that arrived over HTTP before anything is made of it, and return
    the spec to make (``az:path=<dir index>/<file>`` turned into the file's path).

    The spec must name a registered agent, or a ``module:Class`` of a module ``policy``
    allows (nothing is imported to check it); every parameter of :data:`INT_BOUNDS` must be
    an integer in its range, ``time`` a number of seconds in ``(0,``
    :data:`MAX_ANALYSIS_SECONDS` ``]``, ``sims x rollouts`` at most
    :data:`MAX_SIMS_X_ROLLOUTS` (each refused in one line naming the parameter and the
    bound), and ``path`` ``builtin`` or a checkpoint under the served directories.

    Raises:
        WebError: naming ``field``: 403 a ``module:Class`` not allowed, a checkpoint outside
            the served directories; 400 an unknown agent, a malformed or unbounded
            parameter; 404 no such checkpoint.
    """
    from taluva_ai.agents import known_agents, parse_agent_spec, registered_agent_parameters

    policy = DEFAULT_POLICY if policy is None else policy
    head, _, rest = spec.partition(":")
    head = head.strip()
    known = known_agents()
    defaults: dict[str, Any] = {}
    prefix = head  # what the spec's parameters follow: the name, or module:Class
    if head in known:
        try:
            _, params = parse_agent_spec(spec)
        except ValueError as e:
            raise WebError(400, f"{field}: {_one_line(e)}") from None
        try:
            defaults = registered_agent_parameters(head)
        except (KeyError, ImportError, ValueError):
            defaults = {}
    else:
        cls_name, _, param_text = rest.partition(":")
        if not rest or not _is_dotted_name(head) or not cls_name.strip().isidentifier():
            raise WebError(400, f"{field}: unknown agent {head!r}; known: {', '.join(known)}"
                           + (", or package.module:Class when the server allows its module"
                              if policy.modules else ""))
        if not policy.allows_module(head):
            allowed = (f"the modules allowed are {', '.join(policy.modules)}"
                       if policy.modules else "start the server with --allow-agent-module "
                       f"{head} to allow that module")
            raise WebError(403, f"{field}: {spec!r} names a Python class (module:Class), which "
                           f"the board runs only from the modules its server allows: "
                           f"{allowed}; the registered agents are {', '.join(known)}")
        prefix = f"{head}:{cls_name.strip()}"
        try:
            params = _parse_params(param_text, spec)
        except ValueError as e:
            raise WebError(400, f"{field}: {_one_line(e)}") from None
    for name, (low, high) in INT_BOUNDS.items():
        v = params.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not low <= v <= high):
            raise WebError(400, f"{field}: {name} must be an integer {low}..{high} on the "
                           f"board, got {_one_line(repr(v))[:40]}")
    t = params.get("time")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                          or not 0 < t <= MAX_ANALYSIS_SECONDS):
        raise WebError(400, f"{field}: time must be a number of seconds in (0, "
                       f"{MAX_ANALYSIS_SECONDS:g}] on the board, got {_one_line(repr(t))[:40]}")
    rollouts = params.get("rollouts", defaults.get("rollouts"))
    sims = params.get("sims", defaults.get("sims"))
    if isinstance(rollouts, int) and isinstance(sims, int) \
            and sims * rollouts > MAX_SIMS_X_ROLLOUTS:
        raise WebError(400, f"{field}: sims x rollouts must be at most {MAX_SIMS_X_ROLLOUTS} "
                       f"on the board (each simulation plays rollouts random games), got "
                       f"{sims} x {rollouts} = {sims * rollouts}")
    path = params.get("path")
    if path is None or path == "builtin":
        return spec
    if policy.checkpoint is None or not isinstance(path, str):
        raise WebError(400, f"{field}: the board plays only the built-in network "
                       "(az:builtin), not a file (path=...); play a checkpoint with "
                       "`taluva play`")
    if not re.fullmatch(r"[0-9]+/[^,]+", path):
        raise WebError(400, f"{field}: the board plays only the built-in network "
                       "(az:builtin), not a file outside the served directories: give "
                       "path=builtin or a checkpoint under them as <dir index>/<file>.pt "
                       f"(path=0/run/best.pt), got path={_one_line(repr(path))[:80]}")
    try:
        real = policy.checkpoint(path)
    except WebError as e:
        raise WebError(e.status, f"{field}: checkpoint: {e.message}") from None
    if "," in str(real) or "=" in str(real):
        raise WebError(400, f"{field}: the checkpoint's path {str(real)!r} holds ',' or '=', "
                       "which an agent spec cannot carry")
    items = [f"path={real}" if k == "path" else f"{k}={_spec_value(v)}"
             for k, v in params.items()]
    return f"{prefix}:{','.join(items)}"


def _spec_value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _parse_params(text: str, spec: str) -> dict[str, Any]:
    """The typed parameters of a ``module:Class:key=value,...`` spec (as the registry reads
    them), without importing anything."""
    from taluva_ai.agents import spec_key

    return dict(spec_key(spec)[1]) if text.strip() else {}


def analysis_agent(state: GameState, spec: Any, seed: int,
                   policy: AgentPolicy | None = None) -> tuple[str, Any]:
    """The checked spec and its agent, made for ``state``'s game and reset with ``seed``.

    Raises:
        WebError: 400 a bad or unbounded spec, or an agent that does not search (it keeps
            :meth:`Agent.search_candidates` of the base class).
    """
    from taluva_ai.agents.base import Agent

    if not isinstance(spec, str) or not spec.strip():
        raise WebError(400, f"agent must be an agent spec such as 'mcts:sims=200', got {spec!r}")
    spec = spec.strip()
    agent = _board_agent(spec, state.game, seed, "agent",  # type: ignore[attr-defined]
                         policy)
    if type(agent).search_candidates is Agent.search_candidates:
        raise WebError(400, f"agent {spec!r} does not search (it gives no candidate moves): "
                        "use mcts:... or az:...")
    return spec, agent
