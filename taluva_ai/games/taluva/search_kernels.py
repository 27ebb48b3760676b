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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva.heuristic import action_values as _action_values
from taluva_ai.games.taluva.heuristic import rollout as _rollout
from taluva_ai.games.taluva.state import M_BOTTOM, M_DRAWN, M_PLAYER, M_STEP


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


KERNELS = (copy, to_move, legal, chance, apply, rollout, terminal_values, values)
#: The same interface for a solo game (SOLO.md): its chance outcomes, rollouts and values.
SOLO_KERNELS = (copy, to_move, legal, solo_chance, apply, solo_rollout, terminal_values,
                solo_values)
