"""``taluva_ai/TaluvaSolo-v0``: the solo variant of Taluva (docs/solo.md) as a single-agent env.

``gymnasium.make("taluva_ai/TaluvaSolo-v0")`` (after ``import taluva_ai.envs``); the native
batched form is :class:`TaluvaSoloVectorEnv` (``gymnasium.make_vec(...,
vectorization_mode="vector_entry_point")``).

Spaces: the encoding and action ids of ``Taluva-v0`` for one seat (docs/encoding.md), with the
solo planes and ids (``C = 66`` planes, ``S = 2 view_radius + 1``, ``A = 14 S^2 + 6``):

- observation: ``Dict({"observation": Box(float32, (C, S, S)), "action_mask": Box(int8 0/1,
  (A,))})``;
- action: ``Discrete(A)``: a view id: tile placements and builds as in ``Taluva-v0``, then
  ``14 S^2 + k``: take a bonus tile from the draw pile (k = 0), take the face-up tile (1),
  stop taking bonus tiles (2), box a hut (3), a temple (4), a tower (5).
  ``action_space.sample()`` without a mask samples a legal action.

An episode is one solo game; chance nodes (the draw pile's tiles and the bonus stack's
face-up tiles, from the deck shuffled by the reset seed) are resolved inside ``step``.

Reward: ``reward="score"`` (default): 0 until the game ends, then the final score (SOLO.md 5;
about -40 to 80). ``reward="shaped"``: at every step the change of the running score (the
score of the position as if the game ended there), the first step also adding the running
score of the start; an episode's rewards add up to the final score either way.

Illegal actions (a masked id), as ``Taluva-v0`` (Pgx's convention by default):
``illegal_action="terminate"`` (default) ends the episode (``terminated=True``) with reward
``illegal_penalty`` (default -1), the state unchanged, ``info["illegal_action"]`` True and
``info["step_kind"]`` ``"over"``; ``"penalty"`` gives that reward and the episode goes on;
``"raise"`` raises ``IllegalActionError`` (nothing changes).

Episode end: ``terminated`` when the game ends (SOLO.md 4) or an illegal action ended it;
``truncated`` only if the engine's board bound removed every placement (never seen). Stepping
after the end raises ``EnvStateError``. Render modes: ``"human"`` (prints the text),
``"ansi"``, ``"rgb_array"``, as ``Taluva-v0``.

Info: ``step_kind`` (``"tile"``, ``"build"``, ``"bonus"``, ``"box"``, ``"over"``),
``action_mask``, ``score`` (the running score), ``outside`` (legal engine actions the view
hides); at the end also ``score_breakdown`` (by line of the scoring table) and ``result_band``.

Version: v0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from taluva_ai.envs.taluva_env import TaluvaViewEnv
from taluva_ai.envs.vector import (
    END_TRUNCATED,
    TaluvaVectorEnv,
    check_reset_options,
)
from taluva_ai.games.taluva import RuleSet
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    NUM_SOLO_ACTIONS,
    num_planes,
)
from taluva_ai.games.taluva.state import M_END, M_STEP

SOLO_STEP_NAMES = {1: "tile", 2: "build", 3: "over", 4: "bonus", 5: "box"}
REWARDS = ("score", "shaped")


def make_solo_rules(rules: RuleSet | dict[str, Any] | None) -> RuleSet:
    """The RuleSet of a solo env: ``rules`` (a RuleSet or a dict of SOLO.md options) with
    ``solo=True``.

    Raises:
        ValueError: a bad option (named in the message), or a multiplayer RuleSet.
    """
    if isinstance(rules, RuleSet):
        if not rules.solo:
            raise ValueError("the solo env needs a solo RuleSet (solo=True)")
        return rules
    opts = dict(rules or {})
    opts["solo"] = True
    opts.setdefault("num_players", 1)
    return RuleSet.from_dict(opts)


def game_seed(gen: np.random.Generator) -> int:
    """The seed of ``TaluvaGame.new_initial_state`` drawn from an env's generator (the same
    draw in the scalar and the vector env, so their games agree)."""
    return int(gen.integers(0, 2**63 - 1))


class TaluvaSoloEnv(TaluvaViewEnv):
    """The solo variant for one agent (the module docstring is the spec).

    Args:
        rules: SOLO.md options (a solo RuleSet or a dict, e.g. ``{"pattern_overlap":
            "disjoint"}``).
        reward: ``"score"`` (the final score at the end) or ``"shaped"`` (running-score
            changes).
        view_radius: the view's radius (default 13).
        illegal_action: ``"terminate"`` (default), ``"penalty"`` or ``"raise"`` (module
            docstring).
        illegal_penalty: the reward of an illegal action (default -1).
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.

    Raises:
        ValueError: a bad argument, named in the message.
    """

    def __init__(
        self,
        rules: RuleSet | dict[str, Any] | None = None,
        reward: str = "score",
        view_radius: int = DEFAULT_VIEW_RADIUS,
        illegal_action: str = "terminate",
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        self._set_modes(illegal_action, illegal_penalty, render_mode)
        self.rules = make_solo_rules(rules)
        self.reward_mode = reward
        self._init_view(self.rules, view_radius, num_planes(1, solo=True), NUM_SOLO_ACTIONS)
        self.num_actions = int(self._mask.size)
        self._score = 0

    def _kernel(self, view_action: int) -> None:
        self._run_kernel(view_action, 0)

    def _running_score(self) -> int:
        assert self.state is not None
        st = self.state
        rules, nbr, cell_of, _, _ = self.game.kernel_args()
        return int(SK.running_score(st.cells, st.players, st.meta, rules, nbr, cell_of))

    def _info(self) -> dict[str, Any]:
        assert self.state is not None
        step = int(self.state.meta[M_STEP])
        info: dict[str, Any] = {
            "step_kind": SOLO_STEP_NAMES.get(step, "chance"),
            "action_mask": self._mask.copy(),
            "score": self._score,
            "outside": self._outside,
        }
        if self.state.is_terminal():
            info["score_breakdown"] = self.state.score_breakdown()
            info["result_band"] = self.state.result_band()
        return info

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new game (set-up and deck from ``seed`` / the env's generator)."""
        super().reset(seed=seed)
        self.state = self.game.new_initial_state(seed=game_seed(self.np_random))
        self._illegal_end = False
        self._kernel(-1)
        self._score = self._running_score()
        self._first = True
        return self._obs_dict(), self._info()

    def _play(self, action: int) -> float:
        st = self.state
        assert st is not None
        before = self._score
        self._kernel(action)
        self._score = self._running_score()
        over = st.is_terminal() and st.meta[M_END] != END_TRUNCATED
        if self.reward_mode == "shaped":  # the first step counts from 0 (module docstring)
            reward = float(self._score - (0 if self._first else before))
        else:
            reward = float(self._ret[0]) if over else 0.0
        self._first = False
        return reward


