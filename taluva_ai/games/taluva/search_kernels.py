"""Taluva's compiled search interface: the kernels a compiled search loop calls directly.

A game that offers ``state.search_kernels()`` lets MCTS run whole simulations in compiled code
(``agents/mcts_compiled.py``) instead of stepping the game through Python. The interface is
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

The network-guided search of many games at once (``agents/mcts_batched.py``) needs three more,
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
``net_id(k, e, ctx, a) -> id``              network id of action ``a`` (``-1``: none)
==========================================  =============================================
"""

from __future__ import annotations

import numpy as np
from numba import njit

from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva.encoding import (
    _globals,
    encode_planes,
    engine_to_view,
    site_globals,
    solo_globals,
    view_center,
)
from taluva_ai.games.taluva.heuristic import action_values as _action_values
from taluva_ai.games.taluva.heuristic import rollout as _rollout
from taluva_ai.games.taluva.rules import R_PLAYERS, R_SOLO
from taluva_ai.games.taluva.state import M_BOTTOM, M_DRAWN, M_PLAYER, M_STEP, M_TILE


@njit(cache=True)
def copy(s):
    return (s[0].copy(), s[1].copy(), s[2].copy(), s[3].copy())


@njit(cache=True)
def to_move(s):
    step = s[3][M_STEP]
    if step == K.S_CHANCE:
        return -1
    if step == K.S_TERMINAL:
        return -4
    return s[3][M_PLAYER]


@njit(cache=True)
def legal(s, k, out):
    return K.legal_actions(s[0], s[1], s[3], k[0], k[1], k[2], k[4], out)


@njit(cache=True)
def chance(s, outcomes, probs):
    deck = s[2]
    d = s[3][M_DRAWN]
    counts = np.zeros(25, dtype=np.int64)
    for i in range(d, deck.shape[0]):
        counts[deck[i]] += 1
    total = deck.shape[0] - d
    n = 0
    for t in range(25):
        if counts[t] > 0:
            outcomes[n] = t
            probs[n] = counts[t] / total
            n += 1
    return n


@njit(cache=True)
def apply(s, k, a):
    K.apply_action(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], k[4], a)


@njit(cache=True)
def rollout(s, k, greedy, samples, seed, out):
    _rollout(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], k[4], greedy, samples, seed, out)


@njit(cache=True)
def terminal_values(s, k, out):
    K.returns(s[1], s[3], k[0], out)


@njit(cache=True)
def values(s, k, out, vals):
    return _action_values(s[0], s[1], s[3], k[0], k[1], k[2], k[3], k[4], out, vals)


@njit(cache=True)
def solo_values(s, k, out, vals):
    """:func:`values` of the solo variant: the greedy rollout policy's preferences
    (``solo_kernels.policy_values``; ``state.prior_values()``)."""
    return SK.policy_values(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], out, vals)


@njit(cache=True)
def solo_chance(s, outcomes, probs):
    """:func:`chance` of the solo variant: the unseen tiles exclude the known ones put under
    the draw pile (``unplaceable="bottom"``)."""
    deck = s[2]
    d = s[3][M_DRAWN]
    end = deck.shape[0] - s[3][M_BOTTOM]
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


@njit(cache=True)
def solo_rollout(s, k, greedy, samples, seed, out):
    """:func:`rollout` of the solo variant: ``out[0]`` the final score."""
    out[0] = SK.rollout(s[0], s[1], s[2], s[3], k[0], k[1], k[2], k[3], greedy, samples, seed)


@njit(cache=True)
def row(S, b):
    return (S[0][b], S[1][b], S[2][b], S[3][b])


@njit(cache=True)
def encode(s, k, e, spatial, glob, ctx):
    """``TaluvaEncoder.encode`` compiled: the first ``23 + 3n`` planes of the view encoding
    (recentred on the island) into ``spatial``, :func:`~.encoding.global_features` (solo: and
    the solo planes' values; with ``build_sites``, :func:`~.encoding.site_globals`) into
    ``glob``; the view centre ``(qc, rc)`` into ``ctx[:2]``."""
    cells, players, meta = s[0], s[1], s[3]
    rules, nbr, cell_of = k[0], k[1], k[2]
    vr = e[0]
    qc, rc = view_center(cells, meta, cell_of)
    ctx[0] = qc
    ctx[1] = rc
    player = meta[M_PLAYER]
    label = np.full(cells.shape[0], -1, dtype=np.int32)
    encode_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, e[1], spatial,
                  label, False)
    step = meta[M_STEP]
    tile = -1
    if step == K.S_TILE or step == K.S_BUILD:
        tile = meta[M_TILE]
    ng = 12 + 4 * rules[R_PLAYERS]
    _globals(players, meta, rules, player, tile, glob[:ng])
    if rules[R_SOLO] != 0:
        solo_globals(cells, players, meta, rules, nbr, cell_of, glob[ng:])
    elif e[2] != 0:
        site_globals(cells, meta, rules, nbr, cell_of, player, glob[ng:])


@njit(cache=True)
def net_id(k, e, ctx, a):
    return engine_to_view(a, k[1].shape[0], k[3], ctx[0], ctx[1], e[0])


@njit(cache=True)
def net_rollout(s, k, greedy, samples, seed, out):
    """:func:`rollout` or, in a solo game, :func:`solo_rollout` (by the rule set)."""
    if k[0][R_SOLO] != 0:
        solo_rollout(s, k, greedy, samples, seed, out)
    else:
        rollout(s, k, greedy, samples, seed, out)


KERNELS = (copy, to_move, legal, chance, apply, rollout, terminal_values, values)
#: The kernels of the network-guided search (module docstring), for 2-4 players and solo.
NET_KERNELS = (row, encode, net_id)
#: The same interface for a solo game (SOLO.md): its chance outcomes, rollouts and values.
SOLO_KERNELS = (copy, to_move, legal, solo_chance, apply, solo_rollout, terminal_values,
                solo_values)
