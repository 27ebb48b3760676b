"""The agent interface and the agent registry (agents are made by name, e.g. ``"greedy"``)."""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import math
import re
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from taluva_ai.errors import echo
from taluva_ai.protocol import GameState

#: The most simulations a search may be asked for per move (``sims=``): far above any
#: setting that plays in reasonable time, but finite, so a typing slip
#: (``sims=99999999999999999999``) is refused in one line instead of running for ever.
MAX_SIMS = 10_000_000
#: The longest time budget per move, in seconds (``time=``): a day.
MAX_TIME = 86_400.0
#: The spec parameters that set how much work a move costs, for every registered agent that
#: takes them, and their largest values (``time`` in seconds, the others counts). Each is
#: checked, with its type, by :func:`make_agent` before the agent is made.
BUDGET_LIMITS: dict[str, int | float] = {
    "sims": MAX_SIMS,  # simulations per move (mcts, ismcts, az, openspiel)
    "time": MAX_TIME,  # seconds per move (mcts, ismcts, az)
    "rollouts": 10_000,  # random rollouts per leaf (openspiel)
    "samples": 10_000,  # tile placements sampled per rollout decision (mcts, az)
    "leaf_batch": 65_536,  # leaves evaluated together (mcts, az)
}


class Agent(ABC):
    """A player: given a state where it is to move, returns a legal action id.

    Agents see the game only through :mod:`taluva_ai.protocol`. An agent's randomness comes from
    its own seeded generator, so the same seed and the same positions give the same moves.
    """

    name: str = "agent"

    @abstractmethod
    def act(self, state: GameState) -> int:
        """A legal action id for ``state.current_player`` (``state`` is not modified)."""

    def reset(self, seed: int | None = None) -> None:  # noqa: B027  (optional hook)
        """Start a new game; reseed the agent's generator."""

    def stats(self) -> dict[str, Any]:
        """What the agent can tell about its last decision (search statistics etc.)."""
        return {}

    def pinned_files(self) -> dict[str, str]:
        """The files whose content decides this agent's play (a network's weights), as
        ``{name: SHA-256 of the content it loaded}`` (64 hex digits); empty for an agent that
        reads no file (this default). A tournament records them in its ``config.json`` and
        refuses to go on, or to resume, with an agent whose files changed
        (docs/tournaments.md), so one run never mixes two networks under one name."""
        return {}

    def search_candidates(self) -> list[dict[str, Any]]:
        """Every move the search of the last decision considered at its root, most visited
        first (ties by prior): dicts ``{"action": int, "visits": int, "value": float | None,
        "prior": float}``; ``value`` is the mean return of the player to move over the move's
        visits, on the scale of the game's returns (None for an unvisited move), ``prior`` the
        move's prior probability. Empty for an agent that does not search (this default) or
        before its first decision. The browser board's analysis draws them (docs/web.md)."""
        return []


class ConfiguredAgent(Agent):
    """An agent whose spec parameters are the fields of a frozen config dataclass,
    :attr:`config_class` (``mcts``: ``MCTSConfig``, ``ismcts``: ``ISMCTSConfig``)."""

    config_class: ClassVar[type]

    @classmethod
    def spec_parameters(cls) -> dict[str, Any]:
        """The parameters of the agent's spec and their defaults, in order: the fields of
        :attr:`config_class`."""
        return {f.name: f.default for f in dataclasses.fields(cls.config_class)}

    def _configure(self, params: dict[str, Any]) -> Any:
        """``config_class(**params)``, after refusing a parameter that is not one of its
        fields.

        Raises:
            ValueError: ``unknown <name> parameter(s) ...; known: ...`` (names sorted), or the
                config's own refusal of a value.
        """
        known = {f.name for f in dataclasses.fields(self.config_class)}
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"unknown {self.name} parameter(s) {', '.join(bad)}; known: "
                             f"{', '.join(sorted(known))}")
        return self.config_class(**params)


_AGENTS: dict[str, Callable[..., Agent]] = {}
#: name -> (one-line summary, the spec parameters: a mapping name -> default, or a callable
#: that returns one, evaluated when asked for).
_ABOUT: dict[str, tuple[str, Any]] = {}
#: name -> the parameter a spec may give as its first item without ``key=`` (``az:builtin`` is
#: ``az:path=builtin``).
_POSITIONAL: dict[str, str] = {}

#: The default shown for a spec parameter that has none (the spec must give it).
REQUIRED = "REQUIRED"


