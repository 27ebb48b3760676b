"""Environments for any game of the protocol that gives an observation tensor, and
``taluva_ai/ThurnUndTaxis-v0`` built on them.

``gymnasium.make("taluva_ai/ThurnUndTaxis-v0", opponents=["greedy"])`` (after ``import
taluva_ai.envs``); the PettingZoo AEC env: ``taluva_ai.envs.game_aec_env(num_players=3)``
(:mod:`taluva_ai.envs.game_pettingzoo`).

These envs reach the game only through :mod:`taluva_ai.protocol` (``make_game``, ``apply``,
``legal_action_mask``, ``draw``, ``returns``) plus two optional methods: the game's
``observation_tensor_shape`` and the state's ``observation_tensor(player)`` (what ``player``
knows, as floats in ``[0, 1]``; for Thurn und Taxis ``games/thurn_und_taxis/encoding.py``).

Spaces (``D`` = the tensor length, 536 for Thurn und Taxis; ``A`` = ``game.num_actions``, 327):

- observation: ``Dict({"observation": Box(float32 0..1, (D,)), "action_mask": Box(int8 0/1,
  (A,))})``: the information set of the agent's seat and the legal mask (all zero when the
  seat is not to move);
- action: ``Discrete(A)``, the game's action ids (for Thurn und Taxis: docs/thurn_und_taxis.md);
  the single-agent env's ``action_space.sample()`` without a mask draws a legal action.

Chance nodes are resolved inside ``reset``/``step`` by ``state.draw()`` (seeded from the reset
seed), the opponents' turns by the opponents. Reward: 0 until the game ends, then the seat's
final return (``state.returns()``). Episode end: ``terminated`` when the game ends; for a game
stopped by an engine limit (``state.truncated``: Thurn und Taxis' ``max_rounds``), ``truncated``
instead (the game is still scored, and the reward is its return). Stepping a finished episode
raises ``EnvStateError``.

Illegal actions (a masked id), as ``taluva_ai/Taluva-v0`` (Pgx's convention by default):
``illegal_action="terminate"`` (default) ends the episode (``terminated=True``) with reward
``illegal_penalty`` (default -1) for the agent, the state unchanged, ``info["illegal_action"]``
True and ``info["returns"]`` the forfeit's (the penalty for the agent, ``-illegal_penalty /
(n - 1)`` for each other seat); ``"penalty"`` gives that reward and the episode goes on;
``"raise"`` raises ``IllegalActionError`` (nothing changes). Ids outside the space raise in
every mode.

Info: ``current_player`` (-1 once over), ``agent_seat``, ``action_mask``, ``illegal_action``
after a step, and at the end ``returns`` (every seat's) and ``scores`` when the game has them.

Render modes: ``"human"`` (prints ``str(state)``, the full state, to stdout), ``"ansi"`` (that
text, returned) and ``"rgb_array"`` (``uint8[480, 480, 3]``: the map, routes, houses and
hands; for Thurn und Taxis :mod:`taluva_ai.games.thurn_und_taxis.draw`, for another game its
``draw`` module's ``render_rgb`` when it has one).

Version: v0.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from taluva_ai.envs.base import (
    RENDER_MODES,
    EnvModes,
    EnvStateError,
    MaskedDiscrete,
    check_action,
    draw_module,
    illegal_returns,
    render_game,
)
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import CHANCE, Game, GameState, make_game


def _make_agent(spec: Any, seed: int | None) -> Any:
    """An opponent: a registered name / ``module:Class`` spec, or an object with ``act``."""
    if isinstance(spec, str):
        agents = importlib.import_module("taluva_ai.agents")  # by name: envs import no agent
        try:
            return agents.make_agent(spec, seed=seed)
        except (ValueError, ImportError, AttributeError) as e:
            raise ValueError(f"unknown opponent {spec!r}: {e}") from None
    if hasattr(spec, "act"):
        return spec
    raise ValueError(f"an opponent is a name or an object with act(state), got {spec!r}")


def tensor_game(name: str, options: dict[str, Any]) -> Game:
    """``make_game(name, **options)``, checked to offer an observation tensor.

    Raises:
        ValueError: the game has none. (KeyError, TypeError: from ``make_game``.)
    """
    game = make_game(name, **options)
    if not hasattr(game, "observation_tensor_shape"):
        raise ValueError(f"game {name!r} has no observation tensor (observation_tensor_shape); "
                         "these envs need one")
    return game


def game_spaces(game: Game) -> tuple[spaces.Dict, spaces.Discrete]:
    """The observation and action spaces of the module docstring for ``game``."""
    shape = tuple(game.observation_tensor_shape)  # type: ignore[attr-defined]
    obs = spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, shape, np.float32),
        "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
    })
    return obs, spaces.Discrete(game.num_actions)


class GameEnv(EnvModes, gym.Env):
    """One agent plays one seat of a protocol game against opponents (module docstring).

    Args:
        game: a registered game name (default ``"thurn_und_taxis"``).
        opponents: ``num_players - 1`` opponents for the other seats, in seat order after
            the agent's: agent specs (``"random"``, ``"greedy"``, ``"mcts:sims=100"``,
            ``"module:Class"``) or objects with ``act(state)``.
        num_players: by default ``len(opponents) + 1``.
        agent_seat: the agent's seat, or ``"random"`` (drawn at each reset).
        render_mode: None, ``"human"``, ``"ansi"`` (``str(state)``: the full state, hands
            included) or ``"rgb_array"`` (module docstring).
        illegal_action: ``"terminate"`` (default), ``"penalty"`` or ``"raise"`` (module
            docstring).
        illegal_penalty: the reward of an illegal action (default -1).
        **options: the game's options (e.g. ``max_rounds=50``).

    Raises:
        ValueError: a bad argument (unknown game or opponent, wrong number of opponents, a
            bad seat or option), named in the message.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 2}  # noqa: RUF012

    def __init__(self, game: str = "thurn_und_taxis", opponents: list[Any] | tuple[Any, ...]
                 = ("random",), num_players: int | None = None,
                 agent_seat: int | str = 0, render_mode: str | None = None,
                 illegal_action: str = "terminate", illegal_penalty: float = -1.0,
                 **options: Any) -> None:
        opponents = list(opponents)
        self._set_modes(illegal_action, illegal_penalty, render_mode)
        n = len(opponents) + 1 if num_players is None else num_players
        if len(opponents) != n - 1:
            raise ValueError(f"{len(opponents)} opponents for {n} seats: give num_players - 1")
        if "num_players" in options:
            raise ValueError("give num_players as its own argument")
        try:
            self.game = tensor_game(game, {"num_players": n, **options})
        except (KeyError, TypeError) as e:
            raise ValueError(str(e.args[0] if e.args else e)) from None
        if agent_seat != "random" and (not isinstance(agent_seat, (int, np.integer))
                                       or isinstance(agent_seat, bool)
                                       or not 0 <= agent_seat < n):
            raise ValueError(f"agent_seat must be a seat 0..{n - 1} or 'random', got "
                             f"{agent_seat!r}")
        if render_mode == "rgb_array":
            draw_module(self.game)
        self.agent_seat_option = agent_seat
        self.opponent_specs = opponents
        self.opponents = [_make_agent(o, None) for o in opponents]
        self.observation_space, _ = game_spaces(self.game)
        #: the agent's legal mask, kept up to date: ``action_space.sample()`` draws from it
        self._legal = np.zeros(self.game.num_actions, dtype=np.int8)
        self.action_space = MaskedDiscrete(self.game.num_actions, self._legal)
        self.state: GameState | None = None
        self.seat = 0 if agent_seat == "random" else int(agent_seat)
        self._done = False

    def _game_state(self) -> GameState | None:
        return self.state

    def _others(self) -> dict[int, Any]:
        seats = [s for s in range(self.game.num_players) if s != self.seat]
        return dict(zip(seats, self.opponents, strict=True))

    def _advance(self) -> None:
        """Chance nodes and the opponents' turns, until the agent moves or the game ends."""
        assert self.state is not None
        others = self._others()
        while not self.state.is_terminal() and self.state.current_player != self.seat:
            p = self.state.current_player
            if p == CHANCE:
                self.state.draw()
            else:
                self.state.apply(int(others[p].act(self.state)))

    def _obs(self) -> dict[str, np.ndarray]:
        assert self.state is not None
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self.state.current_player == self.seat:
            mask[self.state.legal_actions()] = 1
        self._legal[:] = mask
        tensor = self.state.observation_tensor(self.seat)  # type: ignore[attr-defined]
        return {"observation": np.asarray(tensor, dtype=np.float32), "action_mask": mask}

    def _info(self, obs: dict[str, np.ndarray]) -> dict[str, Any]:
        assert self.state is not None
        info: dict[str, Any] = {"current_player": self.state.current_player
                                if not self.state.is_terminal() else -1,
                                "agent_seat": self.seat, "action_mask": obs["action_mask"]}
        if self.state.is_terminal():
            info["returns"] = [float(x) for x in self.state.returns()]
            scores = getattr(self.state, "scores", None)
            if scores is not None:
                info["scores"] = list(scores())
        return info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """A new game: its seed, the agent's seat (``"random"``) and the opponents' seeds are
        drawn from the env's generator (``seed`` reseeds it)."""
        super().reset(seed=seed)
        rng = self.np_random
        if self.agent_seat_option == "random":
            self.seat = int(rng.integers(self.game.num_players))
        for o in self.opponents:
            if hasattr(o, "reset"):
                o.reset(int(rng.integers(2**31 - 1)))
        self.state = self.game.new_initial_state(seed=int(rng.integers(2**62)))
        self._done = False
        self._advance()
        obs = self._obs()
        return obs, self._info(obs)

    def action_masks(self) -> np.ndarray:
        """``bool[A]`` legal mask of the agent (sb3-contrib's MaskablePPO reads it)."""
        return self._obs()["action_mask"].astype(bool)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                         dict[str, Any]]:
        """Apply the agent's action, then the chance nodes and opponents' turns.

        Raises:
            EnvStateError: before ``reset`` or after the episode ended.
            ValueError: a non-scalar or non-integer action.
            ActionOutOfRangeError: an id outside the action space.
            IllegalActionError: a masked action with ``illegal_action="raise"`` (nothing
                changes).
        """
        if self.state is None:
            raise EnvStateError("call reset() before step()")
        if self._done:
            raise EnvStateError("the episode is over: call reset()")
        a = check_action(action, self.game.num_actions)
        if not self.state.legal_action_mask()[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(self.state.action_to_string(a),
                                         "masked out: not a legal action (see action_mask)")
            obs = self._obs()
            info = self._info(obs)
            info["illegal_action"] = True
            end = self.illegal_action == "terminate"
            if end:  # the agent forfeits (module docstring)
                self._done = True
                info["current_player"] = -1
                info["returns"] = [float(x) for x in illegal_returns(
                    self.game.num_players, self.seat, self.illegal_penalty)]
            return obs, self.illegal_penalty, end, False, info
        self.state.apply(a)
        self._advance()
        obs = self._obs()
        reward, terminated, truncated = 0.0, False, False
        if self.state.is_terminal():
            self._done = True
            reward = float(self.state.returns()[self.seat])
            truncated = bool(getattr(self.state, "truncated", False))
            terminated = not truncated
        info = self._info(obs)
        info["illegal_action"] = False
        return obs, reward, terminated, truncated, info


class ThurnUndTaxisEnv(GameEnv):
    """``taluva_ai/ThurnUndTaxis-v0``: :class:`GameEnv` of Thurn und Taxis (THURN-UND-TAXIS.md;
    options ``all_provinces_rule``, ``route_tile_fallback``, ``max_rounds``)."""

    def __init__(self, opponents: list[Any] | tuple[Any, ...] = ("random",),
                 num_players: int | None = None, agent_seat: int | str = 0,
                 render_mode: str | None = None, illegal_action: str = "terminate",
                 illegal_penalty: float = -1.0, **options: Any) -> None:
        super().__init__("thurn_und_taxis", opponents, num_players, agent_seat, render_mode,
                         illegal_action, illegal_penalty, **options)


__all__ = ["GameEnv", "ThurnUndTaxisEnv", "draw_module", "game_spaces", "render_game",
           "tensor_game"]
