"""NumPy's default random streams in compiled code, bit for bit, for envs whose scalar form draws
from ``numpy.random.default_rng`` (no gymnasium here).

``numpy.random.default_rng`` is a PCG64 generator (128-bit LCG with the XSL-RR output) seeded
through a ``SeedSequence``; ``Generator.integers(k)`` draws with Lemire's bounded method on
32-bit outputs (half of a 64-bit output, the other half kept for the next call). The kernels
here reproduce those three steps so that a compiled loop makes exactly the draws the Python
objects make (the tests compare them over many seeds):

- :func:`seed_state` fills a state with ``default_rng(seed_words)``'s (a ``SeedSequence`` of a
  list of non-negative integers below 2**64, e.g. ``[seed, ply]``);
- :func:`state_from_generator` copies a Python ``Generator``'s state (``state.bit_generator
  .state``) into one;
- :func:`integers` is ``Generator.integers(k)`` for ``1 <= k < 2**32``, advancing the state.

A state is ``uint64[6]``: the LCG state (high, low words), its increment (high, low), and the
buffered 32-bit half (a flag and the value), numpy's ``has_uint32`` / ``uinteger``.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()  # a first compile says so (taluva_ai.games.compiling)

STATE_SIZE = 6
_S_HI, _S_LO, _I_HI, _I_LO, _HAS32, _U32 = range(STATE_SIZE)

_M32 = np.uint64(0xFFFFFFFF)
_MULT_HI = np.uint64(0x2360ED051FC65DA4)  # PCG's default 128-bit multiplier
_MULT_LO = np.uint64(0x4385DF649FCCF645)
# SeedSequence's hash constants (numpy/random/bit_generator.pyx), pool of 4 uint32 words
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
_POOL = 4


@njit(cache=True, inline="always")
def _mul64(a, b):
    """``(high, low)`` words of the 128-bit product of two ``uint64``."""
    a_lo = a & _M32
    a_hi = a >> np.uint64(32)
    b_lo = b & _M32
    b_hi = b >> np.uint64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & _M32) + (p2 & _M32)
    hi = p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))
    lo = (mid << np.uint64(32)) | (p0 & _M32)
    return hi, lo


@njit(cache=True, inline="always")
def _lcg_step(st):
    """``state = state * MULT + inc`` (mod 2**128)."""
    hi, lo = _mul64(st[_S_LO], _MULT_LO)
    hi = hi + st[_S_LO] * _MULT_HI + st[_S_HI] * _MULT_LO
    lo2 = lo + st[_I_LO]
    carry = np.uint64(1) if lo2 < lo else np.uint64(0)
    st[_S_HI] = hi + st[_I_HI] + carry
    st[_S_LO] = lo2


@njit(cache=True)
def next64(st):
    """The next ``uint64`` output of the PCG64 state ``st`` (XSL-RR of the stepped state)."""
    _lcg_step(st)
    x = st[_S_HI] ^ st[_S_LO]
    rot = st[_S_HI] >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True)
def next32(st):
    """The next 32-bit output (``uint64`` below 2**32): the buffered high half of the last
    64-bit output, or the low half of a new one (numpy's ``pcg64_next32``)."""
    if st[_HAS32] != 0:
        st[_HAS32] = np.uint64(0)
        return st[_U32]
    v = next64(st)
    st[_HAS32] = np.uint64(1)
    st[_U32] = v >> np.uint64(32)
    return v & _M32


@njit(cache=True)
def integers(st, k):
    """``Generator.integers(k)`` (``1 <= k < 2**32``): uniform in ``0 .. k-1``, as an int64.
    ``k == 1`` draws nothing (as numpy)."""
    rng = np.uint64(k - 1)
    if rng == np.uint64(0):
        return np.int64(0)
    excl = rng + np.uint64(1)
    m = next32(st) * excl
    left = m & _M32
    if left < excl:
        threshold = (_M32 - rng) % excl
        while left < threshold:
            m = next32(st) * excl
            left = m & _M32
    return np.int64(m >> np.uint64(32))


@njit(cache=True, inline="always")
def _hashmix(value, hc):
    """SeedSequence's ``hashmix``; ``hc uint64[1]`` is the running hash constant."""
    value = (value ^ hc[0]) & _M32
    hc[0] = (hc[0] * _MULT_A) & _M32
    value = (value * hc[0]) & _M32
    return value ^ (value >> _XSHIFT)


@njit(cache=True, inline="always")
def _mix(x, y):
    r = ((_MIX_MULT_L * x) - (_MIX_MULT_R * y)) & _M32
    return r ^ (r >> _XSHIFT)


@njit(cache=True)
def seed_state(st, words):
    """Fill ``st`` with the state of ``numpy.random.default_rng(list(words))``.

    Args:
        st: ``uint64[6]`` output.
        words: ``uint64[k]`` the seed's integers (each below 2**64; each becomes one 32-bit
            entropy word when below 2**32, two otherwise, as ``SeedSequence`` splits them).
    """
    ent = np.zeros(2 * words.shape[0] + _POOL, dtype=np.uint64)
    ne = 0
    for w in words:
        ent[ne] = w & _M32
        ne += 1
        if w > _M32:
            ent[ne] = w >> np.uint64(32)
            ne += 1
    pool = np.zeros(_POOL, dtype=np.uint64)
    hc = np.empty(1, dtype=np.uint64)
    hc[0] = _INIT_A
    for i in range(_POOL):
        pool[i] = _hashmix(ent[i] if i < ne else np.uint64(0), hc)
    for s in range(_POOL):
        for d in range(_POOL):
            if s != d:
                pool[d] = _mix(pool[d], _hashmix(pool[s], hc))
    for s in range(_POOL, ne):
        for d in range(_POOL):
            pool[d] = _mix(pool[d], _hashmix(ent[s], hc))
    # generate_state(4, uint64): 8 uint32 words, paired little-endian
    out = np.empty(8, dtype=np.uint64)
    hb = _INIT_B
    for i in range(8):
        v = pool[i % _POOL] ^ hb
        hb = (hb * _MULT_B) & _M32
        v = (v * hb) & _M32
        out[i] = v ^ (v >> _XSHIFT)
    seed_hi = out[0] | (out[1] << np.uint64(32))
    seed_lo = out[2] | (out[3] << np.uint64(32))
    inc_hi = out[4] | (out[5] << np.uint64(32))
    inc_lo = out[6] | (out[7] << np.uint64(32))
    # pcg64_srandom_r: state 0, inc = initseq << 1 | 1, step, state += initstate, step
    st[_I_HI] = (inc_hi << np.uint64(1)) | (inc_lo >> np.uint64(63))
    st[_I_LO] = (inc_lo << np.uint64(1)) | np.uint64(1)
    st[_S_HI] = np.uint64(0)
    st[_S_LO] = np.uint64(0)
    _lcg_step(st)
    lo = st[_S_LO] + seed_lo
    carry = np.uint64(1) if lo < seed_lo else np.uint64(0)
    st[_S_HI] = st[_S_HI] + seed_hi + carry
    st[_S_LO] = lo
    _lcg_step(st)
    st[_HAS32] = np.uint64(0)
    st[_U32] = np.uint64(0)


def state_from_generator(gen: np.random.Generator, out: np.ndarray) -> None:
    """Copy the state of ``gen`` (a PCG64 ``Generator``, as ``default_rng`` makes) into
    ``out uint64[6]``.

    Raises:
        ValueError: ``gen``'s bit generator is not PCG64.
    """
    s = gen.bit_generator.state
    if s.get("bit_generator") != "PCG64":
        raise ValueError(f"a PCG64 generator is needed, got {s.get('bit_generator')!r}")
    m = (1 << 64) - 1
    state, inc = int(s["state"]["state"]), int(s["state"]["inc"])
    out[:] = [state >> 64, state & m, inc >> 64, inc & m, int(s["has_uint32"]),
              int(s["uinteger"])]


__all__ = ["STATE_SIZE", "integers", "next32", "next64", "seed_state", "state_from_generator"]
