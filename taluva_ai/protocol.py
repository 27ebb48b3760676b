"""The generic game protocol and the game registry.

Agents, search, the arena and the env wrappers see a game only through these two protocols
(OpenSpiel's ``Game`` / ``State`` split), so a second game plugs in without touching them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

#: ``current_player`` at a chance node (OpenSpiel ``kChancePlayerId``).
CHANCE = -1
#: ``current_player`` once the game is over (OpenSpiel ``kTerminalPlayerId``).
TERMINAL = -4


@runtime_checkable
class GameState(Protocol):
    """One position of a game."""

    @property
    def current_player(self) -> int:
        """Seat to move, ``CHANCE`` at a chance node, ``TERMINAL`` once the game is over."""
        ...

    def legal_actions(self) -> np.ndarray:
        """``int64[k]`` legal action ids of the player to move, ascending."""
        ...

    def legal_action_mask(self) -> np.ndarray:
        """``bool[num_actions]`` legal mask in action-id order."""
        ...

    def apply(self, action: Any) -> None:
        """Apply an action id (or a chance outcome at a chance node)."""
        ...

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(outcome, probability)`` pairs at a chance node."""
        ...

    def is_terminal(self) -> bool: ...

    def returns(self) -> np.ndarray:
        """``float64[num_players]`` final values."""
        ...

    def clone(self) -> GameState: ...

    def observation(self, player: int) -> Any:
        """What ``player`` knows of the position."""
        ...

    def action_to_string(self, action: int) -> str:
        """Notation of an action id of the player to move (at a chance node, of an outcome)."""
        ...

    def parse_action(self, text: str) -> int:
        """Inverse of :meth:`action_to_string` in this position: the id (or chance outcome) of an
        action in notation. Legality is not checked (``apply`` does).

        Raises:
            taluva_ai.errors.NotationError: malformed notation.
        """
        ...

    def draw(self) -> int:
        """Resolve a chance node with the state's own seeded chance (for Taluva the next tile
        of the deck shuffled from the game seed) and return the outcome applied. The same seed
        and the same decisions give the same outcomes.

        Raises:
            taluva_ai.errors.WrongStepError: not at a chance node.
        """
        ...


@runtime_checkable
class Game(Protocol):
    """A game's declared facts and its factory of initial states."""

    name: str
    num_players: int
    num_actions: int
    max_chance_outcomes: int
    max_game_length: int

    def new_initial_state(self, seed: int | None = None) -> GameState: ...

    def options(self) -> dict[str, Any]:
        """The JSON-ready keyword options that rebuild this game:
        ``make_game(game.name, **game.options())`` (game records store them)."""
        ...


#: The game registry (:func:`register_game`, :func:`make_game`): the built-in games as entry
#: points, so that the protocol imports no game (a game imports the protocol).
_REGISTRY: dict[str, Callable[..., Game] | str] = {
    "taluva": "taluva_ai.games.taluva.game:TaluvaGame",
    "thurn_und_taxis": "taluva_ai.games.thurn_und_taxis.game:ThurnUndTaxisGame",
}


def chance_observers(state: GameState) -> tuple[int, ...] | None:
    """At a chance node: the seats that will see its outcome, by the game's optional
    ``chance_visible_to(player)`` (a Thurn und Taxis card dealt to one hand, a Taluva
    ``tile_preview`` tile); None when every seat sees it or the game does not say."""
    visible = getattr(state, "chance_visible_to", None)
    if visible is None:
        return None
    n = int(getattr(state, "num_players", None) or len(state.returns()))
    seen = tuple(p for p in range(n) if visible(p))
    return None if len(seen) == n else seen


def value_normalization(state: GameState) -> tuple[float, float]:
    """``(offset, scale)`` that bring ``state.returns()`` to search's ``[-1, 1]`` scale as
    ``(return - offset) / scale``: the game's optional ``state.value_normalization()``, else
    ``(0, 1)`` (returns already on that scale; Taluva solo gives ``(40, 20)``). MCTS stores
    normalized values in its tree; the AlphaZero value head predicts them."""
    norm = getattr(state, "value_normalization", None)
    if norm is None:
        return 0.0, 1.0
    offset, scale = norm()
    return float(offset), float(scale)


def register_game(name: str, factory: Callable[..., Game] | str) -> None:
    """Register a game under ``name`` (``make_game(name, **options)`` calls ``factory``).

    ``factory`` is a callable or, as Gymnasium's ``entry_point``, the string
    ``"package.module:Name"`` of one, imported on the first ``make_game(name)``: the built-in
    games are registered that way, so this module imports no game."""
    _REGISTRY[name] = factory


def known_games() -> list[str]:
    """Names of the registered games, sorted (the built-in ones included)."""
    return sorted(_REGISTRY)


def make_game(name: str = "taluva", **options: Any) -> Game:
    """Make a registered game with the given options.

    Raises:
        KeyError: no game of that name.
    """
    if name not in _REGISTRY:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    factory = _REGISTRY[name]
    if isinstance(factory, str):  # an entry point: imported once
        module, _, attr = factory.partition(":")
        factory = _REGISTRY[name] = getattr(importlib.import_module(module), attr)
    return factory(**options)
