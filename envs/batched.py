"""What the native vector envs (:class:`~taluva_ai.envs.vector.TaluvaVectorEnv`,
:class:`~taluva_ai.envs.tnt_vector.ThurnUndTaxisVectorEnv`) share: N games held in arrays with
a leading game axis and advanced by one compiled call, the checks of ``reset``'s seeds and
options and of a batch of actions, next-step or disabled autoreset, the masked actions (the
``illegal_action`` modes of the scalar envs, per game), the rewards and episode ends, the info
arrays with gymnasium's ``_key`` masks, and the sb3-contrib mask.

A game is its state arrays and its compiled kernel (in the game's env module); a subclass says
which arrays the kernel takes (:meth:`BatchedEnv._kernel_args`), how a game starts
(:meth:`BatchedEnv._new_game`), whose seat each observation is (:meth:`BatchedEnv._seats`) and
what its info holds (:meth:`BatchedEnv._info_fields`). Each env's module docstring is its spec.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from taluva_ai.envs.base import EnvStateError, illegal_returns
from taluva_ai.envs.core import sample_masked
from taluva_ai.errors import ActionOutOfRangeError, IllegalActionError

#: Below this many games a step runs on one thread (the thread pool costs more than it gives).
PARALLEL_MIN_GAMES = 8
#: The keys ``reset(options=...)`` of the vector envs takes.
RESET_OPTIONS = ("reset_mask",)


def check_num_envs(num_envs: Any) -> int:
    """``num_envs`` as an int.

    Raises:
        ValueError: not a positive integer.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
            or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    return int(num_envs)


def check_reset_options(options: Any) -> None:
    """Refuse ``options`` of a vector env's ``reset`` that is not a dict of known keys (a
    misspelt ``reset_mask`` would otherwise reset every game).

    Raises:
        ValueError: naming the unknown key (or the wrong type).
    """
    if options is None:
        return
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = [k for k in options if k not in RESET_OPTIONS]
    if unknown:
        raise ValueError(f"reset options: unknown key {unknown[0]!r}; known: "
                         f"{', '.join(RESET_OPTIONS)}")


def reset_plan(seed: Any, options: dict[str, Any] | None, num_envs: int, started: bool
               ) -> tuple[list[int | None], np.ndarray]:
    """What a vector env's ``reset(seed=..., options=...)`` asks for: one seed per game (an
    int ``s`` gives game ``i`` the seed ``s + i``; a list gives one per game, None entries for
    no new seed; None: no new seed) and the games to reset (``bool[num_envs]``:
    ``options["reset_mask"]``, else all). Everything is checked before any game is touched.

    Raises:
        ValueError: an unknown key in ``options``, a malformed ``reset_mask``, a seed that is
            not a non-negative integer (naming its index), a seed list of the wrong length.
        EnvStateError: a first reset (``started`` False) that does not reset every game.
    """
    check_reset_options(options)

    def one_seed(s: Any, where: str) -> int | None:
        if s is None and where != "seed":
            return None
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"{where} must be a non-negative integer, got {s!r}")
        return int(s)

    if seed is None:
        seeds: list[int | None] = [None] * num_envs
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"seed list must have {num_envs} entries, got {len(seeds)}")
        seeds = [one_seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]
    else:  # every seed is checked before any game is touched
        first = one_seed(seed, "seed")
        assert first is not None
        seeds = [first + i for i in range(num_envs)]
    reset_mask = np.ones(num_envs, dtype=bool)
    if options and "reset_mask" in options:
        rm = np.asarray(options["reset_mask"])
        if rm.shape != (num_envs,) or rm.dtype != np.bool_:
            raise ValueError(f"reset_mask must be bool[{num_envs}], got {rm.dtype}"
                             f"{list(rm.shape)}")
        reset_mask = rm
        if not started and not rm.all():
            raise EnvStateError("the first reset must reset every game")
    return seeds, reset_mask


def check_action_batch(actions: Any, num_envs: int, num_actions: int,
                       ignored: np.ndarray | None = None) -> np.ndarray:
    """``int64[N]`` from a batch of actions; the slots marked in ``ignored`` (``bool[N]``, the
    games an autoreset restarts) may hold any integer, returned as -1.

    Raises:
        ValueError: wrong shape or a non-integer dtype.
        ActionOutOfRangeError: (an ``IndexError``) an id outside ``0 .. num_actions - 1`` in a
            slot that is not ignored.
    """
    a = np.asarray(actions)
    if a.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be integers, got dtype {a.dtype}")
    if ignored is not None and ignored.any():
        a = np.where(ignored, -1, a)
    bad = np.flatnonzero(((a < 0) | (a >= num_actions)) & (ignored is None or ~ignored))
    if bad.size:
        raise ActionOutOfRangeError(
            int(a[bad[0]]), f"view action ids run from 0 to {num_actions - 1}",
            f"action {int(a[bad[0]])} of env {int(bad[0])} is outside the action space "
            f"0..{num_actions - 1}")
    return a.astype(np.int64)


