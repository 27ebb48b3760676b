"""Monte Carlo tree search for 1-4 players with chance nodes: the ``mcts`` agent.

A thin user of :mod:`taluva_ai.agents.search`, which holds the search itself and says which
implementation runs when: the flat-array tree, PUCT or UCT selection, the Gumbel root, the
compiled rollout search, the compiled batched network search and the Python fallback. The
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
  :mod:`taluva_ai.agents.search.gumbel`) for low simulation counts.
- :meth:`MCTSAgent.search_steps` is the search as a generator that hands out its leaf batches
  and takes their evaluations back, so a caller can run many searches (many games) at once
  and evaluate all their leaves in one network call (AlphaZero self-play, KataGo-style).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from taluva_ai.agents.base import ConfiguredAgent
from taluva_ai.agents.evaluators import Evaluator, RolloutEvaluator
from taluva_ai.agents.search import root, run
from taluva_ai.agents.search.config import MCTSConfig
from taluva_ai.agents.search.fallback import Steps
from taluva_ai.agents.search.gumbel import GumbelRoot
from taluva_ai.agents.search.tree import CHANCE as K_CHANCE
from taluva_ai.agents.search.tree import DECISION, UNEXPANDED, Tree
from taluva_ai.protocol import GameState, value_normalization

__all__ = ["MCTSAgent", "MCTSConfig"]


class MCTSAgent(ConfiguredAgent):
    """MCTS player (see the module docstring); ``mcts:sims=400,rollout=greedy`` by name.

    Args:
        seed: seeds the move choice, the rollouts and the chance sampling.
        evaluator: a leaf evaluator; by default a :class:`RolloutEvaluator` of ``rollout``.
        **params: :class:`MCTSConfig` fields.

    Raises:
        ValueError: an unknown or invalid parameter.
    """

    name = "mcts"
    config_class = MCTSConfig  # the spec's parameters

    def __init__(self, seed: int | None = None, evaluator: Evaluator | None = None,
                 **params: Any) -> None:
        self.config: MCTSConfig = self._configure(params)
        if evaluator is not None and not isinstance(evaluator, Evaluator):
            raise ValueError(f"evaluator must be an Evaluator, got {evaluator!r}")
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
        # the search's state (agents/search/run.py): child orders of the nodes awaiting
        # priors, the root's normalised value, the Gumbel root
        self._orders: dict[int, np.ndarray] = {}
        self._root_value = np.zeros(0)
        self._gumbel = GumbelRoot()
        self._last: dict[str, Any] = {}
        self._root_children: tuple[Any, ...] | None = None
        self._policy: tuple[np.ndarray, np.ndarray] | None = None
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
        with this agent's evaluator, on the path :mod:`taluva_ai.agents.search` picks
        (:func:`taluva_ai.agents.search.run.run`; :meth:`search_steps` for ``sims`` and
        ``noise``).

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
        return run.run(self, root_state, tree, sims=sims, noise=noise, progress=progress)

    def search_steps(self, root_state: GameState, tree: Tree, sims: int | None = None,
                     noise: bool = True) -> Steps:
        """The search as a generator (:func:`taluva_ai.agents.search.run.steps`): it yields
        lists of leaf states to evaluate and must be sent back, for each list, what
        :meth:`Evaluator.evaluate` returns for it (``(priors, values)``). :meth:`search`
        drives it with the agent's evaluator; a self-play driver runs many at once and
        evaluates all their leaves in one batch. ``root_state`` is not modified; ``tree`` is
        a fresh ``Tree`` or a reused subtree; ``sims`` (playout cap randomisation) and
        ``noise`` (the root's exploration) as that function says.
        """
        return run.steps(self, root_state, tree, sims=sims, noise=noise)

    def _compiled_ok(self, state: GameState) -> bool:
        """Whether whole simulations run compiled
        (:func:`taluva_ai.agents.search.run.rollout_search_ok`)."""
        return run.rollout_search_ok(self.config, self.evaluator, state)

    # -- move choice and statistics ---------------------------------------------------------

    def choose(self, tree: Tree, state: GameState, temperature: float | None = None,
               stats: bool = True) -> int:
        """The move after a search of ``state`` into ``tree`` (sets :meth:`stats` and
        :meth:`root_policy`): a proven win if there is one; with ``root=gumbel`` the survivor
        of sequential halving of highest ``g + logits + sigma(q)``; else the most visited
        child (``temperature`` 0; ties go to the best mean value for the mover, then at random,
        as OpenSpiel's ``MCTSBot`` does) or one sampled by visits^(1/temperature)
        (:func:`taluva_ai.agents.search.root.choose`).

        Args:
            temperature: overrides ``config.temperature`` (a self-play schedule).
            stats: False skips the move statistics (the moves' notation and the principal
                variation, 5% of self-play's time): :meth:`stats` then gives the simulations
                only, and :meth:`search_candidates` none. The move and :meth:`root_policy`
                are the same.
        """
        temp = self.config.temperature if temperature is None else float(temperature)
        pick, self._policy = root.choose(tree, self.config, self.rng, self._gumbel,
                                         self._root_value, temp)
        if stats:
            self._last = self._stats(tree, pick, state)
        else:
            self._last = {"simulations": int(tree.N[0])}
            self._root_children = None
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
