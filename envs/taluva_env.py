"""``taluva_ai/Taluva-v0``: one agent plays one seat of Taluva against given opponents.

``gymnasium.make("taluva_ai/Taluva-v0", opponents=["random"])`` (after ``import
taluva_ai.envs``).

Spaces (``C`` planes, ``S = 2 view_radius + 1``, ``A = 14 S^2``; docs/encoding.md):

- observation: ``Dict({"observation": Box(float32, (C, S, S)), "action_mask": Box(int8 0/1,
  (A,))})``: the planes from the agent's view and the legal mask of the view's action ids;
- action: ``Discrete(A)``, a view id (a tile placement or a build, docs/encoding.md).
  ``action_space.sample()`` without a mask samples a legal action of the current position.

A turn is two decisions (place the tile, then build); chance nodes (the next tile of the deck,
shuffled from the reset seed) and the opponents' turns are played inside ``step``.

Seats: ``opponents`` is a list of ``num_players - 1`` players for the other seats, in seat order
after ``agent_seat``: built-in names ``"random"`` and ``"greedy"`` (compiled), any other name of
the agent registry (``"mcts"``, ``"module:Class"``, made by name through ``taluva_ai.agents``), or
objects with ``act(state) -> engine action id``. ``opponents=None`` is self-play: the caller
moves for every seat and the planes take the view of the player to move. ``agent_seat`` is a
seat or ``"random"`` (drawn at each reset).

Reward: 0 until the game ends; then the agent seat's final return (self-play: the return of the
seat that took the last action): +1 a win, ``-1/(n-1)`` a loss, shares for shared wins, ranked
play linear in place (docs/engine.md).

Illegal actions (a masked id; ``illegal_action=``, Pgx's convention by default):

- ``"terminate"`` (default): the episode ends (``terminated=True``) with reward
  ``illegal_penalty`` (default -1) for the actor; the state is unchanged (the action is not
  played); ``info["illegal_action"]`` is True, ``info["rewards"]`` gives the actor the penalty
  and each other seat ``-illegal_penalty / (n - 1)`` (a forfeit, as in tournaments),
  ``info["step_kind"]`` is ``"over"``;
- ``"penalty"``: the state is unchanged, the reward is ``illegal_penalty``, the episode goes on
  and ``info["illegal_action"]`` is True;
- ``"raise"``: ``IllegalActionError`` (nothing changes; for debugging an agent).

Ids outside the action space and non-integer actions raise in every mode.

Episode end: ``terminated`` when the game ends with a result (or an illegal action ended it);
``truncated`` when the board bound removed every placement (no result). Stepping after the end
raises ``EnvStateError``.

Info: ``current_player`` (seat to move, -1 once over), ``step_kind`` (``"tile"``, ``"build"``,
``"over"``), ``action_mask`` (as in the observation), ``rewards`` (every seat's return),
``outside`` (legal engine actions hidden by the view), ``agent_seat``.

Render modes: ``"human"`` (prints the island as text to stdout, returns None), ``"ansi"`` (the
same text, returned) and ``"rgb_array"`` (a matplotlib picture: terrains by colour, levels as
numbers, buildings by player colour; :mod:`taluva_ai.games.taluva.draw`).

Version: v0.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from taluva_ai.envs.base import (
    ILLEGAL_ACTION_MODES,
    RENDER_MODES,
    EnvModes,
    EnvStateError,
    MaskedDiscrete,
    check_action,
    check_illegal_mode,
    illegal_returns,
    illegal_step_rewards,
)
from taluva_ai.envs.core import (
    BUILTIN_OPPONENTS,
    EXTERNAL,
    advance,
    env_step,
)
from taluva_ai.envs.vector import END_TRUNCATED, OBS_HIGH, STEP_TERMINAL, make_rules
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.taluva import RuleSet, TaluvaGame, TaluvaState
from taluva_ai.games.taluva.encoding import DEFAULT_VIEW_RADIUS, make_view, num_planes
from taluva_ai.games.taluva.state import M_END, M_PLAYER, M_STEP, new_arrays
from taluva_ai.games.taluva.tiles import full_tile_set

STEP_NAMES = {1: "tile", 2: "build", 3: "over"}


def resolve_opponent(spec: Any, seed: int | None) -> tuple[int, Any]:
    """``(seat kind, agent object or None)`` of one opponent spec.

    Raises:
        ValueError: an unknown name (the message names it and the built-in ones).
    """
    if isinstance(spec, str):
        if spec in BUILTIN_OPPONENTS:
            return BUILTIN_OPPONENTS[spec], None
        try:
            agents = importlib.import_module("taluva_ai.agents")
            return EXTERNAL, agents.make_agent(spec, seed=seed)
        except (ValueError, ImportError, AttributeError) as e:
            raise ValueError(f"unknown opponent {spec!r} (built-in: "
                             f"{', '.join(sorted(BUILTIN_OPPONENTS))}): {e}") from None
    if hasattr(spec, "act"):
        return EXTERNAL, spec
    raise ValueError(f"an opponent is a name or an object with act(state), got {spec!r}")


class TaluvaViewEnv(EnvModes, gym.Env):
    """What ``Taluva-v0`` and ``TaluvaSolo-v0`` share: one Taluva state stepped by the
    compiled :func:`~taluva_ai.envs.core.env_step` on view ids (docs/encoding.md), the
    observation dict, the step's checks, the sb3-contrib mask and the pictures. Subclasses
    call :meth:`_set_modes` and :meth:`_init_view` (the game, the view, the spaces and the
    kernel buffers) and give ``_info()`` and ``_play()`` (a legal view id played: the
    reward)."""

    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": RENDER_MODES, "render_fps": 2}
    game: TaluvaGame
    view: Any
    state: TaluvaState | None
    illegal_action: str
    illegal_penalty: float
    _rng: np.ndarray
    _seat_kind: np.ndarray
    _center: np.ndarray
    _obs: np.ndarray
    _mask: np.ndarray
    _ret: np.ndarray
    _outside: int
    #: an illegal action ended the episode (``illegal_action="terminate"``)
    _illegal_end: bool = False

    def _init_view(self, rules: RuleSet, view_radius: int, planes: int,
                   extra_actions: int = 0) -> None:
        """The game of ``rules``, the view, the spaces (``planes`` planes; the view's ids and
        ``extra_actions`` more) and the kernel's buffers."""
        self.game = TaluvaGame(rules)
        self.view = make_view(view_radius)
        s = self.view.side
        num_actions = self.view.num_actions + extra_actions
        self._obs = np.zeros((planes, s, s), dtype=np.float32)
        self._mask = np.zeros(num_actions, dtype=np.int8)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, self._obs.shape, np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        })
        self.action_space = MaskedDiscrete(num_actions, self._mask)
        self._center = np.zeros(2, dtype=np.int64)
        self._ret = np.zeros(rules.num_players, dtype=np.float64)
        self._rng = np.zeros(1, dtype=np.uint64)
        self._seat_kind = np.full(4, EXTERNAL, dtype=np.int8)
        self._outside = 0
        self.state = None

    def _game_state(self) -> TaluvaState | None:
        return self.state

    def _info(self) -> dict[str, Any]:
        raise NotImplementedError

    def _play(self, action: int) -> float:
        """Play the legal view id ``action`` (and what follows it in the env); the reward."""
        raise NotImplementedError

    def _run_kernel(self, view_action: int, perspective: int) -> None:
        """``env_step`` on the state: play ``view_action`` (-1: none), advance through chance
        and built-in seats, encode for ``perspective`` (-1: the player to move)."""
        assert self.state is not None
        st = self.state
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        self._outside = int(env_step(st.cells, st.players, st.deck, st.meta, self._rng, rules,
                                     nbr, cell_of, hexqr, origin, self._seat_kind, perspective,
                                     self.view.radius, self.view.valid, view_action,
                                     self._center, self._obs, self._mask, self._ret))

    def _obs_dict(self) -> dict[str, np.ndarray]:
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

    def _checked_action(
        self, action: Any
    ) -> tuple[int, tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]] | None]:
        """``(id, None)`` for a legal view id; ``(id, the step's result)`` for a masked one in
        the ``"terminate"`` and ``"penalty"`` modes (module docstring).

        Raises:
            EnvStateError: before ``reset`` or after the episode ended.
            ValueError: a non-scalar or non-integer action.
            ActionOutOfRangeError: an id outside the action space.
            IllegalActionError: a masked action with ``illegal_action="raise"``.
        """
        if self.state is None:
            raise EnvStateError("call reset() before step()")
        if self._illegal_end:
            raise EnvStateError("the episode is over (an illegal action ended it): call "
                                "reset() before step()")
        if self.state.is_terminal():
            raise EnvStateError("the game is over: call reset() before step()")
        a = check_action(action, int(self._mask.size))
        if self._mask[a]:
            return a, None
        if self.illegal_action == "raise":
            raise IllegalActionError(a, "masked out: not a legal action of the view "
                                     "(see action_mask)")
        info = self._info()
        info["illegal_action"] = True
        end = self.illegal_action == "terminate"
        if end:
            self._illegal_end = True
            if "rewards" in info:  # every seat's return: the actor forfeits
                actor = int(info["current_player"])
                info["rewards"] = illegal_returns(info["rewards"].size, actor,
                                                  self.illegal_penalty)
                info["current_player"] = -1
            info["step_kind"] = "over"
        return a, (self._obs_dict(), self.illegal_penalty, end, False, info)

    def _result(self, reward: float
                ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The step's return after a legal action (terminated or truncated by the end)."""
        assert self.state is not None
        st = self.state
        over = st.is_terminal()
        truncated = bool(over and st.meta[M_END] == END_TRUNCATED)
        info = self._info()
        info["illegal_action"] = False
        return self._obs_dict(), reward, bool(over and not truncated), truncated, info

    def action_masks(self) -> np.ndarray:
        """``bool[A]`` legal mask of the view's ids (the sb3-contrib convention)."""
        return self._mask.astype(bool)

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply the agent's view id (the env's module docstring).

        Raises:
            EnvStateError: before ``reset`` or after the episode ended.
            ValueError: a non-scalar or non-integer action.
            ActionOutOfRangeError: an id outside the action space.
            IllegalActionError: a masked action with ``illegal_action="raise"``.
        """
        a, penalty = self._checked_action(action)
        if penalty is not None:
            return penalty
        return self._result(self._play(a))


class TaluvaEnv(TaluvaViewEnv):
    """Taluva for one agent (the module docstring is the spec).

    Args:
        opponents: ``num_players - 1`` opponents, or None for self-play.
        num_players: 2..4; by default ``len(opponents) + 1`` (in self-play, the rules'
            ``num_players``, else 2).
        agent_seat: the agent's seat, or ``"random"``.
        view_radius: the view's radius (default 13).
        rules: other rule options (a RuleSet or a dict); a ``num_players`` there must equal
            the seat count.
        illegal_action: ``"terminate"`` (default: an illegal action ends the episode with
            ``illegal_penalty`` for the agent), ``"penalty"`` (the penalty, the episode goes
            on) or ``"raise"`` (``IllegalActionError``); module docstring.
        illegal_penalty: the reward of an illegal action (default -1).
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.

    Raises:
        ValueError: a bad argument (seat count outside 2..4, opponents of the wrong number, an
            unknown opponent name, an unknown render mode or illegal_action...), named in the
            message.
    """

    def __init__(
        self,
        opponents: list[Any] | None = None,
        num_players: int | None = None,
        agent_seat: int | str = 0,
        view_radius: int = DEFAULT_VIEW_RADIUS,
        rules: RuleSet | dict[str, Any] | None = None,
        illegal_action: str = "terminate",
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        if opponents is not None and not isinstance(opponents, (list, tuple)):
            raise ValueError(f"opponents must be a list (or None for self-play), got {opponents!r}")
        if num_players is None and opponents is not None:
            num_players = len(opponents) + 1
        elif num_players is None:  # self-play: the seats of the rules, else 2
            num_players = (rules.num_players if isinstance(rules, RuleSet)
                           else (rules or {}).get("num_players", 2))
        self.rules = make_rules(num_players, rules)
        n = self.rules.num_players
        if opponents is not None and len(opponents) != n - 1:
            raise ValueError(f"{n} seats need {n - 1} opponents, got {len(opponents)}")
        if not (agent_seat == "random" or (isinstance(agent_seat, int)
                                           and 0 <= agent_seat < n)):
            raise ValueError(f"agent_seat must be a seat 0..{n - 1} or 'random', got "
                             f"{agent_seat!r}")
        self._set_modes(illegal_action, illegal_penalty, render_mode)
        self._init_view(self.rules, view_radius, num_planes(n))
        self.opponent_specs = list(opponents) if opponents is not None else None
        self._resolved = [resolve_opponent(o, None) for o in (opponents or [])]
        self.agent_seat_option = agent_seat
        self.agent_seat = 0 if agent_seat == "random" else int(agent_seat)
        self._agents: dict[int, Any] = {}

    # -- internals --------------------------------------------------------------------------

    def _kernel(self, view_action: int) -> None:
        self._run_kernel(view_action,
                         self.agent_seat if self.opponent_specs is not None else -1)

    def _play_external_opponents(self) -> None:
        """Let Python opponents move until the agent is to move or the game is over."""
        assert self.state is not None
        st = self.state
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        ids = np.empty(8 * self.game.num_cells, dtype=np.int64)
        vals = np.empty(8 * self.game.num_cells, dtype=np.float64)
        moved = False
        while (not st.is_terminal() and self.opponent_specs is not None
               and int(st.meta[M_PLAYER]) != self.agent_seat):
            p = int(st.meta[M_PLAYER])
            st.apply(int(self._agents[p].act(st)))
            advance(st.cells, st.players, st.deck, st.meta, rules, nbr, cell_of, hexqr, origin,
                    self._seat_kind, self._rng, ids, vals)
            moved = True
        if moved:
            self._kernel(-1)

    def _info(self) -> dict[str, Any]:
        assert self.state is not None
        step = int(self.state.meta[M_STEP])
        return {
            "current_player": -1 if step == STEP_TERMINAL else int(self.state.meta[M_PLAYER]),
            "step_kind": STEP_NAMES.get(step, "chance"),
            "action_mask": self._mask.copy(),
            "rewards": self._ret.copy(),
            "outside": self._outside,
            "agent_seat": self.agent_seat,
        }

    # -- gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new game (deck shuffled from ``seed`` / the env's generator)."""
        super().reset(seed=seed)
        gen = self.np_random
        deck = gen.permutation(full_tile_set()).astype(np.int8)
        n = self.rules.num_players
        cells, players, d, meta = new_arrays(n, deck, self.game.num_cells,
                                             self.rules.tile_preview)
        self.state = TaluvaState(self.game, cells, players, d, meta)
        self._rng[0] = np.uint64(gen.integers(0, 2**63))
        if self.agent_seat_option == "random":
            self.agent_seat = int(gen.integers(n))
        self._seat_kind[:] = EXTERNAL
        self._agents = {}
        self._illegal_end = False
        if self.opponent_specs is not None:
            for j, (kind, agent) in enumerate(self._resolved):
                seat = (self.agent_seat + 1 + j) % n
                self._seat_kind[seat] = kind
                if agent is not None:
                    self._agents[seat] = agent
                    if hasattr(agent, "reset"):
                        agent.reset(int(gen.integers(0, 2**31)) if seed is not None else None)
        self._kernel(-1)
        self._play_external_opponents()
        return self._obs_dict(), self._info()

    def _play(self, action: int) -> float:
        st = self.state
        assert st is not None
        mover = self.agent_seat if self.opponent_specs is not None else int(st.meta[M_PLAYER])
        self._kernel(action)
        self._play_external_opponents()
        over = st.is_terminal() and st.meta[M_END] != END_TRUNCATED
        return float(self._ret[mover]) if over else 0.0


__all__ = ["ILLEGAL_ACTION_MODES", "RENDER_MODES", "STEP_NAMES", "MaskedDiscrete", "TaluvaEnv",
           "TaluvaViewEnv", "check_action", "check_illegal_mode", "illegal_returns",
           "illegal_step_rewards", "resolve_opponent"]