class MetaLayout(NamedTuple):
    """Where a game's ``meta`` array holds the step, the player to move and the end reason,
    and the values of a finished game's step and of a truncated game's end reason."""

    step: int
    player: int
    end: int
    terminal: int
    truncated: int


class BatchedEnv(VectorEnv):
    """N games of one game stepped by its compiled kernel (the module docstring; each
    subclass's module docstring is its spec).

    A subclass's ``__init__`` calls :meth:`_set_autoreset` and :meth:`_init_batch`, makes its
    state arrays (``_meta`` among them: ``int32[N, ...]`` with the step, player and end fields
    named by :attr:`_meta_layout`) and sets :attr:`_step_kernels`.
    """

    #: ``(parallel, serial)`` compiled kernels of one batch step: ``kernel(*before, *shared,
    #: *after)`` with the arrays of :meth:`_kernel_args`.
    _step_kernels: ClassVar[tuple[Any, Any]]
    #: What is read of ``_meta``.
    _meta_layout: ClassVar[MetaLayout]
    #: Whether a truncated game's final return is its reward (it is scored all the same).
    _score_truncated: ClassVar[bool] = False
    #: What a masked action does (``"terminate"``, ``"penalty"`` or ``"raise"``).
    illegal_action: str = "raise"
    illegal_penalty: float = -1.0
    num_actions: int
    _meta: np.ndarray

    # -- set-up -----------------------------------------------------------------------------

    def _set_autoreset(self, autoreset_mode: AutoresetMode | str) -> None:
        """``metadata`` with the autoreset mode.

        Raises:
            ValueError: a mode other than NEXT_STEP or DISABLED.
        """
        mode = AutoresetMode(autoreset_mode)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
            raise ValueError(f"autoreset_mode must be NEXT_STEP or DISABLED, got {mode}")
        self.metadata = {"autoreset_mode": mode, "render_modes": []}

    def _init_batch(self, num_envs: int, copy: bool, parallel: bool | None,
                    single_observation_space: spaces.Dict, single_action_space: spaces.Discrete,
                    obs_shape: tuple[int, ...], num_players: int) -> None:
        """The batch's spaces and the buffers every vector env has: the observations
        (``float32[N, *obs_shape]``), masks, returns (``float64[N, num_players]``), each game's
        generator, done and illegal flags."""
        self.num_envs = b = int(num_envs)
        self.copy = copy
        self.parallel = parallel
        self.num_actions = int(single_action_space.n)
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, b)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, b)
        self._obs = np.zeros((b, *obs_shape), dtype=np.float32)
        self._mask = np.zeros((b, self.num_actions), dtype=np.int8)
        self._ret = np.zeros((b, num_players), dtype=np.float64)
        self._illegal = np.zeros(b, dtype=bool)
        self._gens: list[np.random.Generator] = []
        self._done = np.zeros(b, dtype=bool)  # game over, awaiting a reset
        self._started = False
        self._bench_rng = np.array([12345], dtype=np.uint64)

    # -- what a game adds -------------------------------------------------------------------

    def _new_game(self, i: int) -> None:
        """Start game ``i`` from its generator ``self._gens[i]``."""
        raise NotImplementedError

    def _kernel_args(self, act: np.ndarray
                     ) -> tuple[tuple[np.ndarray, ...], tuple[Any, ...], tuple[np.ndarray, ...]]:
        """``(before, shared, after)``: the kernel's per-game arrays before its shared
        arguments, the shared ones, the per-game ones after them (``act`` among them)."""
        raise NotImplementedError

    def _seats(self) -> np.ndarray:
        """``int64[N]``: the seat each observation is of."""
        raise NotImplementedError

    def _info_fields(self, player: np.ndarray, step: np.ndarray) -> dict[str, np.ndarray]:
        """The info arrays, in order (``player``: the seat to move, -1 once over; ``step``:
        the step kind)."""
        raise NotImplementedError

    def _illegal_error(self, action: int, game: int) -> IllegalActionError:
        """The error of a masked ``action`` in game ``game`` (``illegal_action="raise"``)."""
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------------------

    def _use_parallel(self, games: int) -> bool:
        return self.parallel if self.parallel is not None else games >= PARALLEL_MIN_GAMES

    def _run(self, act: np.ndarray, which: np.ndarray | None = None) -> None:
        """Run the compiled step on every game (``which`` None) or on the games marked (the
        others' outputs are kept)."""
        before, shared, after = self._kernel_args(act)
        parallel, serial = self._step_kernels
        if which is None or which.all():
            (parallel if self._use_parallel(self.num_envs) else serial)(*before, *shared, *after)
            return
        idx = np.flatnonzero(which)
        if idx.size == 0:
            return
        arrays = before + after
        sub = [a[idx] for a in arrays]  # copies: run them, then write them back
        kernel = parallel if self._use_parallel(idx.size) else serial
        kernel(*sub[:len(before)], *shared, *sub[len(before):])
        for a, s in zip(arrays, sub, strict=True):
            a[idx] = s

    def _observation(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}
        return {"observation": self._obs, "action_mask": self._mask}

    def _info(self) -> dict[str, Any]:
        m = self._meta_layout
        step = self._meta[:, m.step]
        player = np.where(step == m.terminal, -1, self._meta[:, m.player]).astype(np.int64)
        ones = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        for key, value in self._info_fields(player, step.astype(np.int64)).items():
            info[key] = value
            info[f"_{key}"] = ones
        return info

    # -- gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start games: all of them, or with ``options={"reset_mask": bool[N]}`` only those
        marked. ``seed``: an int (game ``i`` gets ``seed + i``) or one seed per game.

        Raises:
            ValueError: an unknown key in ``options`` (only ``reset_mask`` is), a malformed
                ``reset_mask`` or seed list.
            EnvStateError: a first reset that does not reset every game.
        """
        b = self.num_envs
        seeds, reset_mask = reset_plan(seed, options, b, self._started)
        if not self._gens:
            self._gens = [seeding.np_random(s)[0] for s in seeds]
        idx = np.flatnonzero(reset_mask)
        for i in idx:
            if seeds[i] is not None:
                self._gens[i] = seeding.np_random(seeds[i])[0]
            self._new_game(int(i))
        self._done[idx] = False
        self._illegal[:] = False
        self._started = True
        self._run(np.full(b, -1, dtype=np.int64), reset_mask)
        return self._observation(), self._info()

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action id per game (the env's module docstring).

        Raises:
            EnvStateError: called before ``reset``; or (autoreset DISABLED) a game that has
                ended is stepped again.
            ValueError: actions of the wrong shape or dtype.
            ActionOutOfRangeError: (an ``IndexError``) an id outside the action space.
            taluva_ai.errors.IllegalActionError: (``illegal_action="raise"``) an action masked
                out in its game; nothing changes.
        """
        if not self._started:
            raise EnvStateError("call reset() before step()")
        b = self.num_envs
        resetting = self._done.copy()
        act = check_action_batch(actions, b, self.num_actions, ignored=resetting)
        if resetting.any() and self.metadata["autoreset_mode"] == AutoresetMode.DISABLED:
            i = int(np.flatnonzero(resetting)[0])
            raise EnvStateError(f"game {i} has ended: reset it with "
                                "reset(options={'reset_mask': ...}) before stepping it")
        live = ~resetting
        legal = self._mask[np.arange(b), np.where(live, act, 0)] != 0
        illegal = live & ~legal
        if illegal.any() and self.illegal_action == "raise":
            i = int(np.flatnonzero(illegal)[0])
            raise self._illegal_error(int(act[i]), i)
        mover = self._seats()
        act = np.where(live & legal, act, -1)
        for j in np.flatnonzero(resetting):
            self._new_game(int(j))
        self._illegal[:] = illegal
        self._run(act)
        m = self._meta_layout
        over = (self._meta[:, m.step] == m.terminal) & live & ~illegal
        truncated = over & (self._meta[:, m.end] == m.truncated)
        terminated = over & ~truncated
        scored = over if self._score_truncated else terminated
        rewards = np.where(scored, self._ret[np.arange(b), mover], 0.0)
        end_illegal = illegal.any() and self.illegal_action == "terminate"
        if illegal.any():
            rewards[illegal] = self.illegal_penalty
            if end_illegal:
                terminated |= illegal
                for j in np.flatnonzero(illegal):
                    self._ret[j] = illegal_returns(self._ret.shape[1], int(mover[j]),
                                                   self.illegal_penalty)
        self._done = terminated | truncated
        info = self._info()
        if end_illegal:
            info["current_player"][illegal] = -1
        return self._observation(), rewards, terminated, truncated, info

    def sample_legal_actions(self) -> np.ndarray:
        """``int64[N]``: a uniformly random legal id per game (compiled; for benchmarks and
        random baselines); 0 for a game with none (a finished game)."""
        a = sample_masked(self._mask, self._bench_rng)
        return np.where(a < 0, 0, a)

    def action_masks(self) -> np.ndarray:
        """``bool[N, A]`` legal masks (the sb3-contrib convention)."""
        return self._mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass


__all__ = ["PARALLEL_MIN_GAMES", "RESET_OPTIONS", "BatchedEnv", "EnvStateError", "MetaLayout",
           "check_action_batch", "check_num_envs", "check_reset_options", "reset_plan"]
