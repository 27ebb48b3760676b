"""What every env of this package shares, of no particular game: the error of an env used out
of order, the checks of an action and of the ``illegal_action`` mode, the returns of a forfeit,
the action space whose ``sample()`` draws a legal action, the render modes and the pictures
(:class:`EnvModes`, which the scalar and the PettingZoo envs take in).

The base classes over these: :mod:`taluva_ai.envs.batched` (the native vector envs) and
:mod:`taluva_ai.envs.aec` (the PettingZoo AEC envs). The game-specific envs re-export the names
they have always offered (``taluva_ai.envs.vector.EnvStateError``,
``taluva_ai.envs.taluva_env.check_illegal_mode``, ``taluva_ai.envs.game_env.render_game``, ...).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from taluva_ai.errors import ActionOutOfRangeError

if TYPE_CHECKING:
    from taluva_ai.protocol import Game, GameState

#: What the envs do with a masked (illegal) action, the default first.
ILLEGAL_ACTION_MODES = ("terminate", "penalty", "raise")
#: Render modes of the envs (``"human"`` prints the ``"ansi"`` text).
RENDER_MODES = ["human", "ansi", "rgb_array"]


class EnvStateError(RuntimeError):
    """An env used out of order (stepped before ``reset`` or after its game ended)."""


def check_illegal_mode(mode: Any) -> str:
    """``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`.

    Raises:
        ValueError: any other value (the message lists the allowed ones).
    """
    if not isinstance(mode, str) or mode not in ILLEGAL_ACTION_MODES:
        allowed = ", ".join(map(repr, ILLEGAL_ACTION_MODES))
        raise ValueError(f"illegal_action must be one of {allowed}, got {mode!r}")
    return mode


def check_render_mode(render_mode: Any, modes: list[str]) -> None:
    """Refuse a ``render_mode`` that is neither None nor one of ``modes``.

    Raises:
        ValueError: naming the allowed modes and the one given.
    """
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")


def illegal_returns(num_players: int, actor: int, penalty: float) -> np.ndarray:
    """``float64[num_players]``: the returns of an episode ended by ``actor``'s illegal action:
    ``penalty`` for the actor, ``-penalty / (num_players - 1)`` for each other seat (a
    forfeit; zero-sum)."""
    out = np.full(num_players, 0.0 if num_players < 2 else -penalty / (num_players - 1))
    out[actor] = penalty
    return out


def illegal_step_rewards(env: Any, agent: str, seat: int) -> bool:
    """Set the rewards of a PettingZoo AEC ``env`` whose ``agent`` (seat ``seat``) chose a
    masked action, in the env's ``illegal_action`` mode (``"terminate"``: every agent gets its
    :func:`illegal_returns` entry and terminates; ``"penalty"``: the agent gets
    ``illegal_penalty`` and the game goes on). The state is unchanged. Returns whether the
    episode ended."""
    env._cumulative_rewards[agent] = 0.0
    env._clear_rewards()
    if env.illegal_action != "terminate":
        env.rewards[agent] = env.illegal_penalty
        return False
    ret = illegal_returns(len(env.possible_agents), seat, env.illegal_penalty)
    for i, ag in enumerate(env.agents):
        env.rewards[ag] = float(ret[i])
        env.terminations[ag] = True
    env._illegal_end = True
    return True


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws a legal action of the env's
    current position (the env keeps ``legal`` up to date). A given mask is used as is."""

    def __init__(self, n: int, legal: np.ndarray, seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self.legal = legal

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None and self.legal.any():
            mask = self.legal
        return super().sample(mask=mask, probability=probability)


def check_action(action: Any, num_actions: int) -> int:
    """An int from a scalar action.

    Raises:
        ValueError: not a scalar integer (wrong shape or dtype).
        ActionOutOfRangeError: outside ``0 .. num_actions - 1``.
    """
    if isinstance(action, (bool, np.bool_)):
        raise ValueError(f"an action is an integer view id, got {action!r}")
    if isinstance(action, (int, np.integer)):
        a = int(action)
    else:
        arr = np.asarray(action)
        if arr.shape != ():
            raise ValueError(f"an action is a scalar integer, got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"an action is an integer view id, got dtype {arr.dtype}")
        a = int(arr)
    if not 0 <= a < num_actions:
        raise ActionOutOfRangeError(a, f"view action ids run from 0 to {num_actions - 1}")
    return a


def draw_module(game: Game) -> Any:
    """The module that draws ``game``'s states (``taluva_ai.games.<name>.draw``, with
    ``render_rgb(state)``).

    Raises:
        ValueError: the game has none (the message suggests ``render_mode="ansi"``).
    """
    name = game.name
    try:
        return importlib.import_module(f"taluva_ai.games.{name}.draw")
    except ImportError:
        raise ValueError(f"game {name!r} has no picture (no taluva_ai.games.{name}.draw); "
                         "use render_mode='ansi'") from None


def render_game(state: GameState, game: Game, mode: str | None) -> str | np.ndarray | None:
    """What ``render()`` returns in ``mode``: ``"ansi"`` the text (``str(state)``),
    ``"human"`` prints it and returns None, ``"rgb_array"`` the picture of
    :func:`draw_module` (``uint8[H, W, 3]``), None for no mode.

    Raises:
        ValueError: ``"rgb_array"`` for a game without a picture.
    """
    if mode == "ansi":
        return str(state)
    if mode == "human":
        print(state, flush=True)
        return None
    if mode == "rgb_array":
        return np.asarray(draw_module(game).render_rgb(state))
    return None


class EnvModes:
    """What every env here takes and does alike: the ``illegal_action`` mode, its penalty
    and the render mode (:meth:`_set_modes`), and ``render()`` of the env's game state
    (:meth:`_game_state`, drawn by :func:`render_game`)."""

    game: Game
    render_mode: str | None
    illegal_action: str
    illegal_penalty: float
    metadata: dict[str, Any]

    def _set_modes(self, illegal_action: str, illegal_penalty: float,
                   render_mode: str | None) -> None:
        """Check and keep the ``illegal_action`` mode, its penalty and the render mode (one
        of ``metadata["render_modes"]``).

        Raises:
            ValueError: an unknown ``illegal_action`` or render mode.
        """
        self.illegal_action = check_illegal_mode(illegal_action)
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.illegal_penalty = float(illegal_penalty)

    def _game_state(self) -> Any:
        """The game's state (None before ``reset``)."""
        raise NotImplementedError

    def render(self) -> str | np.ndarray | None:
        """The state in the render mode: ``"ansi"`` its text (``str(state)``: Taluva's island,
        or a Thurn und Taxis state in full, every hand shown), ``"human"`` that text printed
        to stdout (returns None), ``"rgb_array"`` its picture (``uint8[480, 480, 3]``); None
        without a render mode.

        Raises:
            EnvStateError: before ``reset``.
        """
        st = self._game_state()
        if st is None:
            raise EnvStateError("call reset() before render()")
        return render_game(st, self.game, self.render_mode)


__all__ = ["ILLEGAL_ACTION_MODES", "RENDER_MODES", "EnvModes", "EnvStateError", "MaskedDiscrete",
           "check_action", "check_illegal_mode", "check_render_mode", "draw_module",
           "illegal_returns", "illegal_step_rewards", "render_game"]