class TaluvaSoloVectorEnv(TaluvaVectorEnv):
    """N solo games stepped by the compiled kernels (:class:`TaluvaVectorEnv` with the solo
    rules; spaces, rewards and episode end as :class:`TaluvaSoloEnv`, autoreset and seeds as
    :class:`TaluvaVectorEnv`: ``reset(seed=s)`` plays game ``i`` as ``TaluvaSoloEnv.reset(
    seed=s + i)``). Info keys: ``step_kind`` (1 tile, 2 build, 3 over, 4 bonus, 5 box),
    ``score`` (running score per game), ``outside``, ``rewards`` (the final score once over).

    Args:
        num_envs: N >= 1.
        rules: SOLO.md options (a solo RuleSet or a dict).
        reward: ``"score"`` or ``"shaped"`` (module docstring).
        view_radius, autoreset_mode, copy, parallel: as :class:`TaluvaVectorEnv`.

    Raises:
        ValueError: a bad argument (named in the message).
    """

    def __init__(
        self,
        num_envs: int = 1,
        rules: RuleSet | dict[str, Any] | None = None,
        reward: str = "score",
        view_radius: int = DEFAULT_VIEW_RADIUS,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        render_mode: str | None = None,
        parallel: bool | None = None,
    ) -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        self.reward_mode = reward
        self._solo_rules = make_solo_rules(rules)
        super().__init__(num_envs=num_envs, num_players=1, opponents=None, agent_seat=0,
                         view_radius=view_radius, rules=self._solo_rules,
                         autoreset_mode=autoreset_mode, copy=copy, render_mode=render_mode,
                         parallel=parallel)
        self._score = np.zeros(self.num_envs, dtype=np.int64)
        self._first = np.ones(self.num_envs, dtype=bool)

    def _make_rules(self, num_players: int, rules: RuleSet | dict[str, Any] | None) -> RuleSet:
        return self._solo_rules

    def _scores(self) -> np.ndarray:
        rules, nbr, cell_of, _, _ = self.game.kernel_args()
        out = np.zeros(self.num_envs, dtype=np.int64)
        SK.batch_running_score(self._cells, self._players, self._meta, rules, nbr, cell_of, out)
        return out

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        info["score"] = self._score.copy()
        info["_score"] = np.ones(self.num_envs, dtype=bool)
        return info

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """As :meth:`TaluvaVectorEnv.reset`."""
        check_reset_options(options)
        which = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            which = np.asarray(options["reset_mask"], dtype=bool)
        obs, _ = super().reset(seed=seed, options=options)
        self._score = np.where(which, self._scores(), self._score)
        self._first |= which
        return obs, self._info()

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """As :meth:`TaluvaVectorEnv.step`, with the solo rewards (module docstring)."""
        resetting = self._done.copy()
        obs, rewards, terminated, truncated, _ = super().step(actions)
        new = self._scores()
        if self.reward_mode == "shaped":
            # the first step of a game counts from 0: the rewards add up to the final score
            prev = np.where(self._first, 0, self._score)
            rewards = np.where(resetting, 0.0, (new - prev).astype(np.float64))
        self._first = resetting.copy()
        self._score = new
        return obs, rewards, terminated, truncated, self._info()
