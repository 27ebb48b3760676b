"""Training samples, their files, and the replay buffer over a window of recent games.

A sample is one recorded decision of a self-play (or expert) game:

- ``spatial uint8[Cs, S, S]``, ``globals float32[G]``: the encoder's input, from the view of
  the player to move;
- the legal actions' network ids under every symmetry (``ids int16|int32[K, k]``; row 0 is
  the position as played) and the policy target over them (``target float32[k]``, summing to
  1): the search policy at the root;
- ``value float32[n]``: the game's final returns by player slot (slot 0 = the player to move);
- ``aux float32[n, A]``: the encoder's auxiliary targets of the finished game by player slot
  (:meth:`~.encoder.NetEncoder.aux_targets`; ``A = 0`` for an encoder without them);
- ``ownership uint8[O, S, S]``: who holds each pixel at the end of the game, by player slot,
  in the sample's frame (:meth:`~.encoder.NetEncoder.ownership_targets`; ``O = 0`` for an
  encoder without them).

A :class:`SampleSet` stores many samples with the ragged parts concatenated (``offsets``), and
is one compressed ``.npz`` file on disk (:meth:`SampleSet.save`, written atomically). The
:class:`ReplayBuffer` keeps the sets of the most recent ``window_games`` games and draws
training batches, each sample under a random symmetry (the 6 rotations for Taluva; planes
and policy ids turned together; Silver et al. 2017 used the 8 symmetries of Go the same way).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections import deque
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.protocol import GameState
from taluva_ai.runfiles import write_atomic

_FIELDS = ("bits", "ints", "globals", "value", "player", "game", "offsets", "ids", "target")


def _widen_bytes(packed: np.ndarray, width: int) -> np.ndarray:
    """``uint8[N, B]`` padded with zero columns to ``B = width`` (their rows are marked
    unknown by the caller)."""
    if packed.shape[1] == width:
        return packed
    out = np.zeros((packed.shape[0], width), dtype=np.uint8)
    out[:, :packed.shape[1]] = packed
    return out


def _widen(aux: np.ndarray, width: int) -> np.ndarray:
    """``aux float32[N, n, A]`` padded with NaN (unknown) to ``A = width``."""
    if aux.shape[2] == width:
        return aux
    out = np.full((*aux.shape[:2], width), np.nan, dtype=np.float32)
    out[:, :, :aux.shape[2]] = aux
    return out


@dataclass
class SampleSet:
    """Samples in arrays (``N`` samples, ``T`` legal ids in all, ``K`` symmetries).

    The planes are stored compactly: the encoder's binary planes as bits, the others as bytes
    (:meth:`spatial`; about 5 KB a 2-player Taluva sample instead of 21 KB).

    Attributes:
        bits: ``uint8[N, ceil(Cb S^2 / 8)]`` the ``Cb`` binary planes, packed
            (``numpy.packbits``); ints: ``uint8[N, Cs - Cb, S, S]`` the other planes.
        globals: ``float32[N, G]``; value: ``float32[N, n]`` the game's result (value
            targets, by player slot, slot 0 the mover).
        player: ``int8[N]`` the seat to move; game: ``int32[N]`` the game index in its run.
        offsets: ``int64[N + 1]``: sample ``i``'s ids and targets are ``[offsets[i],
            offsets[i + 1])``.
        ids: ``int16|int32[K, T]`` network ids under each symmetry; target: ``float32[T]``.
        games: number of games the samples come from.
        root_value: ``float32[N, n]`` the search's mean value at the root when the sample was
            recorded, by player slot on the same scale as ``value`` (NaN where no search
            made the sample: the warm start's expert games, files written before it was
            recorded); mixed into the value target by ``[train] value_target_mix``
            (:meth:`ReplayBuffer.sample`).
        rollout_value: ``float32[N, n]`` the mean result of the greedy rollouts played from
            the sample's position (``[selfplay] value_rollouts``), by player slot on the same
            scale (NaN where none were played); mixed into the value target by ``[train]
            rollout_target_mix``.
        aux: ``float32[N, n, A]`` the auxiliary targets of the sample's game by player slot
            (:meth:`~.encoder.NetEncoder.aux_targets`); NaN where unknown (files written
            before they were recorded); ``A = 0`` when there are none.
        ownership: ``uint8[N, ceil(O S^2 / 8)]`` the ownership targets of each sample
            (:meth:`~.encoder.NetEncoder.ownership_targets`, ``O`` planes), packed
            (``numpy.packbits``); no columns when the encoder has none.
        ownership_known: ``bool[N]``: whether sample ``i``'s ownership is recorded (False in
            files written before it was, and for a sample whose frame is unknown).
    """

    bits: np.ndarray
    ints: np.ndarray
    globals: np.ndarray
    value: np.ndarray
    player: np.ndarray
    game: np.ndarray
    offsets: np.ndarray
    ids: np.ndarray
    target: np.ndarray
    games: int
    root_value: np.ndarray | None = None
    aux: np.ndarray | None = None
    rollout_value: np.ndarray | None = None
    ownership: np.ndarray | None = None
    ownership_known: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.root_value is None:
            self.root_value = np.full(self.value.shape, np.nan, dtype=np.float32)
        if self.rollout_value is None:
            self.rollout_value = np.full(self.value.shape, np.nan, dtype=np.float32)
        if self.aux is None:
            self.aux = np.zeros((*self.value.shape, 0), dtype=np.float32)
        if self.ownership is None:
            self.ownership = np.zeros((len(self.globals), 0), dtype=np.uint8)
        if self.ownership_known is None:
            self.ownership_known = np.zeros(len(self.globals), dtype=bool)

    def __len__(self) -> int:
        return int(self.globals.shape[0])

    def spatial(self, i: int, encoder: NetEncoder) -> np.ndarray:
        """``uint8[Cs, S, S]``: the planes of sample ``i``."""
        enc = encoder
        binary = enc.binary_planes
        ss = enc.side * enc.side
        out = np.empty((binary.size, enc.side, enc.side), dtype=np.uint8)
        out[binary] = np.unpackbits(self.bits[i], count=int(binary.sum()) * ss).reshape(
            -1, enc.side, enc.side)
        out[~binary] = self.ints[i]
        return out

    def example(self, i: int, k: int, encoder: NetEncoder
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sample ``i`` under symmetry ``k``: ``(spatial uint8[Cs, S, S], ids int64[k_i],
        target float32[k_i])``: the turned planes, the legal network ids of the turned
        position and the policy target over them."""
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return (encoder.transform_spatial(self.spatial(i, encoder), k),
                self.ids[k, lo:hi].astype(np.int64), self.target[lo:hi])

    def ownership_planes(self, i: int, k: int, encoder: NetEncoder) -> np.ndarray | None:
        """``uint8[O, S, S]``: sample ``i``'s ownership targets under symmetry ``k``, or None
        where they are not recorded."""
        o = encoder.num_ownership
        if not o or not np.asarray(self.ownership_known)[i]:
            return None
        s = encoder.side
        row = np.asarray(self.ownership)[i]
        if row.size != (o * s * s + 7) // 8:
            raise ValueError(f"ownership has {row.size} bytes a sample, the encoder needs "
                             f"{(o * s * s + 7) // 8}")
        planes = np.unpackbits(row, count=o * s * s).reshape(o, s, s)
        return encoder.transform_pixels(planes, k)

    def save(self, path: str | Path) -> str:
        """Write a compressed ``.npz`` atomically (:func:`taluva_ai.runfiles.write_atomic`);
        returns the SHA-256 of the file's bytes.

        Raises:
            OSError: it cannot be written (naming ``path``).
        """
        buf = io.BytesIO()
        np.savez_compressed(buf, games=np.int64(self.games), root_value=np.asarray(self.root_value),
                            rollout_value=np.asarray(self.rollout_value),
                            aux=np.asarray(self.aux), ownership=np.asarray(self.ownership),
                            ownership_known=np.asarray(self.ownership_known),
                            **{k: getattr(self, k) for k in _FIELDS})
        return write_atomic(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | Path, encoder: NetEncoder | None = None) -> SampleSet:
        """Read a file written by :meth:`save` (no pickles); with ``encoder``, also check
        that its arrays have that encoder's sizes (:meth:`problem_with`).

        Raises:
            ValueError: not a sample file, or not one of ``encoder`` (the file and the
                missing or malformed array are named).
            OSError: the file cannot be read.
        """
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in _FIELDS}
                games = int(z["games"])
                root = z["root_value"] if "root_value" in z.files else None
                rollout = z["rollout_value"] if "rollout_value" in z.files else None
                aux = z["aux"] if "aux" in z.files else None
                own = z["ownership"] if "ownership" in z.files else None
                known = z["ownership_known"] if "ownership_known" in z.files else None
        except KeyError as e:
            raise ValueError(f"{path}: not a sample file (no array {e})") from None
        except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:  # cut or damaged
            raise ValueError(f"{path}: not a sample file ({type(e).__name__}: {e})") from None
        if (own is None) != (known is None):
            have = "ownership" if known is None else "ownership_known"
            raise ValueError(f"{path}: inconsistent sample arrays (ownership and "
                             f"ownership_known come together; only {have} is there)")
        s = cls(games=games, root_value=root, aux=aux, rollout_value=rollout, ownership=own,
                ownership_known=known, **arrays)
        n = len(s)
        own, known = np.asarray(s.ownership), np.asarray(s.ownership_known)
        if own.ndim != 2 or own.shape[0] != n or own.dtype != np.uint8:
            raise ValueError(f"{path}: inconsistent sample arrays (ownership must be "
                             f"uint8[{n}, bytes], got {own.dtype}{list(own.shape)})")
        if known.shape != (n,) or known.dtype != bool:
            raise ValueError(f"{path}: inconsistent sample arrays (ownership_known must be "
                             f"bool[{n}], got {known.dtype}{list(known.shape)})")
        if known.any() and own.shape[1] == 0:
            raise ValueError(f"{path}: inconsistent sample arrays (ownership_known marks "
                             "samples whose ownership has 0 bytes)")
        for name in ("root_value", "rollout_value"):
            if np.asarray(getattr(s, name)).shape != s.value.shape:
                raise ValueError(f"{path}: inconsistent sample arrays ({name})")
        if np.asarray(s.aux).ndim != 3 or np.asarray(s.aux).shape[:2] != s.value.shape:
            raise ValueError(f"{path}: inconsistent sample arrays (aux)")
        if s.offsets.shape != (n + 1,) or s.ids.shape[1] != s.target.shape[0] or \
                s.offsets[-1] != s.target.shape[0]:
            raise ValueError(f"{path}: inconsistent sample arrays")
        problem = None if encoder is None else s.problem_with(encoder)
        if problem is not None:
            raise ValueError(f"{path}: not samples of this encoding: {problem}")
        return s

    def problem_with(self, encoder: NetEncoder) -> str | None:
        """Why these samples do not fit ``encoder`` (an array whose sizes are not the
        encoder's, named with both sizes), or None."""
        enc, n = encoder, len(self)
        s, binary = enc.side, enc.binary_planes
        want = {
            "bits": [n, (int(binary.sum()) * s * s + 7) // 8],
            "ints": [n, int((~binary).sum()), s, s],
            "globals": [n, enc.num_globals],
            "value": [n, enc.num_players],
        }
        own_bytes = (enc.num_ownership * s * s + 7) // 8
        got_own = np.asarray(self.ownership).shape[1]
        want["ownership"] = [n, got_own if got_own == 0 else own_bytes]
        aux_width = np.asarray(self.aux).shape[2]
        want["aux"] = [n, enc.num_players, aux_width if aux_width == 0 else enc.num_aux]
        for name, shape in want.items():
            got = list(np.asarray(getattr(self, name)).shape)
            if got != shape:
                return f"{name} is {got}, the encoder needs {shape}"
        ids = np.asarray(self.ids)
        if ids.shape[0] != enc.num_symmetries:
            return f"ids has {ids.shape[0]} symmetries, the encoder {enc.num_symmetries}"
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= enc.num_actions):
            return f"ids holds network ids outside 0..{enc.num_actions - 1}"
        return None

    @classmethod
    def concatenate(cls, sets: Sequence[SampleSet]) -> SampleSet:
        """One set holding all samples of ``sets`` in order (and the games of all, those
        without samples included)."""
        games = sum(s.games for s in sets)
        sets = [s for s in sets if len(s)] or list(sets[:1])
        if not sets:
            raise ValueError("nothing to concatenate")
        widths = {np.asarray(s.ownership).shape[1] for s in sets} - {0}
        if len(widths) > 1:
            raise ValueError(f"sample sets with ownership of {sorted(widths)} bytes a sample "
                             "cannot be joined")
        width = max(widths, default=0)
        offs = [np.zeros(1, dtype=np.int64)]
        base = 0
        for s in sets:
            offs.append(s.offsets[1:] + base)
            base += int(s.offsets[-1])
        return cls(
            bits=np.concatenate([s.bits for s in sets]),
            ints=np.concatenate([s.ints for s in sets]),
            globals=np.concatenate([s.globals for s in sets]),
            value=np.concatenate([s.value for s in sets]),
            player=np.concatenate([s.player for s in sets]),
            game=np.concatenate([s.game for s in sets]),
            offsets=np.concatenate(offs),
            ids=np.concatenate([s.ids for s in sets], axis=1),
            target=np.concatenate([s.target for s in sets]),
            games=games,
            root_value=np.concatenate([np.asarray(s.root_value) for s in sets]),
            rollout_value=np.concatenate([np.asarray(s.rollout_value) for s in sets]),
            aux=np.concatenate([_widen(np.asarray(s.aux), max(np.asarray(t.aux).shape[2]
                                                               for t in sets)) for s in sets]),
            ownership=np.concatenate([_widen_bytes(np.asarray(s.ownership), width)
                                      for s in sets]),
            ownership_known=np.concatenate([np.asarray(s.ownership_known) & (
                np.asarray(s.ownership).shape[1] == width) for s in sets]),
        )


