"""Monte Carlo tree search for 2-4 players with chance nodes (``mcts`` agent).

The tree lives in flat arrays (:mod:`mcts_tree`) with Numba-compiled selection and backup; the
game is reached only through the protocol (``clone``, ``apply``, ``legal_actions``,
``chance_outcomes``, ``returns``), and leaves are valued by an :class:`Evaluator`.

- UCT with rollout evaluators, PUCT with evaluators that give priors.
- Chance nodes for the tile draw: every outcome of ``chance_outcomes()`` is a child with its
  probability; ``chance="expand"`` visits outcomes in proportion to their probability
  (stratified, deterministic), ``chance="sample"`` samples one per simulation.
- Values are vectors, one entry per seat (max^n backup), so 3 and 4 players work; one seat
  maximises its expected return (a single-player game such as solo Taluva, whose return is a
  score). A game whose returns are not on a [-1, 1] scale says how to bring them there with
  the optional ``state.value_normalization() -> (offset, scale)``: the tree stores
  ``(return - offset) / scale`` (so ``c`` and ``fpu`` keep their meaning); statistics show
  returns on the game's own scale.
- Budget: ``sims`` simulations, or ``time`` seconds per move; temperature; Dirichlet noise at
  the root; tree reuse between moves; ``leaf_batch`` leaves collected with virtual loss and
  evaluated together.
- Root selection: PUCT, or Gumbel sequential halving (``root=gumbel``; Danihelka et al. 2022,
  :mod:`mcts_gumbel`) for low simulation counts.
- :meth:`MCTSAgent.search_steps` is the search as a generator that hands out its leaf batches
  and takes their evaluations back, so a caller can run many searches (many games) at once
  and evaluate all their leaves in one network call (AlphaZero self-play, KataGo-style).
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from taluva_ai.agents.base import BUDGET_LIMITS, Agent
from taluva_ai.agents.evaluators import Evaluator, RolloutEvaluator
from taluva_ai.agents.mcts_gumbel import (
    completed_q,
    considered_visits,
    gumbel_child,
    improved_policy,
    score_considered,
)
from taluva_ai.agents.mcts_tree import (
    CHANCE as K_CHANCE,
)
from taluva_ai.agents.mcts_tree import (
    DECISION,
    TERMINAL,
    UNEXPANDED,
    Tree,
    add_virtual_loss,
    backup,
    descend,
    seed_numba,
    select_leaf,
)
from taluva_ai.protocol import CHANCE, GameState, value_normalization


@dataclass(frozen=True)
class MCTSConfig:
    """Search parameters (the ``mcts:key=value,...`` agent spec sets any of them).

    Attributes:
        sims: simulations per move (ignored when ``time`` is set); at most
            :data:`~taluva_ai.agents.base.MAX_SIMS`.
        time: seconds per move, or None; at most :data:`~taluva_ai.agents.base.MAX_TIME`.
        rollout: ``random`` or ``greedy`` rollout evaluator.
        c: exploration constant (UCT's c, or PUCT's c_puct).
        fpu: PUCT value of unvisited children.
        chance: ``expand`` (stratified over all outcomes) or ``sample``.
        temperature: 0 plays the most visited move; > 0 samples by visits^(1/temperature).
        dirichlet_alpha: root noise concentration (0 = none; AlphaZero used 0.3 for chess).
        dirichlet_frac: weight of the noise in the root priors (AlphaZero: 0.25).
        reuse_tree: keep the subtree of the played line for the next move.
        leaf_batch: leaves collected with virtual loss and evaluated together.
        samples: tile placements sampled per greedy-rollout decision.
        prior: ``heuristic`` (PUCT with softmax priors of the game's heuristic values) or
            ``none`` (UCT).
        prior_temperature: softmax temperature of the heuristic priors.
        compiled: run whole simulations in compiled code when the game allows it (rollouts,
            UCT or PUCT with heuristic priors, ``leaf_batch=1``; agents/mcts_compiled.py);
            False forces the Python loop.
        root: ``puct`` (the root selects like every node) or ``gumbel`` (Gumbel sequential
            halving at the root, Danihelka et al. 2022; needs priors; replaces Dirichlet
            noise; the move is the best survivor, sampled through the Gumbel noise when
            ``temperature > 0``, and :meth:`MCTSAgent.root_policy` is the improved policy).
        gumbel_m: actions considered at the root by Gumbel sequential halving (paper: 16).
        gumbel_c_visit, gumbel_c_scale: ``sigma(q) = (c_visit + max N) c_scale q`` on values
            rescaled to [0, 1] (mctx defaults 50 and 0.1).
    """

    sims: int = 400
    time: float | None = None
    rollout: str = "random"
    c: float = 1.0
    fpu: float = 0.0
    chance: str = "expand"
    temperature: float = 0.0
    dirichlet_alpha: float = 0.0
    dirichlet_frac: float = 0.25
    reuse_tree: bool = False
    leaf_batch: int = 1
    samples: int = 8
    prior: str = "heuristic"
    prior_temperature: float = 10.0
    compiled: bool = True
    root: str = "puct"
    gumbel_m: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 0.1

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            want = _FIELD_TYPES[f.name]
            if v is None and f.name == "time":
                continue
            ok = isinstance(v, want) and not (isinstance(v, bool) and want is not bool)
            if not ok:
                names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple)
                                                          else (want,)))
                raise ValueError(f"parameter {f.name}={v!r} must be {names}")
        import math

        for name in ("time", "c", "fpu", "temperature", "dirichlet_alpha", "dirichlet_frac",
                     "prior_temperature", "gumbel_c_visit", "gumbel_c_scale"):
            v = getattr(self, name)
            if v is not None and not math.isfinite(v):
                raise ValueError(f"parameter {name} must be finite, got {v!r}")
        for name in ("sims", "time", "samples", "leaf_batch"):  # finite work per move
            v, most = getattr(self, name), BUDGET_LIMITS[name]
            if v is not None and v > most:
                raise ValueError(f"{name} must be at most {int(most)}, got {v!r}")
        if self.c < 0:
            raise ValueError(f"c must be >= 0, got {self.c}")
        if self.dirichlet_alpha < 0 or not 0 <= self.dirichlet_frac <= 1:
            raise ValueError("dirichlet_alpha must be >= 0 and dirichlet_frac in [0, 1], got "
                             f"{self.dirichlet_alpha}, {self.dirichlet_frac}")
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        if self.prior_temperature <= 0:
            raise ValueError(f"prior_temperature must be positive, got {self.prior_temperature}")
        if self.time is None and self.sims < 1:
            raise ValueError(f"sims must be at least 1, got {self.sims}")
        if self.time is not None and self.time <= 0:
            raise ValueError(f"time must be positive, got {self.time}")
        if self.chance not in ("expand", "sample"):
            raise ValueError(f"chance must be 'expand' or 'sample', got {self.chance!r}")
        if self.leaf_batch < 1:
            raise ValueError(f"leaf_batch must be at least 1, got {self.leaf_batch}")
        if self.prior not in ("heuristic", "none"):
            raise ValueError(f"prior must be 'heuristic' or 'none', got {self.prior!r}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.root not in ("puct", "gumbel"):
            raise ValueError(f"root must be 'puct' or 'gumbel', got {self.root!r}")
        if self.gumbel_m < 1:
            raise ValueError(f"gumbel_m must be at least 1, got {self.gumbel_m}")
        if self.gumbel_c_visit < 0 or self.gumbel_c_scale < 0:
            raise ValueError("gumbel_c_visit and gumbel_c_scale must be >= 0")
        if self.root == "gumbel" and self.reuse_tree:
            raise ValueError("root=gumbel plans each move from a fresh root: use reuse_tree=false")


_FIELD_TYPES: dict[str, Any] = {
    "sims": int, "time": (int, float), "rollout": str, "c": (int, float), "fpu": (int, float),
    "chance": str, "temperature": (int, float), "dirichlet_alpha": (int, float),
    "dirichlet_frac": (int, float), "reuse_tree": bool, "leaf_batch": int, "samples": int,
    "prior": str, "prior_temperature": (int, float), "compiled": bool, "root": str,
    "gumbel_m": int, "gumbel_c_visit": (int, float), "gumbel_c_scale": (int, float),
}


class MCTSAgent(Agent):
    """MCTS player (see the module docstring); ``mcts:sims=400,rollout=greedy`` by name.

    Args:
        seed: seeds the move choice, the rollouts and the chance sampling.
        evaluator: a leaf evaluator; by default a :class:`RolloutEvaluator` of ``rollout``.
        **params: :class:`MCTSConfig` fields.

    Raises:
        ValueError: an unknown or invalid parameter.
    """

    name = "mcts"

    @classmethod
    def spec_parameters(cls) -> dict[str, Any]:
        """The parameters of an ``mcts:...`` spec and their defaults: the
        :class:`MCTSConfig` fields."""
        return {f.name: f.default for f in fields(MCTSConfig)}

    def __init__(self, seed: int | None = None, evaluator: Evaluator | None = None,
                 **params: Any) -> None:
        known = {f.name for f in fields(MCTSConfig)}
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"unknown mcts parameter(s) {', '.join(bad)}; known: "
                             f"{', '.join(sorted(known))}")
        if evaluator is not None and not isinstance(evaluator, Evaluator):
            raise ValueError(f"evaluator must be an Evaluator, got {evaluator!r}")
        self.config = MCTSConfig(**params)
        cfg = self.config
        self.evaluator = evaluator or RolloutEvaluator(
            cfg.rollout, seed, cfg.samples,
            cfg.prior_temperature if cfg.prior == "heuristic" else None,
        )
        if cfg.root == "gumbel" and not self.evaluator.gives_priors:
            raise ValueError("root=gumbel needs priors: use prior=heuristic or an evaluator "
                             "that gives priors (a network)")
        self.tree: Tree | None = None
        self._root_history: list[int] | None = None
        self._orders: dict[int, np.ndarray] = {}  # child order of nodes awaiting priors
        self._last: dict[str, Any] = {}
        self._root_children: tuple[Any, ...] | None = None
        self._policy: tuple[np.ndarray, np.ndarray] | None = None
        self._root_value = np.zeros(0)
        self._g_noise = np.zeros(0)
        self._g_logits = np.zeros(0)
        self._g_prior = np.zeros(0)
        self._g_table = np.zeros(0, dtype=np.int64)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.evaluator.reset(None if seed is None else seed + 1)
        self.tree = None
        self._root_history = None

    # -- search -----------------------------------------------------------------------------

    def act(self, state: GameState) -> int:
        """Search from ``state`` and return the chosen action.

        With hidden information (``state.has_hidden_information()``, e.g. Taluva's
        ``tile_preview``), the search runs on a determinization, ``state.resample(player)``: a
        state consistent with what the player to move knows, so the search never reads the
        other seats' hidden tiles (perfect-information Monte Carlo with one sample per move;
        Long et al. 2010). Tree reuse is off in that case.
        """
        if state.current_player < 0:
            raise ValueError("MCTS acts only at a decision node")
        hidden = getattr(state, "has_hidden_information", lambda: False)()
        if hidden:
            state = state.resample(state.current_player,  # type: ignore[attr-defined]
                                   np.random.default_rng(int(self.rng.integers(2**31 - 1))))
        tree = self._root_tree(state) if not hidden else Tree(self._num_players(state))
        self.search(state, tree)
        action = self.choose(tree, state)
        self._remember(state, tree, action)
        return action

    def search(self, root_state: GameState, tree: Tree, sims: int | None = None,
               noise: bool = True, progress: Callable[[int], bool] | None = None) -> bool:
        """Run the budgeted simulations from ``root_state`` into ``tree``, evaluating leaves
        with this agent's evaluator (see :meth:`search_steps` for the other arguments).

        Args:
            progress: called after each batch of leaves is evaluated and backed up, with the
                simulations run so far in this call; returning False stops the search there
                (a viewer's cancel: the tree is then left part-searched, the virtual losses
                of the batch being selected still on it, fit only to be dropped). The
                compiled rollout search (a PUCT root) runs whole and reports once, at its
                end.

        Returns:
            True when the search ran its budget, False when ``progress`` stopped it.
        """
        if tree.size == 1 and tree.kind[0] == UNEXPANDED:
            from taluva_ai.agents.mcts_batched import compiled_net_search_ok, search_one

            if compiled_net_search_ok(self, root_state):
                found, whole = search_one(self, root_state, sims=sims, noise=noise,
                                          progress=progress)
                tree.__dict__.update(found.copy().__dict__)  # the caller's tree: the result
                return whole
        start = float(tree.N[0])
        steps = self.search_steps(root_state, tree, sims=sims, noise=noise)
        try:
            leaves = next(steps)
            while True:
                leaves = steps.send(self.evaluator.evaluate(leaves))
                if progress is not None and not progress(int(tree.N[0] - start)):
                    steps.close()
                    return False
        except StopIteration:
            pass
        if progress is not None:
            progress(int(tree.N[0] - start))
        return True

    def search_steps(
        self, root_state: GameState, tree: Tree, sims: int | None = None, noise: bool = True
    ) -> Generator[list[GameState], tuple[Sequence[np.ndarray | None], np.ndarray], None]:
        """The search as a generator: it yields lists of leaf states to evaluate and must be
        sent back, for each list, what :meth:`Evaluator.evaluate` returns for it
        (``(priors, values)``). :meth:`search` drives it with the agent's evaluator; a
        self-play driver runs many at once and evaluates all their leaves in one batch.

        Args:
            root_state: the position (not modified).
            tree: the search tree (a fresh ``Tree`` or a reused subtree).
            sims: simulations for this search instead of ``config.sims`` (playout cap
                randomisation changes it move by move); ignored when ``config.time`` is set.
            noise: apply the configured root exploration (Dirichlet noise; with
                ``root=gumbel``, Gumbel noise when the temperature is positive).
        """
        cfg = self.config
        seed_numba(int(self.rng.integers(2**31 - 1)))
        self._orders = {}
        n_players = tree.num_players
        offset, scale = value_normalization(root_state)
        path = np.zeros(4096, dtype=np.int32)
        gumbel = cfg.root == "gumbel"
        self._root_value = np.zeros(n_players)
        if tree.kind[0] == UNEXPANDED:
            self._expand(tree, 0, root_state)
            if self.evaluator.gives_priors:
                priors, values = yield [root_state]
                if priors[0] is not None:
                    self._set_priors(tree, 0, priors[0])
                self._root_value = (np.asarray(values[0], dtype=np.float64)[:n_players]
                                    - offset) / scale
        elif tree.N[0] > 0:
            self._root_value = tree.W[0] / tree.N[0]
        budget_sims = cfg.sims if sims is None else int(sims)
        if budget_sims < 1:
            raise ValueError(f"sims must be at least 1, got {budget_sims}")
        if gumbel:
            self._gumbel_setup(tree, budget_sims, noise)
        elif noise:
            self._root_noise(tree)
        deadline = None if cfg.time is None else _time.perf_counter() + cfg.time
        done = 0
        budget = budget_sims if deadline is None else 1 << 62
        puct = self.evaluator.gives_priors
        if self._compiled_ok(root_state):
            from taluva_ai.agents.mcts_compiled import search_compiled

            search_compiled(tree, root_state, budget, cfg.c, cfg.chance == "sample",
                            cfg.rollout == "greedy", cfg.samples,
                            int(self.rng.integers(2**31 - 1)), deadline=deadline,
                            offset=offset, scale=scale,
                            prior_temperature=cfg.prior_temperature if puct else None,
                            fpu=cfg.fpu)
            return
        gumbel_root = gumbel and tree.kind[0] == DECISION and int(tree.n_children[0]) > 1
        through_chance = not self.evaluator.values_chance_nodes
        while done < budget:
            if deadline is not None and _time.perf_counter() >= deadline and done > 0:
                break
            batch = min(cfg.leaf_batch, budget - done)
            leaves: list[tuple[np.ndarray, GameState]] = []
            pending: list[tuple[np.ndarray, np.ndarray]] = []
            for _ in range(batch):
                if gumbel_root:
                    path[0] = 0
                    path[1] = self._gumbel_child(tree)
                    depth = descend(tree.first_child, tree.n_children, tree.kind, tree.to_move,
                                    tree.N, tree.W, tree.prior, tree.vloss, cfg.c, puct,
                                    cfg.fpu, cfg.chance == "sample", path, 2)
                else:
                    depth = select_leaf(tree.first_child, tree.n_children, tree.kind,
                                        tree.to_move, tree.N, tree.W, tree.prior, tree.vloss,
                                        cfg.c, puct, cfg.fpu, cfg.chance == "sample", path)
                s = root_state.clone()
                if hasattr(s, "record_history"):
                    s.record_history = False  # a throw-away copy: no undo snapshots
                step = getattr(s, "apply_unchecked", s.apply)  # actions from legal lists
                for node in path[1:depth]:
                    step(int(tree.action[node]))
                leaf = int(path[depth - 1])
                while through_chance and s.current_player == CHANCE \
                        and tree.kind[leaf] == UNEXPANDED:
                    # step through the new chance node to the outcome selection picks
                    self._expand(tree, leaf, s)
                    d0 = depth
                    depth = descend(tree.first_child, tree.n_children, tree.kind, tree.to_move,
                                    tree.N, tree.W, tree.prior, tree.vloss, cfg.c, puct,
                                    cfg.fpu, cfg.chance == "sample", path, depth)
                    for node in path[d0:depth]:
                        step(int(tree.action[node]))
                    leaf = int(path[depth - 1])
                p = path[:depth].copy()
                if batch > 1:
                    add_virtual_loss(tree.vloss, p, depth, 1.0)
                if s.is_terminal():
                    tree.kind[leaf] = TERMINAL
                    pending.append((p, np.asarray(s.returns(), dtype=np.float64)))
                    continue
                if tree.kind[leaf] == UNEXPANDED:
                    self._expand(tree, leaf, s)
                leaves.append((p, s))
            if leaves:
                priors, values = yield [s for _, s in leaves]
                for (p, _), pr, v in zip(leaves, priors, values, strict=True):
                    if pr is not None:
                        self._set_priors(tree, int(p[-1]), pr)
                    pending.append((p, np.asarray(v, dtype=np.float64)))
            for p, v in pending:
                if batch > 1:
                    add_virtual_loss(tree.vloss, p, p.size, -1.0)
                value = (np.asarray(v, dtype=np.float64)[:n_players] - offset) / scale
                backup(tree.N, tree.W, p, p.size, value)
            done += batch

    # -- Gumbel root (Danihelka et al. 2022; mcts_gumbel.py) ----------------------------------

    def _gumbel_setup(self, tree: Tree, sims: int, noise: bool) -> None:
        """Draw the root's Gumbel noise (zeros without noise or at temperature 0) and fix the
        root logits and the sequential-halving schedule for ``sims`` simulations."""
        k = int(tree.n_children[0])
        f = int(tree.first_child[0])
        self._g_logits = np.log(np.maximum(tree.prior[f:f + k], 1e-30))
        self._g_prior = np.zeros(0)
        if k:  # (a root without children is never searched; a driver may still set it up)
            prior = np.exp(self._g_logits - self._g_logits.max())
            self._g_prior = prior / prior.sum()
        if noise and self.config.temperature > 0:
            self._g_noise = self.rng.gumbel(size=k)
        else:
            self._g_noise = np.zeros(k)
        self._g_table = np.array(considered_visits(min(self.config.gumbel_m, k), sims),
                                 dtype=np.int64)

    def _gumbel_sigma(self, tree: Tree) -> np.ndarray:
        f, k = int(tree.first_child[0]), int(tree.n_children[0])
        p = int(tree.to_move[0])
        n = tree.N[f:f + k]
        q = np.where(n > 0, tree.W[f:f + k, p] / np.maximum(n, 1.0), 0.0)
        return completed_q(q, n, self._g_prior, float(self._root_value[p]),
                           float(self.config.gumbel_c_visit), float(self.config.gumbel_c_scale))

    def _gumbel_child(self, tree: Tree) -> int:
        """The root child the next simulation visits (``mctx``
        ``gumbel_muzero_root_action_selection``); pending virtual visits count as visits."""
        cfg = self.config
        p = int(tree.to_move[0])
        return int(gumbel_child(tree.N, tree.W, tree.vloss, int(tree.first_child[0]),
                                int(tree.n_children[0]), p, self._g_table, self._g_noise,
                                self._g_logits, self._g_prior, float(self._root_value[p]),
                                float(cfg.gumbel_c_visit), float(cfg.gumbel_c_scale)))

    def _compiled_ok(self, state: GameState) -> bool:
        """Whole simulations run compiled (agents/mcts_compiled.py) with the default rollout
        evaluator (UCT, or PUCT with its heuristic priors), one leaf at a time and a PUCT root,
        when the game offers ``search_kernels()``."""
        ev = self.evaluator
        return (
            self.config.compiled
            and hasattr(state, "search_kernels")
            and type(ev) is RolloutEvaluator
            and self.config.leaf_batch == 1
            and self.config.root == "puct"
        )

    def _expand(self, tree: Tree, node: int, state: GameState) -> None:
        if state.current_player == CHANCE:
            outcomes = state.chance_outcomes()
            acts = np.array([o for o, _ in outcomes], dtype=np.int64)
            probs = np.array([p for _, p in outcomes], dtype=np.float64)
            tree.kind[node] = K_CHANCE
            tree.add_children(node, acts, probs)
        else:
            # Children in a random (seeded) order: selection breaks ties by order (the first
            # unvisited child under UCT, equal scores under PUCT), and ids are ordered by hex,
            # so id order would steer every tie to the northernmost hex.
            legal = np.asarray(state.legal_actions(), dtype=np.int64)
            tree.kind[node] = DECISION
            tree.to_move[node] = state.current_player
            self._orders[node] = tree.add_children(
                node, legal, np.full(legal.size, 1.0 / max(legal.size, 1)), shuffle=True
            )

    def _set_priors(self, tree: Tree, node: int, priors: np.ndarray) -> None:
        """Set the priors of ``node``'s children from ``priors`` in legal-action order."""
        if tree.kind[node] == DECISION:
            f = int(tree.first_child[node])
            order = self._orders.pop(node, None)
            if order is None:
                return  # already set (a leaf reached twice in one batch)
            tree.prior[f:f + int(tree.n_children[node])] = np.asarray(priors)[order]

    def _root_noise(self, tree: Tree) -> None:
        cfg = self.config
        k = int(tree.n_children[0])
        if cfg.dirichlet_alpha > 0 and tree.kind[0] == DECISION and k > 1:
            f = int(tree.first_child[0])
            noise = self.rng.dirichlet(np.full(k, cfg.dirichlet_alpha))
            tree.prior[f:f + k] = (1 - cfg.dirichlet_frac) * tree.prior[f:f + k] + \
                cfg.dirichlet_frac * noise

    # -- move choice and statistics ---------------------------------------------------------

    def choose(self, tree: Tree, state: GameState, temperature: float | None = None) -> int:
        """The move after a search of ``state`` into ``tree`` (sets :meth:`stats` and
        :meth:`root_policy`): a proven win if there is one; with ``root=gumbel`` the survivor
        of sequential halving of highest ``g + logits + sigma(q)``; else the most visited
        child (``temperature`` 0; ties go to the best mean value for the mover, then at random,
        as OpenSpiel's ``MCTSBot`` does) or one sampled by visits^(1/temperature).

        Args:
            temperature: overrides ``config.temperature`` (a self-play schedule).
        """
        temp = self.config.temperature if temperature is None else float(temperature)
        kids = np.array(list(tree.children(0)), dtype=np.int64)
        visits = tree.N[kids]
        p = int(tree.to_move[0])
        gumbel = self.config.root == "gumbel" and kids.size > 1 and \
            self._g_noise.size == kids.size
        if gumbel:
            sigma = self._gumbel_sigma(tree)
            self._policy = (tree.action[kids].copy(), improved_policy(self._g_logits, sigma))
        else:
            total = visits.sum()
            self._policy = (tree.action[kids].copy(),
                            visits / total if total > 0 else np.full(kids.size, 1 / kids.size))
        won = [int(c) for c in kids
               if tree.num_players > 1 and tree.kind[c] == TERMINAL and tree.N[c] > 0
               and tree.W[c, p] >= tree.N[c]]
        if won:  # a proven win beats any visit count
            self._last = self._stats(tree, won[0], state)
            return int(tree.action[won[0]])
        if gumbel:
            noise = self._g_noise if temp > 0 else np.zeros(kids.size)
            score = score_considered(visits.max(), noise, self._g_logits, sigma, visits)
            pick = int(kids[int(np.argmax(score))])
        elif temp == 0:
            best = np.flatnonzero(visits == visits.max())
            if best.size > 1:  # e.g. fewer simulations than moves: the best mean value first
                q = tree.W[kids[best], p] / np.maximum(visits[best], 1)
                best = best[q == q.max()]
            pick = int(kids[best[self.rng.integers(best.size)]])
        else:
            w = visits ** (1.0 / temp)
            pick = int(kids[self.rng.choice(kids.size, p=w / w.sum())])
        self._last = self._stats(tree, pick, state)
        return int(tree.action[pick])

    def root_policy(self) -> tuple[np.ndarray, np.ndarray]:
        """``(actions int64[k], probabilities float64[k])`` of the last :meth:`choose`: the
        root's legal actions and the search policy, the AlphaZero training target (visit
        shares; with ``root=gumbel`` the improved policy ``softmax(logits + sigma(completed
        q))``).

        Raises:
            RuntimeError: no move chosen yet.
        """
        if self._policy is None:
            raise RuntimeError("root_policy(): no move chosen yet")
        return self._policy

    def _stats(self, tree: Tree, pick: int, state: GameState) -> dict[str, Any]:
        """Root statistics; moves in the game's notation (``action_to_string``); values on the
        scale of the game's returns."""
        p = int(tree.to_move[0])
        offset, scale = value_normalization(state)
        kids = list(tree.children(0))
        order = sorted(kids, key=lambda c: -tree.N[c])
        top = [
            {"move": state.action_to_string(int(tree.action[c])), "action": int(tree.action[c]),
             "visits": int(tree.N[c]),
             "value": round(float(tree.W[c, p] / tree.N[c]) * scale + offset, 3),
             "prior": round(float(tree.prior[c]), 3)}
            for c in order[:5] if tree.N[c] > 0
        ]
        # principal variation: the most visited line through decision nodes (chance included)
        pv: list[str] = []
        s = state.clone()
        node = pick
        while True:
            a = int(tree.action[node])
            pv.append(s.action_to_string(a))
            s.apply(a)
            ch = list(tree.children(node))
            if not ch or tree.kind[node] not in (DECISION, K_CHANCE) or len(pv) >= 12:
                break
            node = max(ch, key=lambda c: tree.N[c])
            if tree.N[node] == 0:
                break
        kid_ids = np.array(kids, dtype=np.int64)
        self._root_children = (tree.action[kid_ids].astype(np.int64), tree.N[kid_ids].copy(),
                               tree.W[kid_ids, p].copy(), tree.prior[kid_ids].copy(),
                               scale, offset)
        root_value = round(float(tree.W[0, p] / max(tree.N[0], 1)) * scale + offset, 3)
        moves = ", ".join(f"{t['move']} {t['visits']}v {t['value']:+.2f} (p {t['prior']:.2f})"
                          for t in top)
        summary = (f"{int(tree.N[0])} sims, value {root_value:+.2f}; top: {moves}; "
                   f"pv: {' '.join(pv)}")
        return {
            "simulations": int(tree.N[0]),
            "root_value": root_value,
            "top": top,
            "pv": pv,
            "tree_nodes": int(tree.size),
            "summary": summary,
        }

    def stats(self) -> dict[str, Any]:
        return dict(self._last)

    def search_candidates(self) -> list[dict[str, Any]]:
        """Every root move of the last search (:meth:`Agent.search_candidates`): visits, mean
        value for the player to move (the game's returns scale), prior."""
        if self._root_children is None:
            return []
        actions, visits, wins, prior, scale, offset = self._root_children
        order = np.lexsort((-prior, -visits))
        return [{"action": int(actions[i]), "visits": int(visits[i]),
                 "value": (round(float(wins[i] / visits[i]) * scale + offset, 4)
                           if visits[i] > 0 else None),
                 "prior": round(float(prior[i]), 4)} for i in order]

    # -- tree reuse -------------------------------------------------------------------------

    @staticmethod
    def _num_players(state: GameState) -> int:
        return int(getattr(state, "num_players", None) or len(state.returns()))

    def _root_tree(self, state: GameState) -> Tree:
        n = self._num_players(state)
        if self.config.reuse_tree and self.tree is not None and self._root_history is not None:
            hist = list(getattr(state, "history", lambda: [])())
            old = self._root_history
            if hist[: len(old)] == old:
                node = 0
                for a in hist[len(old):]:
                    nxt = [c for c in self.tree.children(node) if self.tree.action[c] == a]
                    if not nxt:
                        node = -1
                        break
                    node = nxt[0]
                if node > 0 and self.tree.kind[node] != UNEXPANDED:
                    return self.tree.subtree(node)
        return Tree(int(n))

    def _remember(self, state: GameState, tree: Tree, action: int) -> None:
        if self.config.reuse_tree:
            self.tree = tree
            self._root_history = list(getattr(state, "history", lambda: [])())