def register_agent(name: str, factory: Callable[..., Agent], summary: str | None = None,
                   params: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
                   positional: str | None = None) -> None:
    """Register ``factory(seed=..., **params)`` under ``name``.

    Args:
        summary: one line for ``taluva play --help`` (default: the first line of the factory's
            docstring).
        params: the parameters a spec may give and their defaults (``{name: default}``, or a
            callable returning it, called when the help is shown; :data:`REQUIRED` for one
            without a default); default: :func:`agent_parameters` of the factory.
        positional: a parameter the spec may give as its first item without ``key=``, as a
            string (``az:builtin,sims=64`` is ``az:path=builtin,sims=64``).
    """
    _AGENTS[name] = factory
    if positional is None:
        _POSITIONAL.pop(name, None)
    else:
        _POSITIONAL[name] = positional
    if summary is None:
        doc = inspect.getdoc(factory) or ""
        summary = doc.strip().splitlines()[0] if doc.strip() else ""
    _ABOUT[name] = (summary, params)


def agent_parameters(factory: Callable[..., Any]) -> dict[str, Any]:
    """The spec parameters of an agent class or factory and their defaults, in order:
    ``factory.spec_parameters()`` when it has one (e.g. the fields of a config dataclass),
    else the keyword parameters of its signature other than ``seed`` (:data:`REQUIRED` for one
    without a default)."""
    own = getattr(factory, "spec_parameters", None)
    if callable(own):
        return dict(own())
    out: dict[str, Any] = {}
    for name, p in inspect.signature(factory).parameters.items():
        if name == "seed" or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        out[name] = REQUIRED if p.default is p.empty else p.default
    return out


def registered_agent_parameters(name: str) -> dict[str, Any]:
    """The spec parameters of the registered agent ``name`` and their defaults.

    Raises:
        KeyError: ``name`` is not registered.
    """
    params = _ABOUT[name][1]
    if params is None:
        return agent_parameters(_AGENTS[name])
    return dict(params() if callable(params) else params)


def describe_agents(width: int = 88) -> str:
    """Every registered agent, its summary and its spec parameters with their defaults, as
    text for ``--help`` (generated from the registry)."""
    lines = textwrap.wrap("agents: AGENT is NAME or NAME:KEY=VALUE,... (the parameters and "
                          "their defaults below), or package.module:Class[:KEY=VALUE,...] "
                          "for your own Agent class; any AGENT may add name=LABEL, a label "
                          "not passed to the agent, so that one agent can take two seats "
                          "(mcts:sims=400 and mcts:sims=400,name=b)", width)
    w = max(len(n) for n in _AGENTS)
    for name in _AGENTS:
        summary = _ABOUT.get(name, ("", None))[0]
        lines += textwrap.wrap(f"{name:<{w}}  {summary}", width, initial_indent="  ",
                               subsequent_indent=" " * (w + 4), break_on_hyphens=False)
        params = registered_agent_parameters(name)
        text = " ".join(f"{k}={_show_default(v)}" for k, v in params.items()) or "(no parameters)"
        lines += textwrap.wrap(text, width, initial_indent=" " * (w + 4),
                               subsequent_indent=" " * (w + 4), break_on_hyphens=False)
    return "\n".join(lines)


