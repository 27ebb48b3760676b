"""Network-guided MCTS for many games at once, in compiled code.

The search of :class:`~taluva_ai.agents.mcts.MCTSAgent` with a network evaluator (the ``az``
agent, AlphaZero self-play), run for ``B`` games per call: selection (PUCT, or the Gumbel root
with sequential halving, Danihelka et al. 2022), chance nodes, virtual loss, max^n value
vectors for 1-4 players, expansion, the compiled encoding of every leaf straight into one
preallocated batch buffer, and the backup with the network's priors and values all run in
Numba over a **forest**: the flat-array :class:`~taluva_ai.agents.search.tree.Tree` of every
game, stacked on a leading axis (``parent int32[B, capacity]``, ...). Python makes one network
call per round for the leaves of all games (KataGo's and Leela's multi-game batching; the
CPU-only AlphaZero of cestpasphoto's alpha-zero-general fork batches the same way).

One round (:meth:`BatchedSearch.run_round`):

1. ``collect`` (compiled): for every game with simulations left, up to ``leaf_batch`` leaves:
   select a path (virtual loss when ``leaf_batch > 1``), replay it on a copy of the root, step
   through a new chance node to the outcome the selection rule picks (stratified or sampled:
   ``chance``), expand the decision leaf (its legal actions in a seeded random order) and
   encode it into the batch buffer (``spatial float32[L, Cs, S, S]``, ``globals
   float32[L, G]``); a terminal leaf takes its returns. A game whose root is new evaluates
   just its root in that round.
2. one network call on the buffer (:meth:`NetEvaluator.infer_arrays`), optionally a rollout
   value per leaf computed in step 1 (``lambda``);
3. ``backup`` (compiled): priors (softmax of the logits over the legal actions' network ids,
   :func:`~taluva_ai.agents.alphazero.evaluator.legal_priors`), values (slots to seats,
   rollouts mixed in, normalised by the game's ``value_normalization``), virtual losses
   removed, visits and values added along each path.

**The same search as the Python fallback.** The Python loop (:mod:`.fallback`) and this
one make the same random draws (Numba's stream, seeded from the agent's generator at the start
of every search), in the same order, with the same arithmetic (the priors of both come from
one compiled kernel, ``priors.legal_softmax``; its sum is NumPy's pairwise order, and
NumPy's own ``exp`` may differ from the compiled one in the last bit on some CPUs), so with one
game per call they give the same tree, visit counts and move
(``tests/test_mcts_batched.py``). With ``B > 1`` games share Numba's stream, so which games
share a batch changes the games (as it does in the Python self-play driver). Differences by
design: tree reuse between moves is not supported (``reuse_tree``: the Python fallback), and
rollouts (``lambda > 0``) continue Numba's stream instead of the evaluator's seeded generator.

Games take part through ``state.search_kernels()`` (the rules) and their encoder's
``search_kernels()`` (the encoding; ``taluva_ai.games.taluva.search_kernels`` lists both
interfaces). A game or encoder without them keeps the Python fallback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from taluva_ai.agents.search.gumbel import gumbel_child
from taluva_ai.agents.search.priors import legal_softmax
from taluva_ai.agents.search.puct import descend, select_leaf
from taluva_ai.agents.search.root import explore
from taluva_ai.agents.search.specialize import specialize
from taluva_ai.agents.search.tree import Tree as _Tree
from taluva_ai.agents.search.tree import _add_children, add_virtual_loss, backup, seed_numba
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import search_kernels as _tk

#: ``leaf_kind`` values.
LEAF_NET = 0  # a decision leaf for the network
LEAF_ROOT = 1  # a new root: priors and root value, no visit
LEAF_TERMINAL = 2  # the end of the game: its returns


# The collect loop, a template compiled once per kernel set (agents/search/specialize.py): its body
# calls the game's kernels by these global names, bound to one game's kernels in each compiled
# copy (:func:`_bind`; why not arguments: agents/search/specialize.py).
copy_fn = to_move_fn = legal_fn = chance_fn = apply_fn = terminal_fn = rollout_fn = None
row_fn = encode_fn = net_id_fn = None


def collect(parent, action, first_child, n_children, kind, to_move_arr, N, W, prior, vloss,
            size, roots, consts, enc, want, c, fpu, sample_chance, expand_chance, use_vloss,
            g_on, g_k, g_table, g_tlen, g_noise, g_logits, g_prior, root_value, g_cvisit,
            g_cscale, rollout_kind, samples, spatial, glob, ctx, leaf_game, leaf_node,
            leaf_kind, leaf_depth, leaf_path, leaf_value, leaf_row, leaf_off, leaf_n, ids_flat,
            order_flat, collected, legal_buf, outcomes, probs, path):
    """Collect the leaves of one round (module docstring, step 1). A template: compiled for
    a game's kernels by :func:`_bind`.

    Per game ``b``: ``want[b]`` leaves (0: none this round). Outputs: ``leaf_*[j]`` for each
    leaf ``j`` (game, node, kind, path, terminal or rollout values by seat, network row,
    offset and count of its legal actions in ``ids_flat`` / ``order_flat``: network ids in
    legal-action order and the children's order, 0 when the leaf was already expanded);
    ``spatial[r]``, ``glob[r]``, ``ctx[r]`` for each network row ``r``; ``collected[b]``
    simulations started per game (roots not counted).

    Returns:
        ``(leaves, network rows, status)``: status 0, or 1 when a game stopped early because
        its tree or ``ids_flat`` was full (grow them and run the next round).
    """
    B = want.shape[0]
    cap = parent.shape[1]
    nflat = ids_flat.shape[0]
    maxd = leaf_path.shape[1]
    j = 0
    r = 0
    off = 0
    status = 0
    for b in range(B):
        collected[b] = 0
        if want[b] == 0:
            continue
        root = row_fn(roots, b)
        for _ in range(want[b]):
            new_root = kind[b, 0] == 0  # a new root: expand and evaluate it (no simulation)
            if new_root:
                path[0] = 0
                depth = 1
            elif cap - size[b] < outcomes.shape[0]:
                status = 1
                break
            elif g_on[b]:
                k = g_k[b]
                p0 = to_move_arr[b, 0]
                path[0] = 0
                path[1] = gumbel_child(N[b], W[b], vloss[b], first_child[b, 0], k, p0,
                                       g_table[b, :g_tlen[b]], g_noise[b, :k], g_logits[b, :k],
                                       g_prior[b, :k], root_value[b, p0], g_cvisit, g_cscale)
                depth = descend(first_child[b], n_children[b], kind[b], to_move_arr[b], N[b],
                                W[b], prior[b], vloss[b], c, np.bool_(True), fpu, sample_chance,
                                path, np.int64(2))
            else:
                depth = select_leaf(first_child[b], n_children[b], kind[b], to_move_arr[b],
                                    N[b], W[b], prior[b], vloss[b], c, np.bool_(True), fpu,
                                    sample_chance, path)
            s = copy_fn(root)
            for i in range(1, depth):
                apply_fn(s, consts, action[b, path[i]])
            leaf = path[depth - 1]
            p = to_move_fn(s)
            while expand_chance and p == -1 and kind[b, leaf] == 0:
                n = chance_fn(s, outcomes, probs)
                _add_children(parent[b], action[b], first_child[b], n_children[b], kind[b],
                              N[b], W[b], prior[b], vloss[b], size[b], leaf, outcomes[:n],
                              probs[:n], np.bool_(False))
                size[b] += n
                kind[b, leaf] = 2
                d0 = depth
                depth = descend(first_child[b], n_children[b], kind[b], to_move_arr[b], N[b],
                                W[b], prior[b], vloss[b], c, np.bool_(True), fpu, sample_chance,
                                path, depth)
                for i in range(d0, depth):
                    apply_fn(s, consts, action[b, path[i]])
                leaf = path[depth - 1]
                p = to_move_fn(s)
            if depth > maxd:
                raise ValueError("search path longer than the leaf buffer")
            if p == -4:
                kind[b, leaf] = 3
                terminal_fn(s, consts, leaf_value[j])
                leaf_kind[j] = LEAF_TERMINAL
                leaf_n[j] = 0
            else:
                n = 0
                fresh = kind[b, leaf] == 0
                if fresh:
                    n = legal_fn(s, consts, legal_buf)
                    if cap - size[b] < n or nflat - off < n:
                        status = 1
                        break
                encode_fn(s, consts, enc, spatial[r], glob[r], ctx[r])
                if fresh:
                    order = _add_children(parent[b], action[b], first_child[b], n_children[b],
                                          kind[b], N[b], W[b], prior[b], vloss[b], size[b],
                                          leaf, legal_buf[:n], np.full(n, 1.0 / max(n, 1)),
                                          np.bool_(True))
                    size[b] += n
                    kind[b, leaf] = 1
                    to_move_arr[b, leaf] = p
                    for i in range(n):
                        ids_flat[off + i] = net_id_fn(consts, enc, ctx[r], legal_buf[i])
                        order_flat[off + i] = order[i]
                if rollout_kind > 0:
                    rollout_fn(s, consts, rollout_kind == 2, samples, -1, leaf_value[j])
                leaf_kind[j] = LEAF_ROOT if new_root else LEAF_NET
                leaf_row[j] = r
                leaf_off[j] = off
                leaf_n[j] = n
                off += n
                r += 1
            leaf_game[j] = b
            leaf_node[j] = leaf
            leaf_depth[j] = depth
            for i in range(depth):
                leaf_path[j, i] = path[i]
            j += 1
            if new_root:
                break  # the root's round holds just its evaluation
            if use_vloss:
                add_virtual_loss(vloss[b], path, depth, 1.0)
            collected[b] += 1
    return j, r, status


@njit(cache=True)
def _set_priors(prior, first, logits, ids, order, n):
    """The priors of one leaf (:func:`~taluva_ai.agents.search.priors.legal_softmax`, as the
    Python search's ``legal_priors``), written to its children (child ``i`` holds legal action
    ``order[i]``)."""
    z = np.empty(n)
    legal_softmax(logits, ids[:n], z)
    for i in range(n):
        prior[first + i] = z[order[i]]


@njit(cache=True)
def backup_leaves(first_child, N, W, prior, vloss, n_leaves, leaf_game, leaf_node, leaf_kind,
                  leaf_depth, leaf_path, leaf_value, leaf_row, leaf_off, leaf_n, ids_flat,
                  order_flat, to_move_arr, logits, values, use_vloss, offset, scale,
                  rollout_lambda, root_value):
    """Back up one round's leaves (module docstring, step 3). Within a game the terminal
    leaves go first, then the network's, each in collection order (the Python path's order,
    so the value sums are the same bits). A root leaf sets the root's priors and
    ``root_value[b]`` (by seat, normalised) and is not backed up."""
    P = W.shape[2]
    out = np.empty(P)
    j0 = 0
    while j0 < n_leaves:
        b = leaf_game[j0]
        j1 = j0
        while j1 < n_leaves and leaf_game[j1] == b:
            j1 += 1
        for terminal_pass in (True, False):
            for j in range(j0, j1):
                if (leaf_kind[j] == LEAF_TERMINAL) != terminal_pass:
                    continue
                if leaf_kind[j] == LEAF_TERMINAL:
                    for q in range(P):
                        out[q] = leaf_value[j, q]
                else:
                    row = leaf_row[j]
                    node = leaf_node[j]
                    if leaf_n[j] > 0:
                        o = leaf_off[j]
                        _set_priors(prior[b], first_child[b, node], logits[row],
                                    ids_flat[o:o + leaf_n[j]], order_flat[o:o + leaf_n[j]],
                                    leaf_n[j])
                    player = to_move_arr[b, node]
                    for q in range(P):  # slot (q - player) % P is seat q
                        out[q] = np.float64(values[row, (q - player) % P]) * scale + offset
                    if rollout_lambda > 0.0:
                        for q in range(P):
                            out[q] = (1.0 - rollout_lambda) * out[q] + \
                                rollout_lambda * leaf_value[j, q]
                    if leaf_kind[j] == LEAF_ROOT:
                        for q in range(P):
                            root_value[b, q] = (out[q] - offset) / scale
                        continue
                for q in range(P):
                    out[q] = (out[q] - offset) / scale
                d = leaf_depth[j]
                if use_vloss:
                    add_virtual_loss(vloss[b], leaf_path[j], d, -1.0)
                backup(N[b], W[b], leaf_path[j], d, out)
        j0 = j1


def _bind(kernels: tuple, net_kernels: tuple, rollouts: bool) -> Any:
    """:func:`collect` compiled for the game's kernels (``state.search_kernels()``) and the
    encoder's (``encoder.search_kernels()``), cached on disk; without ``rollouts`` (no rollout
    values, ``lambda`` 0) the rollout kernel is left out (``search_kernels.no_rollout``)."""
    (copy_k, to_move_k, legal_k, chance_k, apply_k, rollout_k, terminal_k, _v) = kernels
    row_k, encode_k, net_id_k = net_kernels
    if (tuple(kernels), tuple(net_kernels)) == (_tk.KERNELS, _tk.NET_KERNELS):
        tag = "taluva"
    elif (tuple(kernels), tuple(net_kernels)) == (_tk.SOLO_KERNELS, _tk.SOLO_NET_KERNELS):
        tag = "taluva_solo"
    else:
        tag = "game"
    return specialize(collect, tag + ("_rollouts" if rollouts else ""), copy_fn=copy_k,
                      to_move_fn=to_move_k, legal_fn=legal_k, chance_fn=chance_k,
                      apply_fn=apply_k, terminal_fn=terminal_k,
                      rollout_fn=rollout_k if rollouts else _tk.no_rollout, row_fn=row_k,
                      encode_fn=encode_k, net_id_fn=net_id_k)


def compiled_net_search_ok(agent: Any, state: Any) -> bool:
    """True when ``agent`` (an :class:`~taluva_ai.agents.mcts.MCTSAgent`) can search ``state``
    with :class:`BatchedSearch`: ``compiled`` on, no tree reuse, an evaluator with
    ``infer_arrays`` whose encoder has compiled kernels, and a game with
    ``search_kernels()``."""
    ev = agent.evaluator
    enc = getattr(ev, "encoder", None)
    return bool(
        agent.config.compiled
        and not agent.config.reuse_tree
        and hasattr(ev, "infer_arrays")
        and enc is not None and enc.search_kernels() is not None
        and hasattr(state, "search_kernels")
    )


class BatchedSearch:
    """Searches of up to ``num_games`` games at once (module docstring).

    Each game ``b`` is searched for an :class:`~taluva_ai.agents.mcts.MCTSAgent` (its config,
    random generator, Gumbel state and move choice; every agent must have the same config and
    evaluator): :meth:`start` a search, call :meth:`run_round` until :meth:`finished`, then
    :meth:`tree` is the game's search tree for ``agent.choose``.

    Args:
        evaluator: a :class:`~taluva_ai.agents.alphazero.evaluator.NetEvaluator` (its
            ``encoder`` must have ``search_kernels()``).
        config: the agents' :class:`~taluva_ai.agents.mcts.MCTSConfig`.
        num_games: ``B``.
        num_players: seats (value entries).
        capacity: initial tree nodes per game (grown by doubling).

    Raises:
        ValueError: the evaluator's encoder has no compiled kernels.
    """

    def __init__(self, evaluator: Any, config: Any, num_games: int, num_players: int,
                 capacity: int = 1 << 14) -> None:
        spec = evaluator.encoder.search_kernels()
        if spec is None:
            raise ValueError("the encoder has no compiled kernels: use the Python search")
        self.net_kernels, self.enc_consts = spec
        self.evaluator = evaluator
        self.config = config
        self.B = int(num_games)
        self.P = self.num_players = int(num_players)
        enc = evaluator.encoder
        self.leaf_batch = int(config.leaf_batch)
        L = self.B * self.leaf_batch
        self.L = L
        self.spatial = np.zeros((L, enc.spatial_planes, enc.side, enc.side), dtype=np.float32)
        self.glob = np.zeros((L, enc.num_globals), dtype=np.float32)
        self.ctx = np.zeros((L, 4), dtype=np.int64)
        self.leaf_game = np.zeros(L, dtype=np.int64)
        self.leaf_node = np.zeros(L, dtype=np.int64)
        self.leaf_kind = np.zeros(L, dtype=np.int8)
        self.leaf_depth = np.zeros(L, dtype=np.int64)
        self.leaf_path = np.zeros((L, 1024), dtype=np.int32)
        self.leaf_value = np.zeros((L, self.P), dtype=np.float64)
        self.leaf_row = np.zeros(L, dtype=np.int64)
        self.leaf_off = np.zeros(L, dtype=np.int64)
        self.leaf_n = np.zeros(L, dtype=np.int64)
        self.ids_flat = np.zeros(L * 512, dtype=np.int64)
        self.order_flat = np.zeros(L * 512, dtype=np.int64)
        self.collected = np.zeros(self.B, dtype=np.int64)
        self.path = np.zeros(4096, dtype=np.int32)
        self.outcomes = np.empty(64, dtype=np.int64)
        self.probs = np.empty(64, dtype=np.float64)
        self._alloc(int(capacity))
        self.size = np.zeros(self.B, dtype=np.int64)
        self.want = np.zeros(self.B, dtype=np.int64)
        self.g_on = np.zeros(self.B, dtype=np.bool_)
        self.g_k = np.zeros(self.B, dtype=np.int64)
        self.g_tlen = np.zeros(self.B, dtype=np.int64)
        self.g_table = np.zeros((self.B, 1), dtype=np.int64)
        self.g_noise = np.zeros((self.B, 1), dtype=np.float64)
        self.g_logits = np.zeros((self.B, 1), dtype=np.float64)
        self.g_prior = np.zeros((self.B, 1), dtype=np.float64)
        self.root_value = np.zeros((self.B, self.P), dtype=np.float64)
        self.agents: list[Any] = [None] * self.B
        self.budget = np.zeros(self.B, dtype=np.int64)
        self.gumbel_sims = np.zeros(self.B, dtype=np.int64)  # the schedule's simulations
        self.done = np.zeros(self.B, dtype=np.int64)
        self.phase = np.zeros(self.B, dtype=np.int8)  # 0 idle, 1 root, 2 simulating, 3 done
        self.noise = np.zeros(self.B, dtype=np.bool_)
        self.offset = np.zeros(self.B, dtype=np.float64)
        self.scale = np.ones(self.B, dtype=np.float64)
        self.deadline: list[float | None] = [None] * self.B
        self.roots: tuple[np.ndarray, ...] | None = None
        self.consts: tuple[Any, ...] | None = None
        self._run: dict[bool, Any] = {}  # the compiled collect, with rollouts or not
        self._max_children = 64
        self.rounds = 0
        self.evaluations = 0

    def _alloc(self, cap: int) -> None:
        B, P = self.B, self.P
        self.parent = np.full((B, cap), -1, dtype=np.int32)
        self.action = np.full((B, cap), -1, dtype=np.int64)
        self.first_child = np.full((B, cap), -1, dtype=np.int32)
        self.n_children = np.zeros((B, cap), dtype=np.int32)
        self.kind = np.zeros((B, cap), dtype=np.int8)
        self.to_move = np.full((B, cap), -1, dtype=np.int8)
        self.N = np.zeros((B, cap), dtype=np.float64)
        self.W = np.zeros((B, cap, P), dtype=np.float64)
        self.prior = np.zeros((B, cap), dtype=np.float64)
        self.vloss = np.zeros((B, cap), dtype=np.float64)

    _TREE_FIELDS = ("parent", "action", "first_child", "n_children", "kind", "to_move", "N", "W",
                    "prior", "vloss")

    @property
    def capacity(self) -> int:
        return int(self.parent.shape[1])

    def _grow(self, cap: int) -> None:
        old = {k: getattr(self, k) for k in self._TREE_FIELDS}
        n = self.capacity
        self._alloc(cap)
        for k, arr in old.items():
            getattr(self, k)[:, :n] = arr

    def tree(self, b: int) -> _Tree:
        """Game ``b``'s search tree: a :class:`~taluva_ai.agents.search.tree.Tree` whose arrays
        are views of the forest (valid until the next :meth:`start` of ``b`` or growth)."""
        t = object.__new__(_Tree)
        t.num_players = self.P
        t.size = int(self.size[b])
        for k in self._TREE_FIELDS:
            setattr(t, k, getattr(self, k)[b])
        return t

    # -- one game's search ----------------------------------------------------------------

    def start(self, b: int, agent: Any, state: Any, sims: int | None = None,
              noise: bool = True) -> None:
        """Begin a search of ``state`` (a decision node; not modified) for ``agent`` in slot
        ``b``, with ``sims`` simulations (default ``agent.config.sims``; with
        ``agent.config.time`` set, as many as fit in that many seconds) and the agent's root
        noise when ``noise``.

        Raises:
            ValueError: ``state`` is not a decision node, or ``sims < 1``.
        """
        from taluva_ai.protocol import value_normalization

        if state.current_player < 0:
            raise ValueError("a search starts at a decision node")
        cfg = agent.config
        budget = cfg.sims if sims is None else int(sims)
        if budget < 1:
            raise ValueError(f"sims must be at least 1, got {budget}")
        arrays, consts, kernels = state.search_kernels()
        if self.roots is None:
            self.roots = tuple(np.repeat(a[None], self.B, axis=0) for a in arrays)
            self.consts = consts
            self._kernels = tuple(kernels)
        elif not self.accepts(state):
            raise ValueError("all games of a batched search must be of one game and rule set")
        for dst, src in zip(self.roots, arrays, strict=True):
            dst[b] = src
        seed_numba(int(agent.rng.integers(2**31 - 1)))  # as search.run.steps does
        agent._orders = {}
        self.agents[b] = agent
        self.offset[b], self.scale[b] = value_normalization(state)
        self.size[b] = 1
        self.parent[b, 0] = -1
        self.kind[b, 0] = 0
        self.first_child[b, 0] = -1
        self.n_children[b, 0] = 0
        self.N[b, 0] = 0.0
        self.W[b, 0] = 0.0
        self.vloss[b, 0] = 0.0
        self.g_on[b] = False
        self.gumbel_sims[b] = budget
        self.budget[b] = budget if cfg.time is None else 1 << 62
        self.deadline[b] = None if cfg.time is None else time.perf_counter() + cfg.time
        self.done[b] = 0
        self.phase[b] = 1
        self.noise[b] = noise
        self.root_value[b] = 0.0

    def accepts(self, state: Any) -> bool:
        """Whether ``state`` is of the game and rule set of this search's games (any state
        before the first :meth:`start`)."""
        if self.roots is None:
            return True
        arrays, consts, kernels = state.search_kernels()
        assert self.consts is not None
        return (tuple(kernels) == self._kernels
                and all(d.shape[1:] == a.shape for d, a in zip(self.roots, arrays, strict=True))
                and all(np.array_equal(x, y) for x, y in zip(consts, self.consts, strict=True)))

    def finished(self, b: int) -> bool:
        """Whether game ``b``'s search has run its budget."""
        return bool(self.phase[b] == 3)

    def release(self, b: int) -> None:
        """Mark slot ``b`` idle (its game is over or left the batch)."""
        self.phase[b] = 0
        self.agents[b] = None

    def active(self) -> bool:
        """Whether some game still has a search running."""
        return bool(np.any((self.phase == 1) | (self.phase == 2)))

    # -- one round ------------------------------------------------------------------------

    def run_round(self) -> list[int]:
        """One round for every running search: collect, one network call, backup. Returns
        the slots whose searches finished in this round."""
        if self.roots is None:
            return []
        cfg = self.config
        for b in range(self.B):
            if self.phase[b] == 1:
                self.want[b] = 1
            elif self.phase[b] == 2:
                self.want[b] = min(self.leaf_batch, int(self.budget[b] - self.done[b]))
            else:
                self.want[b] = 0
        self._reserve()
        ev = self.evaluator
        rollout_kind = {"none": 0, "random": 1, "greedy": 2}[ev.rollout]
        run = self._run.get(rollout_kind > 0)
        if run is None:
            run = self._run[rollout_kind > 0] = _bind(self._kernels, self.net_kernels,
                                                      rollout_kind > 0)
        n, rows, status = run(
            self.parent, self.action, self.first_child, self.n_children, self.kind,
            self.to_move, self.N, self.W, self.prior, self.vloss, self.size, self.roots,
            self.consts, self.enc_consts, self.want, float(cfg.c), float(cfg.fpu),
            cfg.chance == "sample", True, self.leaf_batch > 1, self.g_on, self.g_k,
            self.g_table, self.g_tlen, self.g_noise, self.g_logits, self.g_prior,
            self.root_value, float(cfg.gumbel_c_visit), float(cfg.gumbel_c_scale),
            rollout_kind, int(ev.samples), self.spatial, self.glob, self.ctx, self.leaf_game,
            self.leaf_node, self.leaf_kind, self.leaf_depth, self.leaf_path, self.leaf_value,
            self.leaf_row, self.leaf_off, self.leaf_n, self.ids_flat, self.order_flat,
            self.collected, self._legal_buf(), self.outcomes, self.probs, self.path)
        if status:
            self._grow_buffers()
        if rows:
            logits, values = ev.infer_arrays(self.spatial[:rows], self.glob[:rows])
            self.evaluations += rows
        else:
            logits = np.zeros((0, 1), dtype=np.float32)
            values = np.zeros((0, self.P), dtype=np.float32)
        if n:
            # one normalisation per call: the games of a batch share a rule set
            b0 = int(self.leaf_game[0])
            backup_leaves(self.first_child, self.N, self.W, self.prior, self.vloss, n,
                          self.leaf_game, self.leaf_node, self.leaf_kind, self.leaf_depth,
                          self.leaf_path, self.leaf_value, self.leaf_row, self.leaf_off,
                          self.leaf_n, self.ids_flat, self.order_flat, self.to_move,
                          np.ascontiguousarray(logits), np.ascontiguousarray(values),
                          self.leaf_batch > 1, float(self.offset[b0]), float(self.scale[b0]),
                          float(ev.rollout_lambda), self.root_value)
        self.rounds += 1
        finished = []
        now = None
        for b in range(self.B):
            if self.phase[b] == 1 and self.kind[b, 0] != 0:
                self._root_ready(b)
            elif self.phase[b] == 2:
                self.done[b] += self.collected[b]
                over = self.done[b] >= self.budget[b]
                if self.deadline[b] is not None and self.done[b] > 0:
                    now = time.perf_counter() if now is None else now
                    over = over or now >= self.deadline[b]  # type: ignore[operator]
                if over:
                    self.phase[b] = 3
                    finished.append(b)
        return finished

    def _root_ready(self, b: int) -> None:
        """After the root's evaluation: the agent's root value, then its exploration, Gumbel
        state or Dirichlet noise (:func:`~taluva_ai.agents.search.root.explore`, as the
        Python search)."""
        agent = self.agents[b]
        tree = self.tree(b)
        agent._root_value = self.root_value[b].copy()
        k = int(self.n_children[b, 0])
        explore(agent, tree, int(self.gumbel_sims[b]), bool(self.noise[b]))
        if agent.config.root == "gumbel" and k > 1:
            g = agent._gumbel
            t = g.table
            if self.g_table.shape[1] < t.size or self.g_noise.shape[1] < k:
                self._grow_gumbel(max(t.size, self.g_table.shape[1]),
                                  max(k, self.g_noise.shape[1]))
            self.g_table[b, :t.size] = t
            self.g_tlen[b] = t.size
            self.g_noise[b, :k] = g.noise
            self.g_logits[b, :k] = g.logits
            self.g_prior[b, :k] = g.prior
            self.g_k[b] = k
            self.g_on[b] = True
        self.phase[b] = 2

    def _grow_gumbel(self, tlen: int, k: int) -> None:
        def grown(a: np.ndarray, width: int) -> np.ndarray:
            out = np.zeros((self.B, width), dtype=a.dtype)
            out[:, :a.shape[1]] = a
            return out

        self.g_table = grown(self.g_table, tlen)
        self.g_noise = grown(self.g_noise, k)
        self.g_logits = grown(self.g_logits, k)
        self.g_prior = grown(self.g_prior, k)

    def _legal_buf(self) -> np.ndarray:
        if not hasattr(self, "_lb"):
            assert self.roots is not None
            self._lb = np.empty(8 * self.roots[0].shape[1] + 64, dtype=np.int64)
        return self._lb

    def _reserve(self) -> None:
        """Grow the forest before a round when a game might not fit its leaves (the collect
        stops a game early otherwise, which changes its batches)."""
        m = self.n_children.max() if self.rounds % 16 == 0 else self._max_children
        self._max_children = max(int(m), self._max_children)
        need = int((self.size + self.want * (self._max_children + 64)).max())
        if need > self.capacity:
            cap = self.capacity
            while cap < need:
                cap *= 2
            self._grow(cap)
        need_flat = self.L * (self._max_children + 1)
        if need_flat > self.ids_flat.shape[0]:
            self.ids_flat = np.zeros(2 * need_flat, dtype=np.int64)
            self.order_flat = np.zeros(2 * need_flat, dtype=np.int64)

    def _grow_buffers(self) -> None:
        self._grow(2 * self.capacity)
        self.ids_flat = np.zeros(2 * self.ids_flat.shape[0], dtype=np.int64)
        self.order_flat = np.zeros(2 * self.order_flat.shape[0], dtype=np.int64)


def search_one(agent: Any, state: Any, sims: int | None = None, noise: bool = True,
               progress: Callable[[int], bool] | None = None) -> tuple[_Tree, bool]:
    """Run one search of ``state`` for ``agent`` in compiled code (the ``az`` agent's move;
    :func:`compiled_net_search_ok` must hold); returns its tree and whether it ran its budget.
    ``progress``, when given, is called after each round with the simulations done; returning
    False stops the search after that round (``MCTSAgent.search``)."""
    n = int(getattr(state, "num_players", None) or len(state.returns()))
    bs = getattr(agent, "_batched", None)
    if bs is None or n != bs.num_players or not bs.accepts(state):
        bs = BatchedSearch(agent.evaluator, agent.config, 1, n)
        agent._batched = bs
    bs.start(0, agent, state, sims=sims, noise=noise)
    while not bs.finished(0):
        bs.run_round()
        if progress is not None and not progress(int(bs.done[0])):
            bs.release(0)
            return bs.tree(0), False
    return bs.tree(0), True


__all__: Sequence[str] = ["BatchedSearch", "backup_leaves", "collect", "compiled_net_search_ok",
                          "search_one"]
