"""The search tree in flat arrays, and its compiled expansion, virtual loss and backup.

Shared by every MCTS path of :mod:`taluva_ai.agents.search` (the Python fallback, the compiled
rollout search, the compiled batched network search); selection is :mod:`.puct`.

Nodes are rows of a few arrays; the children of a node are consecutive rows
``first_child .. first_child + n_children - 1``. ``W[node, p]`` sums the values of seat ``p``
over the simulations through ``node`` (max^n: every decision node's player maximizes their own
entry; Luckhart & Irani 1986; Sturtevant 2003 for max^n in MCTS).
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()  # a first compile says so (taluva_ai.games.compiling)

UNEXPANDED = 0
DECISION = 1
CHANCE = 2
TERMINAL = 3


class Tree:
    """Growable flat-array tree for ``num_players`` seats.

    Attributes (per node): ``parent`` int32, ``action`` int64 (the edge into the node: an action
    id, or a chance outcome under a chance node), ``first_child`` / ``n_children`` int32,
    ``kind`` int8 (UNEXPANDED, DECISION, CHANCE, TERMINAL), ``to_move`` int8 (seat at a decision
    node), ``N`` float64 visits, ``W`` float64[num_players] value sums, ``prior`` float64 (policy
    prior of the edge, or the outcome's probability under a chance node), ``vloss`` float64
    pending virtual losses.
    """

    def __init__(self, num_players: int, capacity: int = 4096) -> None:
        self.num_players = num_players
        self.size = 0
        self._alloc(capacity)
        self.add_root()

    def _alloc(self, cap: int) -> None:
        self.parent = np.full(cap, -1, dtype=np.int32)
        self.action = np.full(cap, -1, dtype=np.int64)
        self.first_child = np.full(cap, -1, dtype=np.int32)
        self.n_children = np.zeros(cap, dtype=np.int32)
        self.kind = np.zeros(cap, dtype=np.int8)
        self.to_move = np.full(cap, -1, dtype=np.int8)
        self.N = np.zeros(cap, dtype=np.float64)
        self.W = np.zeros((cap, self.num_players), dtype=np.float64)
        self.prior = np.zeros(cap, dtype=np.float64)
        self.vloss = np.zeros(cap, dtype=np.float64)

    @property
    def capacity(self) -> int:
        return int(self.parent.shape[0])

    def _grow(self, need: int) -> None:
        cap = self.capacity
        while cap < need:
            cap *= 2
        if cap == self.capacity:
            return
        old = {k: getattr(self, k) for k in
               ("parent", "action", "first_child", "n_children", "kind", "to_move", "N", "W",
                "prior", "vloss")}
        self._alloc(cap)
        for k, arr in old.items():
            getattr(self, k)[: arr.shape[0]] = arr

    def add_root(self) -> None:
        self.size = 1
        self.parent[0] = -1
        self.kind[0] = UNEXPANDED

    def add_children(self, node: int, actions: np.ndarray, priors: np.ndarray,
                     shuffle: bool = False) -> np.ndarray:
        """Append the children of ``node``, one per action with its prior; with ``shuffle``
        in a random order (numba's ``np.random`` stream). Returns ``int64[k]``: child ``i``
        holds ``actions[order[i]]``."""
        k = int(actions.shape[0])
        self._grow(self.size + k)
        order = _add_children(self.parent, self.action, self.first_child, self.n_children,
                              self.kind, self.N, self.W, self.prior, self.vloss, self.size, node,
                              actions, priors, shuffle)
        self.size += k
        return order

    def copy(self) -> Tree:
        """An independent copy (its arrays copied)."""
        t = object.__new__(Tree)
        t.num_players = self.num_players
        t.size = self.size
        for k in ("parent", "action", "first_child", "n_children", "kind", "to_move", "N", "W",
                  "prior", "vloss"):
            setattr(t, k, getattr(self, k).copy())
        return t

    def children(self, node: int) -> range:
        f = int(self.first_child[node])
        return range(f, f + int(self.n_children[node])) if f >= 0 else range(0)

    def subtree(self, new_root: int) -> Tree:
        """A new tree holding the subtree under ``new_root`` (tree reuse between moves)."""
        t = Tree(self.num_players, capacity=max(1024, self.size))
        order = [new_root]
        index = {new_root: 0}
        i = 0
        while i < len(order):
            for c in self.children(order[i]):
                index[c] = len(order)
                order.append(c)
            i += 1
        idx = np.array(order, dtype=np.int64)
        n = idx.size
        t._grow(n)
        t.size = n
        for k in ("action", "n_children", "kind", "to_move", "N", "W", "prior"):
            getattr(t, k)[:n] = getattr(self, k)[idx]
        t.vloss[:n] = 0.0
        remap = np.full(self.size, -1, dtype=np.int64)
        remap[idx] = np.arange(n)
        t.parent[:n] = np.where(self.parent[idx] >= 0, remap[np.maximum(self.parent[idx], 0)], -1)
        t.parent[0] = -1
        fc = self.first_child[idx]
        t.first_child[:n] = np.where(fc >= 0, remap[np.maximum(fc, 0)], -1)
        return t


@njit(cache=True)
def _add_children(parent, action, first_child, n_children, kind, N, W, prior, vloss, start,
                  node, actions, priors, shuffle):
    k = actions.shape[0]
    order = np.arange(k)
    if shuffle:
        for i in range(k - 1, 0, -1):  # Fisher-Yates
            j = np.random.randint(i + 1)
            t = order[i]
            order[i] = order[j]
            order[j] = t
    first_child[node] = start
    n_children[node] = k
    for i in range(k):
        c = start + i
        parent[c] = node
        action[c] = actions[order[i]]
        prior[c] = priors[order[i]]
        kind[c] = 0
        first_child[c] = -1
        n_children[c] = 0
        N[c] = 0.0
        vloss[c] = 0.0
        for p in range(W.shape[1]):
            W[c, p] = 0.0
    return order


@njit(cache=True)
def add_virtual_loss(vloss, path, depth, amount):
    for i in range(depth):
        vloss[path[i]] += amount


@njit(cache=True)
def backup(N, W, path, depth, value):
    """Add one visit and the value vector ``value`` to every node of the path."""
    for i in range(depth):
        node = path[i]
        N[node] += 1.0
        for p in range(value.shape[0]):
            W[node, p] += value[p]


@njit(cache=True)
def seed_numba(seed):
    np.random.seed(seed)
