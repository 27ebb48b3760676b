"""What the AlphaZero pipeline needs from a game to feed a network: the :class:`NetEncoder`.

The pipeline (network, self-play, replay, trainer, agent) reaches a game only through the
generic protocol (:mod:`taluva_ai.protocol`) plus one encoder per game, made by name with
:func:`make_encoder` (``game.name`` -> encoder). An encoder turns a decision state into

- ``spatial uint8[Cs, S, S]``: the board planes (small integers, stored as they are in the
  replay buffer);
- ``globals float32[G]``: facts about the whole position (supplies, the step, the tile in
  hand...), which the network reads through an MLP and FiLM rather than as constant planes;
- the legal actions of the player to move and their **network ids** (``-1`` where an action
  has none, e.g. a Taluva action outside the view);

from the view of the player to move, players ordered from that player (slot ``j`` is seat
``(player + j) % n``), so one network with ``n`` value outputs serves every seat of an
``n``-player game. It also gives the board symmetries as permutations of planes and network
ids, for augmentation.

Each encoder also names the network family that reads it (``network``; :data:`.net.NETWORKS`):
``conv`` (the residual tower over the board canvas) or ``mlp`` (a residual MLP over the
global features, for games without a board canvas).

Taluva's encoder (:class:`TaluvaEncoder`) is the view encoding of :mod:`taluva_ai.encoding`
(docs/encoding.md): the view of radius ``R`` (default 13) recentred on the island, its
``14 S^2`` action ids, and its 6 rotations. Its spatial planes are the encoding's first
``23 + 3n`` planes; the constant planes (``12 + 4n``) are exactly :func:`global_features`
(the same facts), so they are given as ``globals`` instead.

Thurn und Taxis's encoder (:class:`ThurnUndTaxisEncoder`) has no board canvas: no spatial
planes (``Cs = 0``, ``S = 1``), the observation tensor of docs/thurn_und_taxis.md as
``globals`` (``float32[536]``, from the information set of the player to move only), the 327
action ids as network ids, no symmetry; an ``mlp`` network reads it.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva.encoding import engine_to_view
from taluva_ai.protocol import GameState


@dataclass
class Encoded:
    """One encoded decision state.

    Attributes:
        spatial: ``uint8[Cs, S, S]`` board planes.
        globals: ``float32[G]`` global features.
        legal: ``int64[k]`` legal action ids of the game (``state.legal_actions()``, ascending).
        net_ids: ``int64[k]`` network id of each legal action, ``-1`` where it has none.
        player: the seat whose view this is (the player to move): value slot ``j`` is seat
            ``(player + j) % n``.
        frame: where the planes' pixels lie on the table (Taluva: the view centre ``(qc,
            rc)``), for :meth:`NetEncoder.ownership_targets`; None for an encoder without
            ownership targets.
    """

    spatial: np.ndarray
    globals: np.ndarray
    legal: np.ndarray
    net_ids: np.ndarray
    player: int
    frame: Any = None


class NetEncoder(ABC):
    """A game's encoding for networks (see the module docstring).

    Attributes:
        name: encoding name; ``version``: bumped whenever planes or ids change meaning (a
            checkpoint made with another version is refused).
        num_players: seats ``n`` (value outputs).
        spatial_planes: ``Cs``; side: ``S``; num_globals: ``G``.
        action_channels: network policy channels per pixel; ``num_actions = channels * S^2 +
            extra_actions`` network ids, ``id = channel * S^2 + row * S + col`` for the board
            ids, then ``channels * S^2 + k`` for the ``extra_actions`` ids tied to no pixel
            (Taluva solo: take a bonus tile, box a building; 0 by default).
        valid: ``bool[S, S]`` pixels that are board (the rest are always zero).
        binary_planes: ``bool[Cs]``: planes that hold only 0 and 1 (the replay buffer stores
            them as bits).
        num_symmetries: symmetry transforms (Taluva: 6 rotations), index 0 the identity.
        network: the network family for this encoding (:data:`.net.NETWORKS`): ``conv``
            (default) or ``mlp``.
        num_aux: auxiliary targets per player slot (:meth:`aux_targets`; 0: none, the
            default).
        num_ownership: ownership planes (:meth:`ownership_targets`; 0: none, the default).
    """

    name: str
    version: int
    num_players: int
    spatial_planes: int
    side: int
    num_globals: int
    action_channels: int
    valid: np.ndarray
    binary_planes: np.ndarray
    num_symmetries: int
    extra_actions: int = 0
    network: str = "conv"
    num_aux: int = 0
    num_ownership: int = 0

    @property
    def num_actions(self) -> int:
        return self.action_channels * self.side * self.side + self.extra_actions

    @abstractmethod
    def encode(self, state: GameState) -> Encoded:
        """Encode a decision state (not a chance or terminal one).

        Raises:
            ValueError: ``state`` is not at a decision node.
        """

    @abstractmethod
    def transform_spatial(self, spatial: np.ndarray, k: int) -> np.ndarray:
        """Planes ``[..., Cs, S, S]`` under symmetry ``k`` (a leading batch axis allowed)."""

    @abstractmethod
    def id_permutations(self, enc: Encoded) -> np.ndarray:
        """``int64[num_symmetries, num_actions]``: row ``k`` maps a network id of this position
        to the id of the same action in the position under symmetry ``k``."""

    def aux_targets(self, state: GameState) -> np.ndarray | None:
        """``float32[n, num_aux]`` in ``[0, 1]``, by seat: facts of a finished game that an
        auxiliary head learns to predict from every position of it, as KataGo's ownership and
        score targets (Wu 2019) give the network more signal per game than its one result;
        None when the encoder has none (the default).

        Raises:
            ValueError: ``state`` is not terminal.
        """
        return None

    def eliminated(self, aux: np.ndarray) -> np.ndarray | None:
        """``bool[N]``: whether each sample's game ended with a seat eliminated, read from
        its auxiliary targets ``float32[N, n, num_aux]`` (:meth:`aux_targets`; NaN, unknown:
        False); None when the encoder cannot tell (the default). ``[train]
        elimination_weight`` weighs those games' samples."""
        return None

    def ownership_targets(self, state: GameState, frame: Any, player: int) -> np.ndarray | None:
        """``uint8[num_ownership, S, S]``: who holds each pixel of a sample's planes at the end
        of its game, by player slot (slot ``j`` is seat ``(player + j) % n``), in the sample's
        frame (:attr:`Encoded.frame`): KataGo's ownership target (Wu 2019), one value per
        point where the result gives one per game. None when the encoder has none (the
        default).

        Raises:
            ValueError: ``state`` is not terminal.
        """
        return None

    def transform_pixels(self, planes: np.ndarray, k: int) -> np.ndarray:
        """Planes ``[..., S, S]`` whose pixels move under symmetry ``k`` and whose channels do
        not (ownership targets by player slot), as :meth:`transform_spatial` moves pixels.

        Raises:
            NotImplementedError: an encoder without ownership targets.
        """
        raise NotImplementedError(f"the {self.name} encoding has no ownership targets")

    def options(self) -> dict[str, Any]:
        """Keyword options that rebuild this encoder with :func:`make_encoder` (besides the
        game name and ``num_players``)."""
        return {}

    def search_kernels(self) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
        """``(kernels, constants)``: the compiled form of :meth:`encode` for the batched
        network-guided search (agents/search/batched.py; the ``row``, ``encode`` and ``net_id``
        kernels of ``taluva_ai.games.taluva.search_kernels``), or None (the default): the
        search then runs the Python loop."""
        return None

    def spec(self) -> dict[str, Any]:
        """What a checkpoint records to check that it fits this encoder (``extra_actions``
        only when there are some, so older checkpoints keep their spec)."""
        spec = {"name": self.name, "version": self.version, "num_players": self.num_players,
                "spatial_planes": self.spatial_planes, "side": self.side,
                "num_globals": self.num_globals, "action_channels": self.action_channels}
        if self.extra_actions:
            spec["extra_actions"] = self.extra_actions
        return spec