class SampleBuilder:
    """Collects samples one by one (self-play workers) and makes a :class:`SampleSet`."""

    def __init__(self, encoder: NetEncoder) -> None:
        self.encoder = encoder
        self.id_dtype = np.int16 if encoder.num_actions < 2**15 else np.int32
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int,
                              int]] = []  # (bits, ints, globals, ids, target, player, game)
        self.root_values: list[np.ndarray | None] = []  # by seat, per row
        self.rollout_values: list[np.ndarray | None] = []  # by seat, per row
        self.frames: list[object] = []  # per row: Encoded.frame (None: unknown)
        self.rows_of: dict[int, list[int]] = {}  # game -> its rows
        self.ownership: dict[int, np.ndarray] = {}  # row -> packed ownership targets
        self.values: dict[int, np.ndarray] = {}
        self.aux: dict[int, np.ndarray] = {}
        self.games = 0

    def add(self, spatial: np.ndarray, globals_: np.ndarray, ids: np.ndarray,
            target: np.ndarray, player: int, game: int,
            root_value: np.ndarray | None = None,
            rollout_value: np.ndarray | None = None, frame: object = None) -> None:
        """One sample; its value is set when its game ends (:meth:`finish_game`).

        Args:
            ids: ``int[K, k]`` network ids of the legal actions under each symmetry.
            target: ``float[k]`` the policy target (normalised here).
            root_value: ``float[n]`` by seat, the search's mean value at the root on the value
                targets' scale (:attr:`SampleSet.root_value`); None when no search made it.
            rollout_value: ``float[n]`` by seat, the mean result of rollouts from the position
                on the same scale (:attr:`SampleSet.rollout_value`); None when none were
                played.
            frame: the encoding's frame of the planes (:attr:`~.encoder.Encoded.frame`), for
                the ownership targets; None: none are recorded for this sample.
        """
        t = np.asarray(target, dtype=np.float64)
        t = t / t.sum()
        binary = self.encoder.binary_planes
        b = spatial[binary]
        if b.max(initial=0) > 1:
            raise ValueError("a binary plane holds a value above 1")
        self.rows.append((np.packbits(b.ravel()), spatial[~binary].copy(),
                          np.asarray(globals_, dtype=np.float32),
                          np.asarray(ids, dtype=self.id_dtype), t.astype(np.float32),
                          int(player), int(game)))
        self.root_values.append(None if root_value is None
                                else np.asarray(root_value, dtype=np.float32))
        self.rollout_values.append(None if rollout_value is None
                                   else np.asarray(rollout_value, dtype=np.float32))
        self.frames.append(frame)
        self.rows_of.setdefault(int(game), []).append(len(self.rows) - 1)

    def finish_game(self, game: int, returns: np.ndarray, aux: np.ndarray | None = None,
                    final_state: GameState | None = None) -> None:
        """Set the value targets of game ``game`` from its returns (by seat), its auxiliary
        targets (``float[n, A]`` by seat, :meth:`~.encoder.NetEncoder.aux_targets`; None:
        unknown, NaN) and, given its ``final_state`` and an encoder with ownership targets,
        each of its samples' ownership targets (:meth:`~.encoder.NetEncoder.
        ownership_targets`, in the sample's frame)."""
        if final_state is not None and self.encoder.num_ownership:
            for i in self.rows_of.get(int(game), []):
                if self.frames[i] is not None:
                    own = self.encoder.ownership_targets(final_state, self.frames[i],
                                                         self.rows[i][5])
                    self.ownership[i] = np.packbits(np.asarray(own, dtype=np.uint8).ravel())
        n, width = self.encoder.num_players, self.encoder.num_aux
        self.values[int(game)] = np.asarray(returns, dtype=np.float32)
        self.aux[int(game)] = np.full((n, width), np.nan, dtype=np.float32) if aux is None \
            else np.asarray(aux, dtype=np.float32).reshape(n, width)
        self.games += 1

    def build(self, games: Collection[int] | None = None) -> SampleSet:
        """The samples of the finished games (samples of unfinished games are dropped), or
        of those of ``games`` (game indices) that are finished."""
        enc = self.encoder
        keep = self.values.keys() if games is None else set(games) & self.values.keys()
        chosen = [i for i, r in enumerate(self.rows) if r[6] in keep]
        rows = [self.rows[i] for i in chosen]
        n = len(rows)
        binary = enc.binary_planes
        nbits = int(binary.sum()) * enc.side * enc.side
        bits = np.zeros((n, (nbits + 7) // 8), dtype=np.uint8)
        ints = np.zeros((n, int((~binary).sum()), enc.side, enc.side), dtype=np.uint8)
        glob = np.zeros((n, enc.num_globals), dtype=np.float32)
        value = np.zeros((n, enc.num_players), dtype=np.float32)
        root = np.full((n, enc.num_players), np.nan, dtype=np.float32)
        rollout = np.full((n, enc.num_players), np.nan, dtype=np.float32)
        aux = np.zeros((n, enc.num_players, enc.num_aux), dtype=np.float32)
        own_bytes = (enc.num_ownership * enc.side * enc.side + 7) // 8
        ownership = np.zeros((n, own_bytes), dtype=np.uint8)
        known = np.zeros(n, dtype=bool)
        player = np.zeros(n, dtype=np.int8)
        game = np.zeros(n, dtype=np.int32)
        offsets = np.zeros(n + 1, dtype=np.int64)
        for i, (bi, it, gl, ids, _, p, g) in enumerate(rows):
            bits[i] = bi
            ints[i] = it
            glob[i] = gl
            value[i] = np.roll(self.values[g], -p)  # by player slot, slot 0 = the mover
            aux[i] = np.roll(self.aux[g], -p, axis=0)
            q = self.root_values[chosen[i]]
            if q is not None:
                root[i] = np.roll(q, -p)
            r = self.rollout_values[chosen[i]]
            if r is not None:
                rollout[i] = np.roll(r, -p)
            o = self.ownership.get(chosen[i])
            if o is not None:
                ownership[i], known[i] = o, True
            player[i] = p
            game[i] = g
            offsets[i + 1] = offsets[i] + ids.shape[1]
        k = enc.num_symmetries
        ids_all = np.zeros((k, int(offsets[-1])), dtype=self.id_dtype)
        target = np.zeros(int(offsets[-1]), dtype=np.float32)
        for i, (_, _, _, ids, t, _, _) in enumerate(rows):
            ids_all[:, offsets[i]:offsets[i + 1]] = ids
            target[offsets[i]:offsets[i + 1]] = t
        return SampleSet(bits, ints, glob, value, player, game, offsets, ids_all, target,
                         self.games if games is None else len(keep), root, aux, rollout,
                         ownership, known)


@dataclass
class Batch:
    """A training batch (NumPy; the trainer moves it to the device).

    Attributes:
        spatial: ``float32[B, Cs, S, S]``; globals: ``float32[B, G]``.
        mask: ``bool[B, A]`` legal network ids; target: ``float32[B, A]`` policy targets.
        value: ``float32[B, n]`` value targets by player slot.
        aux: ``float32[B, n, A]`` auxiliary targets by player slot (NaN: unknown; ``A =
            encoder.num_aux``).
        ownership: ``float32[B, O, S, S]`` ownership targets by player slot (``O =
            encoder.num_ownership``), under the sample's symmetry; ownership_known:
            ``bool[B]`` the samples that have them (the others' rows are 0).
        weight: ``float32[B]`` the weight of each sample's losses (prioritized replay's
            importance-sampling correction, the elimination weight); None: 1 each.
    """

    spatial: np.ndarray
    globals: np.ndarray
    mask: np.ndarray
    target: np.ndarray
    value: np.ndarray
    aux: np.ndarray | None = None
    ownership: np.ndarray | None = None
    ownership_known: np.ndarray | None = None
    weight: np.ndarray | None = None


PRIORITY_EPS = 0.01
"""Added to every sample's priority, so that every sample can be drawn (Schaul et al. 2016)."""


def replay_priority(samples: SampleSet) -> np.ndarray:
    """The prioritized-replay priority of each sample (``float64[N]``, before the exponent):
    the mean over player slots of ``|z - q|``, the game's result against the search's root
    value when the sample was recorded (MuZero's ``|v - z|``, Schrittwieser et al. 2020; ``q``
    unknown, as in files written before it was recorded: 0), plus :data:`PRIORITY_EPS`."""
    z = np.asarray(samples.value, dtype=np.float64)
    q = np.zeros_like(z) if samples.root_value is None else \
        np.nan_to_num(np.asarray(samples.root_value, dtype=np.float64))
    return np.abs(z - q).mean(axis=1) + PRIORITY_EPS


def mixed_value_target(z: np.ndarray, q: np.ndarray, q_mix: float, r: np.ndarray,
                       r_mix: float) -> np.ndarray:
    """``(1 - q_mix - r_mix) z + q_mix q + r_mix r`` by player slot (``float32[n]`` each), the
    share of ``q`` or ``r`` going to ``z`` where it is unknown (NaN)."""
    out = np.asarray(z, dtype=np.float32).copy()
    for est, mix in ((q, q_mix), (r, r_mix)):
        if mix > 0 and not np.isnan(est).any():
            out += mix * (est - z)
    return out


class ReplayBuffer:
    """The sample sets of the most recent ``window_games`` games (a whole set is dropped
    once the newer sets hold at least ``window_games`` games without it).

    Args:
        encoder: the encoder the samples were made with (symmetries, sizes).
        window_games: the window, in games.
    """

    def __init__(self, encoder: NetEncoder, window_games: int) -> None:
        if window_games < 1:
            raise ValueError(f"window_games must be >= 1, got {window_games}")
        self.encoder = encoder
        self.window_games = window_games
        self.sets: deque[tuple[str, SampleSet]] = deque()

    def add(self, name: str, samples: SampleSet) -> None:
        """Add a set (``name``: where it came from, e.g. its file) and drop old ones."""
        self.sets.append((name, samples))
        while len(self.sets) > 1 and \
                sum(s.games for _, s in list(self.sets)[1:]) >= self.window_games:
            self.sets.popleft()

    @property
    def games(self) -> int:
        return sum(s.games for _, s in self.sets)

    def __len__(self) -> int:
        return sum(len(s) for _, s in self.sets)

    def names(self) -> list[str]:
        return [n for n, _ in self.sets]

    def sample(self, batch_size: int, rng: np.random.Generator,
               value_mix: float = 0.0, rollout_mix: float = 0.0,
               priority_alpha: float = 0.0, priority_beta: float = 1.0,
               elimination_weight: float = 1.0) -> Batch:
        """``batch_size`` samples drawn with replacement, uniformly or by priority, each under
        a uniformly drawn symmetry.

        Args:
            value_mix: the value target is ``(1 - value_mix) * z + value_mix * q``, ``z`` the
                game's result and ``q`` the search's root value when the sample was recorded
                (``[train] value_target_mix``; z alone where there is no ``q``). Averaging
                the two lowers the target's variance early in a game (Carlsson, "Lessons
                from AlphaZero: improving the training target", 2019; KataGo mixes search
                values into its short-term targets).
            rollout_mix: likewise for ``r``, the mean result of the rollouts recorded with the
                sample (``[train] rollout_target_mix``): the target is ``(1 - value_mix -
                rollout_mix) z + value_mix q + rollout_mix r``, the share of an unknown ``q``
                or ``r`` going to ``z``.
            priority_alpha: 0: uniform; above, prioritized replay (Schaul et al. 2016):
                sample ``i`` is drawn with probability ``P(i) = p_i ** alpha / sum_k p_k **
                alpha``, ``p_i`` from :func:`replay_priority` (``[train] priority_alpha``).
            priority_beta: with ``priority_alpha > 0``, the batch's ``weight`` is the
                importance-sampling weight ``(N P(i)) ** -priority_beta`` over its mean under
                the sampling, ``sum_k P(k) (N P(k)) ** -priority_beta``, so that the weights
                average 1 and the learning rate keeps its meaning (``[train]
                priority_beta``; with 1 the weight is ``1 / (N P(i))``, the unbiased one).
                Schaul et al. divide by the batch's largest weight instead, which scales
                every step down by an amount that varies from batch to batch.
            elimination_weight: the losses of the samples of games that ended with a seat
                eliminated (:meth:`~.encoder.NetEncoder.eliminated`) weigh this many times
                the others', the weights scaled to a mean of 1 over the buffer (``[train]
                elimination_weight``; times the priority's weight where both apply).

        Raises:
            ValueError: the buffer is empty, or ``elimination_weight`` is not 1 for an
                encoder that cannot tell which games ended with an elimination.
        """
        sizes = np.array([len(s) for _, s in self.sets], dtype=np.int64)
        total = int(sizes.sum())
        if total == 0:
            raise ValueError("the replay buffer is empty")
        weight = None
        if priority_alpha > 0:
            prob = np.concatenate([replay_priority(s) for _, s in self.sets]) ** priority_alpha
            prob /= prob.sum()
            picks = rng.choice(total, size=batch_size, p=prob)
            each = (total * prob) ** -priority_beta
            weight = (each[picks] / float((prob * each).sum())).astype(np.float32)
        else:
            picks = rng.integers(total, size=batch_size)
        syms = rng.integers(self.encoder.num_symmetries, size=batch_size)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        which = np.searchsorted(starts, picks, side="right") - 1
        batch = self._batch([(self.sets[int(w)][1], int(p - starts[w]), int(k))
                             for w, p, k in zip(which, picks, syms, strict=True)], value_mix,
                            rollout_mix)
        if elimination_weight != 1.0:
            elim = self.eliminated()
            scale = elimination_weight * elim.mean() + (1.0 - elim.mean())
            w = np.where(elim[picks], elimination_weight, 1.0) / scale
            weight = (w if weight is None else weight * w).astype(np.float32)
        batch.weight = weight
        return batch

    def eliminated(self) -> np.ndarray:
        """``bool[len(self)]``: whether each sample's game ended with a seat eliminated
        (:meth:`~.encoder.NetEncoder.eliminated`), the sets in order.

        Raises:
            ValueError: the encoder cannot tell."""
        parts = []
        for _, s in self.sets:
            aux = None if s.aux is None else np.asarray(s.aux)
            if aux is None or aux.shape[-1] == 0:  # a file from before the targets: unknown
                aux = np.full((len(s), self.encoder.num_players, self.encoder.num_aux),
                              np.nan, dtype=np.float32)
            got = self.encoder.eliminated(aux)
            if got is None:
                raise ValueError(f"the {self.encoder.name} encoding cannot tell which games "
                                 "ended with an elimination")
            parts.append(got)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    def batches(self, batch_size: int) -> Iterator[Batch]:
        """Every sample once, in order, as it was recorded (no symmetry, no value mix):
        for measuring a network on held-out games (:meth:`~.train.Trainer.evaluate`)."""
        items = [(s, i, 0) for _, s in self.sets for i in range(len(s))]
        for lo in range(0, len(items), batch_size):
            yield self._batch(items[lo:lo + batch_size], 0.0, 0.0)

    def _batch(self, items: Sequence[tuple[SampleSet, int, int]], value_mix: float,
               rollout_mix: float) -> Batch:
        """The batch of ``(set, sample index, symmetry)`` items (:meth:`sample`)."""
        enc = self.encoder
        batch_size = len(items)
        spatial = np.empty((batch_size, enc.spatial_planes, enc.side, enc.side),
                           dtype=np.float32)
        glob = np.empty((batch_size, enc.num_globals), dtype=np.float32)
        value = np.empty((batch_size, enc.num_players), dtype=np.float32)
        aux = np.full((batch_size, enc.num_players, enc.num_aux), np.nan, dtype=np.float32)
        mask = np.zeros((batch_size, enc.num_actions), dtype=bool)
        target = np.zeros((batch_size, enc.num_actions), dtype=np.float32)
        ownership = np.zeros((batch_size, enc.num_ownership, enc.side, enc.side),
                             dtype=np.float32)
        known = np.zeros(batch_size, dtype=bool)
        for b, (s, i, k) in enumerate(items):
            sp, ids, t = s.example(i, k, enc)
            spatial[b] = sp
            glob[b] = s.globals[i]
            value[b] = mixed_value_target(s.value[i], s.root_value[i],  # type: ignore[index]
                                          value_mix, s.rollout_value[i],  # type: ignore[index]
                                          rollout_mix)
            a = np.asarray(s.aux)[i]
            aux[b, :, :min(a.shape[1], enc.num_aux)] = a[:, :enc.num_aux]
            mask[b, ids] = True
            target[b, ids] = t
            own = s.ownership_planes(i, k, enc)
            if own is not None:
                ownership[b], known[b] = own, True
        return Batch(spatial, glob, mask, target, value, aux, ownership, known)
