"""Taluva's compiled search interface: the kernels a compiled search loop calls directly.

A game that offers ``state.search_kernels()`` lets MCTS run whole simulations in compiled code
(``agents/search/compiled.py``) instead of stepping the game through Python. The interface is
generic: a state is a tuple of arrays, the game's constants another tuple, and eight
Numba-compiled functions with these signatures:

==========================================  =============================================
``copy(s) -> s``                            an independent copy of the state tuple
``to_move(s) -> int``                       seat to move, -1 at a chance node, -4 at the end
``legal(s, k, out) -> n``                   legal action ids into ``out`` (int64)
``chance(s, outcomes, probs) -> n``         chance outcomes and probabilities
``apply(s, k, a)``                          apply an action or chance outcome, in place
``rollout(s, k, greedy, samples, seed,      play to the end in place, returns per seat into
out)``                                      ``out`` (float64); seed -1 continues the stream
``terminal_values(s, k, out)``              returns per seat at the end
``values(s, k, out, vals) -> n``            legal action ids into ``out`` with the values
                                            the priors of PUCT come from into ``vals``
                                            (float64; ``state.prior_values()``)
==========================================  =============================================

Two sets: :data:`KERNELS` for 2-4 players and :data:`SOLO_KERNELS` for the solo variant
(``state.search_kernels()`` gives the one of its rule set). Neither reaches the other's code, so
a program that searches only 2-4 player games never compiles the solo variant's rules.

The kernels here are one-line adapters from this interface to the rules' kernels, inlined by
Numba where a search loop calls them (``inline="always"``): each would otherwise be compiled on
its own, with all the rules below it optimized and compiled again, only to be linked into the
loop (docs/benchmarks.md, "Compile time"). The search loops (``agents/search/compiled.py``,
``agents/search/batched.py``) are compiled, and cached, once per kernel set
(``taluva_ai.agents.search.specialize``).

The network-guided search of many games at once (``agents/search/batched.py``) needs three more,
:data:`NET_KERNELS`: the state of game ``b`` from arrays that stack ``B`` states on a leading
axis, and the network encoder (``agents/alphazero/encoder.py``) in compiled form. ``e`` is the
encoder's constants tuple (Taluva: ``(view_radius, valid bool[S, S], build_sites)``, from
``TaluvaEncoder.search_kernels()``) and ``ctx`` an ``int64[4]`` row that the encoding fills
with what its network ids depend on (Taluva: the view centre):

==========================================  =============================================
``row(S, b) -> s``                          game ``b`` of the stacked states ``S`` (views)
``encode(s, k, e, spatial, globals, ctx)``  the spatial planes (``float32[Cs, S, S]``) and
                                            global features (``float32[G]``) of a decision
                                            state, from the view of the player to move,
                                            exactly as ``NetEncoder.encode``
                                            (``solo_encode`` in the solo variant)
``net_id(k, e, ctx, a) -> id``              network id of action ``a`` (``-1``: none)
==========================================  =============================================
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva.encoding import (
    _globals,
    board_planes,
    engine_to_view,
    site_globals,
    solo_globals,
    view_center,
)
from taluva_ai.games.taluva.heuristic import fast_action_values as _fast_action_values
from taluva_ai.games.taluva.heuristic import rollout as _rollout
from taluva_ai.games.taluva.rules import R_PLAYERS
from taluva_ai.games.taluva.state import M_BOTTOM, M_DRAWN, M_PLAYER, M_STEP, M_TILE


@njit(cache=True, inline="always")
def copy(s):
    return (s[0].copy(), s[1].copy(), s[2].copy(), s[3].copy())


@njit(cache=True, inline="always")
def to_move(s):
    step = s[3][M_STEP]
    if step == K.S_CHANCE:
        return -1
    if step == K.S_TERMINAL:
        return -4
    return s[3][M_PLAYER]


@njit(cache=True, inline="always")
def legal(s, k, out):
    return K.standard_legal_actions(s[0], s[1], s[3], k[0], k[1], k[2], k[4], out)


@njit(cache=True, inline="always")
def solo_legal(s, k, out):
    """:func:`legal` of the solo variant."""
    return SK.solo_legal_actions(s[0], s[1], s[3], k[0], k[1], k[2], out)


@njit(cache=True, inline="always")
def _draw_outcomes(deck, d, end, outcomes, probs):
    """The tile types of ``deck[d:end]`` (the unseen tiles) into ``outcomes`` and their shares
    of those tiles into ``probs``, ascending type; returns their number (the one copy of
    :func:`chance` and :func:`solo_chance`)."""
    counts = np.zeros(25, dtype=np.int64)
    for i in range(d, end):
        counts[deck[i]] += 1
    total = end - d
    n = 0
    for t in range(25):
        if counts[t] > 0:
            outcomes[n] = t
            probs[n] = counts[t] / total
            n += 1
    return n


@njit(cache=True, inline="always")
def chance(s, outcomes, probs):
    return _draw_outcomes(s[2], s[3][M_DRAWN], s[2].shape[0], outcomes, probs)


@njit(cache=True, inline="always")
def apply(s, k, a):
    K.standard_apply_action(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], k[4], a)


@njit(cache=True, inline="always")
def solo_apply(s, k, a):
    """:func:`apply` of the solo variant."""
    SK.solo_apply_action(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], a)


@njit(cache=True, inline="always")
def rollout(s, k, greedy, samples, seed, out):
    _rollout(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], k[4], greedy, samples, seed, out)


@njit(cache=True, inline="always")
def terminal_values(s, k, out):
    K.returns(s[1], s[3], k[0], out)


@njit(cache=True, inline="always")
def values(s, k, out, vals):
    return _fast_action_values(s[0], s[1], s[3], k[0], k[1], k[2], k[3], k[4], out, vals)


@njit(cache=True, inline="always")
def solo_values(s, k, out, vals):
    """:func:`values` of the solo variant: the greedy rollout policy's preferences
    (``solo_kernels.policy_values``; ``state.prior_values()``)."""
    return SK.policy_values(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], out, vals)


@njit(cache=True, inline="always")
def solo_chance(s, outcomes, probs):
    """:func:`chance` of the solo variant: the unseen tiles exclude the known ones put under
    the draw pile (``unplaceable="bottom"``)."""
    return _draw_outcomes(s[2], s[3][M_DRAWN], s[2].shape[0] - s[3][M_BOTTOM], outcomes, probs)


@njit(cache=True, inline="always")
def solo_rollout(s, k, greedy, samples, seed, out):
    """:func:`rollout` of the solo variant: ``out[0]`` the final score."""
    out[0] = SK.rollout(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], greedy, samples, seed)


@njit(cache=True, inline="always")
def row(S, b):
    return (S[0][b], S[1][b], S[2][b], S[3][b])


@njit(cache=True, inline="always")
def encode(s, k, e, spatial, glob, ctx):
    """``TaluvaEncoder.encode`` compiled, 2-4 players: the first ``23 + 3n`` planes of the view
    encoding (recentred on the island) into ``spatial``, :func:`~.encoding.global_features`
    (with ``build_sites``, and :func:`~.encoding.site_globals`) into ``glob``; the view centre
    ``(qc, rc)`` into ``ctx[:2]``."""
    ng = _encode_common(s, k, e, spatial, glob, ctx)
    if e[2] != 0:
        site_globals(s[0], s[3], k[0], k[1], k[2], s[3][M_PLAYER], glob[ng:])


@njit(cache=True, inline="always")
def solo_encode(s, k, e, spatial, glob, ctx):
    """:func:`encode` of the solo variant: the solo planes' values follow the globals."""
    ng = _encode_common(s, k, e, spatial, glob, ctx)
    solo_globals(s[0], s[1], s[3], k[0], k[1], k[2], glob[ng:])