@njit(cache=True)
def _engine_to_view_ids(ids, ncell, hexqr, qc, rc, vr, out):
    for i in range(ids.shape[0]):
        out[i] = engine_to_view(ids[i], ncell, hexqr, qc, rc, vr)


class TaluvaEncoder(NetEncoder):
    """Taluva's view encoding (docs/encoding.md) for networks.

    ``Cs = 23 + 3n`` spatial planes (valid, level, terrain 6, same_tile 6, orientation 6, huts
    n, temple n, tower n, settlement 3), ``G = 4n + 12`` globals
    (:func:`taluva_ai.encoding.global_features`), ``14`` action channels on the ``S x S``
    view (``S = 2R + 1``), 6 rotations.

    ``num_players = 1`` is the solo variant (docs/solo.md): the same 26 spatial planes, ``G =
    16 + 24`` globals (the solo planes' values follow :func:`global_features`: face-up bonus
    tiles, piles, counters, the running score) and 6 extra network ids ``14 S^2 + k`` for the
    bonus and box actions (``extra_actions``), which no rotation moves; its one value output
    is the score brought to ``[-1, 1]`` by the game's ``value_normalization``.

    ``build_sites`` adds ``2n`` globals after those: the hexes where each player slot could
    build a temple, then a tower, now (:func:`taluva_ai.games.taluva.encoding.
    build_site_features`; docs/encoding.md, "Build sites"): rule-derived inputs, as KataGo's
    liberties and ladders, for what decides an elimination once a seat's huts are built.

    Args:
        num_players: 1 (solo) to 4.
        view_radius: ``R`` (default 13, measured in docs/encoding.md).
        build_sites: add the build-site globals (2-4 players).

    Raises:
        ValueError: bad ``num_players`` or ``view_radius``; ``build_sites`` in the solo variant.
    """

    name = "taluva-view"
    version = 1
    num_symmetries = 6
    #: the auxiliary targets of 2-4 players (:meth:`aux_targets`); none in the solo variant
    AUX_TARGETS = ("huts_left", "temples_left", "towers_left", "out")

    def __init__(self, num_players: int = 2, view_radius: int | None = None,
                 build_sites: bool = False) -> None:
        from taluva_ai.games.taluva import encoding as E

        if num_players not in (1, 2, 3, 4):
            raise ValueError(f"num_players must be 1 (solo), 2, 3 or 4, got {num_players!r}")
        if not isinstance(build_sites, bool):
            raise ValueError(f"build_sites must be true or false, got {build_sites!r}")
        if build_sites and num_players == 1:
            raise ValueError("build_sites is for 2-4 players, not the solo variant")
        self.build_sites = build_sites
        self.solo = num_players == 1
        self._E = E
        self.view_radius = E.DEFAULT_VIEW_RADIUS if view_radius is None else view_radius
        self.view = E.make_view(self.view_radius)  # validates the radius
        self.num_players = num_players
        self.side = self.view.side
        self.spatial_planes = E.num_planes(num_players) - E.num_globals(num_players)
        self.num_globals = E.num_planes(num_players, self.solo) - self.spatial_planes + (
            2 * num_players if build_sites else 0)
        self.action_channels = E.NUM_ACTION_CHANNELS
        self.extra_actions = E.NUM_SOLO_ACTIONS if self.solo else 0
        self.num_aux = 0 if self.solo else len(self.AUX_TARGETS)
        self.num_ownership = 0 if self.solo else num_players
        self.valid = self.view.valid
        names = E.plane_names(num_players)[:self.spatial_planes]
        self._buildings = names.index("huts/0")  # huts n, temple n, tower n from here
        self.binary_planes = np.array(
            [not (n == "level" or n.startswith("huts/") or n == "settlement/size")
             for n in names], dtype=bool)
        ss = self.side * self.side
        self._all_planes = E.num_planes(num_players, self.solo)
        zero = np.zeros((self._all_planes, self.side, self.side), dtype=np.float32)
        self._static = np.stack([E.action_permutation(zero, k) for k in range(6)])
        self._pix = [E.pixel_permutation(self.view_radius, k) for k in range(6)]
        self._planes = [E.plane_permutation(num_players, k, self.solo)[:self.spatial_planes]
                        for k in range(6)]
        self._expand_from = E.CH_EXPAND * ss

    def options(self) -> dict[str, Any]:
        """The constructor's options (``build_sites`` only when on, so that the networks of
        before it keep their recorded options)."""
        return {"view_radius": self.view_radius, **({"build_sites": True}
                                                     if self.build_sites else {})}

    def search_kernels(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Taluva's compiled encoding: ``search_kernels.NET_KERNELS`` (the solo variant:
        ``SOLO_NET_KERNELS``) with the constants ``(view_radius int64, valid bool[S, S],
        build_sites int64)``."""
        from taluva_ai.games.taluva.search_kernels import NET_KERNELS, SOLO_NET_KERNELS

        return SOLO_NET_KERNELS if self.solo else NET_KERNELS, (
            np.int64(self.view_radius), self.valid, np.int64(self.build_sites))

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), **self.options()}

    def encode(self, state: GameState) -> Encoded:
        E = self._E
        player = state.current_player
        if player < 0:
            raise ValueError("the encoder needs a decision state (not a chance node or the end)")
        planes, _, center, _ = E.encode(state, view_radius=self.view_radius)
        spatial = planes[:self.spatial_planes].astype(np.uint8)
        glob = E.global_features(state)
        if self.solo:  # the solo planes are constant: their value at the centre pixel
            r = self.view_radius
            glob = np.concatenate([glob, planes[E.num_planes(1):, r, r]]).astype(np.float32)
        elif self.build_sites:
            glob = np.concatenate([glob, E.build_site_features(state)])
        legal = state.legal_actions()
        game = state.game  # type: ignore[attr-defined]
        net_ids = np.empty(legal.size, dtype=np.int64)
        _engine_to_view_ids(legal, game.num_cells, game.hexqr, center[0], center[1],
                            self.view_radius, net_ids)
        return Encoded(spatial, glob, legal, net_ids, int(player), center)

    def aux_targets(self, state: GameState) -> np.ndarray | None:
        """The final supply of each seat (:data:`AUX_TARGETS`): huts / 20, temples / 3,
        towers / 2 left (clipped to 1), and 1 for a seat that is out (eliminated, or finished
        by building all of two kinds; docs/rules.md), as :func:`global_features` gives them;
        ``float32[n, 4]`` by seat. None in the solo variant."""
        if self.solo:
            return None
        if not state.is_terminal():
            raise ValueError("aux_targets needs a finished game")
        n = self.num_players
        g = self._E.global_features(state, player=0)[:4 * n]  # type: ignore[arg-type]
        return np.clip(g.reshape(4, n).T, 0.0, 1.0).astype(np.float32)

    def eliminated(self, aux: np.ndarray) -> np.ndarray | None:
        """A seat that went out without having built all of two kinds of its pieces was
        eliminated (RULES.md "End of the game": one who finished built two kinds); ``bool[N]``
        per sample, from ``aux`` ``float32[N, n, 4]``. None in the solo variant.

        Raises:
            ValueError: ``aux`` is not ``[N, num_players, 4]``."""
        if self.solo:
            return None
        a = np.asarray(aux)
        if a.ndim != 3 or a.shape[1:] != (self.num_players, self.num_aux):
            raise ValueError(f"auxiliary targets of shape {list(a.shape)}, this encoder's are "
                             f"[samples, {self.num_players}, {self.num_aux}]")
        finished = (a[:, :, :3] == 0).sum(axis=2) >= 2
        return ((a[:, :, 3] == 1) & ~finished).any(axis=1)

    def ownership_targets(self, state: GameState, frame: Any, player: int) -> np.ndarray | None:
        """1 where player slot ``j`` has a building (huts, a temple or a tower) at the end of
        the game, in the view of radius ``R`` centred on ``frame`` (the sample's view
        centre); ``uint8[n, S, S]``. None in the solo variant."""
        if self.solo:
            return None
        if not state.is_terminal():
            raise ValueError("ownership_targets needs a finished game")
        n, b = self.num_players, self._buildings
        planes, _, _, _ = self._E.encode(state, player=int(player),  # type: ignore[arg-type]
                                         view_radius=self.view_radius, center=tuple(frame))
        built = planes[b:b + 3 * n].reshape(3, n, self.side, self.side).max(axis=0)
        return (built > 0).astype(np.uint8)

    def transform_pixels(self, planes: np.ndarray, k: int) -> np.ndarray:
        k %= 6
        if k == 0:
            return planes
        s = self.side
        flat = planes.reshape(*planes.shape[:-2], s * s)
        res = np.empty_like(flat)
        res[..., self._pix[k]] = flat
        return res.reshape(planes.shape)

    def transform_spatial(self, spatial: np.ndarray, k: int) -> np.ndarray:
        k %= 6
        if k == 0:
            return spatial
        out = np.empty_like(spatial)
        out[..., self._planes[k], :, :] = spatial
        return self.transform_pixels(out, k)

    def id_permutations(self, enc: Encoded) -> np.ndarray:
        """Static permutations unless an expansion is legal. An expansion's id is keyed by its
        settlement's smallest hex, which a rotation does not preserve: the turned action's id
        is keyed by the smallest turned hex among the settlements with the same expansion
        outcome (the engine lists only that one), as in
        :func:`taluva_ai.encoding.action_permutation`, computed here for the legal expansion
        ids only (the tests check that both agree)."""
        ids = enc.net_ids[enc.net_ids >= 0]
        exp = ids[(ids >= self._expand_from) & (ids < self.action_channels * self.side ** 2)]
        if exp.size == 0:
            return self._static
        E = self._E
        ss = self.side * self.side
        full = np.zeros((self._all_planes, self.side, self.side), dtype=np.float32)
        full[:self.spatial_planes] = enc.spatial
        comps = E._own_settlements(full)
        smallest = {comp[0]: i for i, comp in enumerate(comps)}
        perms = self._static.copy()
        targets: dict[tuple[int, int], frozenset[int]] = {}
        for a in exp.tolist():
            t = a // ss - E.CH_EXPAND
            i = smallest[a % ss]
            for j in range(len(comps)):
                if (j, t) not in targets:
                    targets[(j, t)] = E._expansion_targets(full, comps[j], t)
            group = [j for j in range(len(comps)) if targets[(j, t)] == targets[(i, t)]]
            base = (E.CH_EXPAND + t) * ss
            for k in range(1, 6):
                pix = self._pix[k]
                perms[k, a] = base + min(int(pix[np.asarray(comps[j])].min()) for j in group)
        return perms


class ThurnUndTaxisEncoder(NetEncoder):
    """Thurn und Taxis for networks: the observation tensor of the player to move as globals.

    ``Cs = 0`` spatial planes on a ``1 x 1`` canvas, ``G = 536`` globals (the observation
    tensor, :mod:`taluva_ai.games.thurn_und_taxis.encoding`, computed by its compiled
    :func:`~taluva_ai.games.thurn_und_taxis.encoding.encode_arrays`: what the player to move
    knows, seats rotated so that it comes first; never the other hands or the supply's
    make-up), ``327`` action channels (network id = action id), one symmetry (the identity);
    read by an ``mlp`` network.

    Args:
        num_players: 2 to 4.

    Raises:
        ValueError: bad ``num_players``.
    """

    name = "tnt-observation"
    version = 1
    num_symmetries = 1
    network = "mlp"

    def __init__(self, num_players: int = 2) -> None:
        from taluva_ai.games.thurn_und_taxis.actions import NUM_ACTIONS
        from taluva_ai.games.thurn_und_taxis.encoding import OBS_SIZE, encode_arrays

        if num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
        self._encode: Any = encode_arrays
        self.num_players = num_players
        self.spatial_planes = 0
        self.side = 1
        self.num_globals = OBS_SIZE
        self.action_channels = NUM_ACTIONS
        self.valid = np.ones((1, 1), dtype=bool)
        self.binary_planes = np.zeros(0, dtype=bool)
        self._spatial = np.zeros((0, 1, 1), dtype=np.uint8)
        self._identity = np.arange(NUM_ACTIONS, dtype=np.int64)[None]

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "network": self.network}

    def encode(self, state: GameState) -> Encoded:
        player = state.current_player
        if player < 0:
            raise ValueError("the encoder needs a decision state (not a chance or terminal one)")
        game = state.game  # type: ignore[attr-defined]
        if game.num_players != self.num_players:
            raise ValueError(f"the encoder is for {self.num_players} players, the state has "
                             f"{game.num_players}")
        glob = np.empty(self.num_globals, dtype=np.float32)
        self._encode(*state.arrays(), game.rules_array, int(player), glob)  # type: ignore[attr-defined]
        legal = state.legal_actions()
        return Encoded(self._spatial, glob, legal, legal.copy(), int(player))

    def transform_spatial(self, spatial: np.ndarray, k: int) -> np.ndarray:
        return spatial

    def id_permutations(self, enc: Encoded) -> np.ndarray:
        return self._identity


_ENCODERS: dict[str, Callable[..., NetEncoder]] = {"taluva": TaluvaEncoder,
                                                   "thurn_und_taxis": ThurnUndTaxisEncoder}


def register_encoder(game_name: str, factory: Callable[..., NetEncoder]) -> None:
    """Register ``factory(num_players=..., **options)`` as the encoder of a game."""
    _ENCODERS[game_name] = factory


def make_encoder(game_name: str, num_players: int, **options: Any) -> NetEncoder:
    """The network encoder of a registered game.

    Raises:
        ValueError: no encoder for that game, or bad options.
    """
    if game_name not in _ENCODERS:
        raise ValueError(f"no network encoder for game {game_name!r}; known: "
                         f"{', '.join(sorted(_ENCODERS))}")
    factory = _ENCODERS[game_name]
    params = inspect.signature(factory).parameters.values()
    known = [p.name for p in params if p.name != "num_players"
             and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(options) - set(known))
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in params):
        raise ValueError(f"the encoder of {game_name!r} has no option "
                         f"{', '.join(map(repr, unknown))} (its options: "
                         f"{', '.join(known) or 'none'})")
    try:
        return factory(num_players=num_players, **options)
    except TypeError as e:
        raise ValueError(f"encoder of {game_name!r}: {e}") from None