def _show_default(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if v is None:
        return "unset"
    return str(v)


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into the name and typed parameters.

    Values are read as int, then float (written in ASCII digits: ``1_0`` and other scripts'
    digits are refused), then ``true``/``false``, else kept as strings. For an
    agent registered with a ``positional`` parameter, a first item without ``=`` is that
    parameter's value, as a string (``az:builtin`` is ``az:path=builtin``).

    Raises:
        ValueError: a parameter without ``=``, one given twice, or a number not written in
            ASCII digits.
    """
    name, _, rest = spec.partition(":")
    name = name.strip()
    return name, _params(rest, spec, _POSITIONAL.get(name))


def _params(text: str, spec: str, positional: str | None = None) -> dict[str, Any]:
    """The typed parameters of ``text`` (``key=value,...``; empty: none) of the spec ``spec``
    (named in the error); ``positional``: the parameter a first item without ``=`` gives."""
    params: dict[str, Any] = {}
    if text.strip():
        for i, item in enumerate(text.split(",")):
            key, eq, val = item.partition("=")
            if not eq and i == 0 and positional is not None and item.strip():
                params[positional] = item.strip()
                continue
            if not eq or not key.strip():
                raise ValueError(f"agent spec {spec!r}: parameter {item!r} is not key=value")
            if key.strip() in params:
                raise ValueError(f"agent spec {spec!r}: parameter {key.strip()!r} is given "
                                 "twice")
            params[key.strip()] = _typed(val.strip(), key.strip(), spec)
    return params


def spec_key(spec: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """What makes two agent specs the same agent: the name (or ``module:Class``) and the typed
    parameters in key order, so ``mcts:rollout=random,sims=4`` and ``mcts: sims=4,rollout=random``
    have one key (and ``sims=4`` equals ``sims=4.0``).

    Raises:
        ValueError: a parameter without ``=``, or one given twice.
    """
    head, _, rest = spec.partition(":")
    head = head.strip()
    cls_name, _, params_text = rest.partition(":")
    if head not in _AGENTS and cls_name.strip().isidentifier():  # package.module:Class[:...]
        head, rest = f"{head}:{cls_name.strip()}", params_text
    return head, tuple(sorted(_params(rest, spec, _POSITIONAL.get(head)).items()))


def match_specs(given: Sequence[str], specs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The specs of ``specs`` that the strings ``given`` name (compared by :func:`spec_key`),
    and the strings of ``given`` that name none of them.

    Raises:
        ValueError: a malformed spec (a parameter without ``=``).
    """
    keys = {spec_key(s): s for s in specs}
    found: list[str] = []
    unknown: list[str] = []
    for g in given:
        s = keys.get(spec_key(g))
        if s is None:
            unknown.append(g)
        elif s not in found:
            found.append(s)
    return found, unknown


#: A number in a spec: ASCII digits only (Python's ``int`` and ``float`` also take ``1_0`` and
#: other scripts' digits, which a spec refuses); ``inf`` and ``nan`` are left to the checks.
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def _typed(val: str, key: str = "", spec: str = "") -> Any:
    """A spec value: an int, a float (ASCII digits: :data:`_INT`, :data:`_FLOAT`), ``true`` /
    ``false``, else the string.

    Raises:
        ValueError: a value Python would read as a number but that is not written in ASCII
            digits (``1_0``, ``١٠``), in one line naming the parameter of ``spec``."""
    if _INT.fullmatch(val):
        try:
            return int(val)
        except ValueError:  # over Python's 4,300 digits: read as a float, as before
            return float(val)
    if _FLOAT.fullmatch(val):
        return float(val)
    for conv in (int, float):
        try:
            conv(val)
        except ValueError:
            continue
        raise ValueError(f"agent spec {spec!r}: parameter {key}={val!r} is not a number "
                         "written in ASCII digits (0-9, without '_')")
    if val.lower() in ("true", "false"):
        return val.lower() == "true"
    return val


def _expected(default: Any) -> tuple[tuple[type, ...], str] | None:
    """The types a spec value may take for a parameter whose default is ``default``, and
    their name in an error, or None when the default does not tell (None, a string,
    :data:`REQUIRED`)."""
    if isinstance(default, bool):
        return (bool,), "bool"
    if isinstance(default, int):
        return (int,), "int"
    if isinstance(default, float):
        return (int, float), "int or float"
    return None


def check_spec_parameters(name: str, params: dict[str, Any]) -> None:
    """Check the typed parameters of a spec of the registered agent ``name`` before the agent
    is made: each value has its default's type (an int or a float where the default is a
    float, ``true``/``false`` where it is a bool), and no budget of :data:`BUDGET_LIMITS`
    exceeds its limit. Unknown parameters, and the lower bounds, are left to the agent (it
    names the parameters it knows, and the range of each).

    Raises:
        ValueError: one line naming the parameter, the value (cut when long) and what it must
            be.
    """
    try:
        defaults = registered_agent_parameters(name)
    except (KeyError, ImportError):  # pragma: no cover  (a registered agent's own problem)
        defaults = {}
    for key, value in params.items():
        if key == LABEL_PARAMETER:
            continue  # a label of the spec (make_agent), not the agent's
        want = _expected(defaults.get(key))
        if want is not None:
            types, what = want
            if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
                raise ValueError(f"parameter {key}={echo(value)} must be {what}")
        limit = BUDGET_LIMITS.get(key)
        if limit is None or key not in defaults or isinstance(value, bool) or \
                not isinstance(value, (int, float)):
            continue
        if key == "time":
            if math.isinf(value) or value > limit:
                raise ValueError(f"parameter time={echo(value)} must be a positive number of "
                                 f"seconds (at most {limit:g})")
        elif value > limit:
            raise ValueError(f"parameter {key}={echo(value)} must be an integer in "
                             f"1..{int(limit)}")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Make an agent from a spec.

    Specs: ``name`` or ``name:key=value,...`` for a registered agent (``random``, ``greedy``,
    ``mcts``...), and ``package.module:Class`` or ``package.module:Class:key=value,...`` for
    your own :class:`Agent` subclass, constructed as ``Class(seed=seed, **params)``.

    Every spec may carry ``name=LABEL`` (:data:`LABEL_PARAMETER`; letters, digits, ``._-``,
    at most 40): a label that is not passed to the agent, so that two copies of one agent
    are two specs (cutechess-cli's ``name=``), e.g. a candidate against two MCTS-400 at a
    3-player table: ``--gauntlet az:builtin --agents mcts:sims=400 mcts:sims=400,name=b``.

    Raises:
        ValueError: an unknown agent, a module or class that cannot be loaded, a parameter that
            is malformed, given twice, unknown or of the wrong type, a budget out of range
            (:data:`BUDGET_LIMITS`; registered agents), or ``seed`` given in the spec (the
            caller sets it). The message names the spec (cut when long).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string, got {echo(spec)}")
    head, _, rest = spec.partition(":")
    head = head.strip()
    if head in _AGENTS:
        factory = _AGENTS[head]
        _, params = parse_agent_spec(spec)
        if "seed" not in params:
            try:
                check_spec_parameters(head, params)
            except ValueError as e:
                raise ValueError(f"agent {echo(spec)}: {e}") from None
    else:
        cls_name, _, param_text = rest.partition(":")
        if not cls_name.isidentifier() or ("." not in head and not _importable(head)):
            close = difflib.get_close_matches(head, sorted(_AGENTS), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"unknown agent {head!r}{hint}; known: "
                             f"{', '.join(sorted(_AGENTS))}, or package.module:Class")
        factory = _load_class(spec, head, cls_name)
        params = _params(param_text, spec)
    if "seed" in params:
        raise ValueError(f"agent {spec!r}: the seed is set by the caller (e.g. --seed), "
                         "not in the spec")
    check_label(params.pop(LABEL_PARAMETER, None), spec)
    try:
        agent = factory(seed=seed, **params)
    except (TypeError, ValueError) as e:
        raise ValueError(f"agent {echo(spec)}: {e}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"agent {echo(spec)}: {type(agent).__name__} is not a taluva_ai "
                         "Agent")
    agent.name = spec
    return agent


def time_budget(spec: str) -> float | None:
    """The per-move budget, in seconds, that an agent spec declares with ``time=S`` (e.g.
    ``mcts:time=0.5``, ``pkg.mod:Class:time=2``), or None: what a tournament enforces per
    move and a training run refuses (its games would depend on the machine's speed).

    Raises:
        ValueError: ``time`` is not a positive number of seconds up to :data:`MAX_TIME` (a
            day); a malformed spec.
    """
    value = dict(spec_key(str(spec))[1]).get("time")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        math.isfinite(value) and 0 < value <= MAX_TIME
    ):
        raise ValueError(f"agent {echo(spec)}: time must be a positive number of seconds "
                         f"(at most {MAX_TIME:g}), got {echo(value)}")
    return float(value)


#: The spec parameter every agent takes as a label of the spec, not passed to the agent
#: (:func:`make_agent`).
LABEL_PARAMETER = "name"
_LABEL = re.compile(r"[A-Za-z0-9._-]{1,40}")


def check_label(label: Any, spec: str) -> None:
    """Refuse a ``name=`` label (:data:`LABEL_PARAMETER`) that is not 1-40 letters, digits,
    ``.``, ``_`` or ``-`` (None: no label).

    Raises:
        ValueError: one line naming the spec."""
    if label is not None and not (isinstance(label, str) and _LABEL.fullmatch(label)):
        raise ValueError(f"agent {echo(spec)}: name={echo(label)} must be a label of 1 to 40 "
                         "letters, digits, '.', '_' or '-'")


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _load_class(spec: str, module: str, cls_name: str) -> Callable[..., Agent]:
    import importlib

    try:
        mod = importlib.import_module(module)
    except Exception as e:
        raise ValueError(f"agent {spec!r}: cannot import {module!r}: {e}") from None
    cls = getattr(mod, cls_name, None)
    if cls is None or not callable(cls):
        raise ValueError(f"agent {spec!r}: module {module!r} has no class {cls_name!r}")
    # only an Agent class is called: a spec from a file someone else made (a tournament's
    # config.json, a training pack's anchors) must not call any function it names
    if not (inspect.isclass(cls) and issubclass(cls, Agent)):
        raise ValueError(f"agent {echo(spec)}: {module}.{cls_name} is not a subclass of "
                         "taluva_ai.agents.Agent (nothing was called)")
    return cls


def known_agents() -> list[str]:
    return sorted(_AGENTS)