@njit(cache=True, inline="always")
def _encode_common(s, k, e, spatial, glob, ctx):
    """The planes and the globals of every rule set (:func:`encode`); returns the number of
    globals written."""
    cells, players, meta = s[0], s[1], s[3]
    rules, nbr, cell_of = k[0], k[1], k[2]
    vr = e[0]
    qc, rc = view_center(cells, meta, cell_of)
    ctx[0] = qc
    ctx[1] = rc
    player = meta[M_PLAYER]
    label = np.full(cells.shape[0], -1, dtype=np.int32)
    board_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, e[1], spatial,
                 label)
    step = meta[M_STEP]
    tile = -1
    if step == K.S_TILE or step == K.S_BUILD:
        tile = meta[M_TILE]
    ng = 12 + 4 * rules[R_PLAYERS]
    _globals(players, meta, rules, player, tile, glob[:ng])
    return ng


@njit(cache=True, inline="always")
def net_id(k, e, ctx, a):
    return engine_to_view(a, k[1].shape[0], k[3], ctx[0], ctx[1], e[0])


@njit(cache=True, inline="always")
def no_rollout(s, k, greedy, samples, seed, out):
    """A :func:`rollout` that plays nothing, for a search without rollouts (compiling one
    would compile the greedy policy for nothing)."""


#: The kernels of 2-4 player games (module docstring).
KERNELS = (copy, to_move, legal, chance, apply, rollout, terminal_values, values)
#: The same interface for a solo game (SOLO.md): its rules, chance outcomes, rollouts and
#: values.
SOLO_KERNELS = (copy, to_move, solo_legal, solo_chance, solo_apply, solo_rollout,
                terminal_values, solo_values)
#: The kernels of the network-guided search (module docstring), for 2-4 players.
NET_KERNELS = (row, encode, net_id)
#: The same for the solo variant.
SOLO_NET_KERNELS = (row, solo_encode, net_id)
