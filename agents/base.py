"""The agent interface and the agent registry (agents are made by name, e.g. ``"greedy"``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from taluva_ai.protocol import GameState


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


_AGENTS: dict[str, Callable[..., Agent]] = {}


def register_agent(name: str, factory: Callable[..., Agent]) -> None:
    """Register ``factory(seed=..., **params)`` under ``name``."""
    _AGENTS[name] = factory


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into the name and typed parameters.

    Values are read as int, then float, then ``true``/``false``, else kept as strings.

    Raises:
        ValueError: a parameter without ``=``.
    """
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    if rest:
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            if not eq or not key:
                raise ValueError(f"agent spec {spec!r}: parameter {item!r} is not key=value")
            params[key.strip()] = _typed(val.strip())
    return name.strip(), params


def _typed(val: str) -> Any:
    for conv in (int, float):
        try:
            return conv(val)
        except ValueError:
            pass
    if val.lower() in ("true", "false"):
        return val.lower() == "true"
    return val


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Make an agent from a spec such as ``"random"``, ``"greedy"`` or ``"module:Class"``.

    Raises:
        ValueError: an unknown agent name or a bad parameter (the message lists the known names).
    """
    name, params = parse_agent_spec(spec)
    if name in _AGENTS:
        try:
            agent = _AGENTS[name](seed=seed, **params)
        except TypeError as e:
            raise ValueError(f"agent {spec!r}: {e}") from None
        agent.name = spec
        return agent
    if "." in name:
        import importlib

        mod_name, _, cls_name = spec.rpartition(":")
        if mod_name and cls_name:
            cls = getattr(importlib.import_module(mod_name), cls_name)
            agent = cls(seed=seed)
            agent.name = spec
            if not isinstance(agent, Agent):
                raise ValueError(f"{spec!r} is not an Agent (it has no act method)")
            return agent
    raise ValueError(f"unknown agent {name!r}; known: {', '.join(sorted(_AGENTS))}")


def known_agents() -> list[str]:
    return sorted(_AGENTS)
