"""The object API over one state: ``TaluvaGame`` / ``TaluvaState`` (OpenSpiel-style).

A turn is a chance node (the tile is drawn), then two decisions of the same player: place the
tile, then build. All rules live in :mod:`kernels`; this module validates input, keeps the undo
history and translates between ids, :class:`Action` values and notation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from taluva_ai.errors import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    WrongStepError,
)
from taluva_ai.games.array_state import ArrayState, Snapshot
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.actions import Action, ActionKind, decode, encode
from taluva_ai.games.taluva.hexgrid import Board, make_board
from taluva_ai.games.taluva.rules import RuleSet
from taluva_ai.games.taluva.solo import SoloStateMethods
from taluva_ai.games.taluva.tiles import (
    NUM_TILE_TYPES,
    NUM_TILES,
    full_tile_set,
    parse_tile,
    tile_name,
)

# Plain ints for the hot paths (IntEnum comparisons cost a Python attribute lookup each).
_CHANCE, _TILE, _BUILD, _TERMINAL, _BONUS, _BOX = (int(x) for x in S.Step)
#: ``cost_out`` of the build enumerator when the costs are not wanted (an empty ``int64``)
_NO_COST = np.empty(0, dtype=np.int64)


class TaluvaGame:
    """Taluva with one :class:`RuleSet`: the game's declared facts and its initial states.

    Args:
        rules: the rules; or give the options as keywords (``TaluvaGame(num_players=3)``).

    Attributes:
        num_actions: size of the one ``Discrete`` action space, ``14 H`` (``H`` board hexes).
        max_chance_outcomes: 25 tile types.
        max_game_length: upper bound on decisions plus chance nodes (3 per tile).
    """

    name = "taluva"
    max_chance_outcomes = NUM_TILE_TYPES

    def __init__(self, rules: RuleSet | None = None, **options: Any) -> None:
        if rules is not None and options:
            raise TypeError("give either a RuleSet or keyword options, not both")
        self.rules = rules if rules is not None else RuleSet.from_dict(options)
        self.board: Board = make_board(self.rules.board_radius)
        self.num_players = self.rules.num_players
        self.num_cells = self.board.num_cells
        self.num_actions = 14 * self.num_cells
        self.max_game_length = 3 * NUM_TILES + self.num_players
        if self.rules.solo:
            # 6 more ids: bonus tile from the draw pile / the face-up tile / stop; box a hut,
            # temple, tower (docs/solo.md). A turn builds (or ends the game) and takes at most
            # 10 actions: draw, tile, box or bonus choice, up to 2 x (bonus choice, draw, tile)
            # minus one, reveal, build; at most 25 turns (each builds a piece).
            self.num_actions += 6
            self.max_game_length = 1 + 25 * 10
        self.rules_array = self.rules.as_array()
        self.hexqr = np.stack([self.board.q, self.board.r], axis=1).astype(np.int32)
        # the kernels the states call: a game that is not solo calls the standard ones, which
        # never reach the solo variant's code, so it is not compiled (half of a first run)
        self.apply_kernel = K.apply_action if self.rules.solo else K.standard_apply_action
        # scratch of the build enumerator (settlement labels, sizes, temples), which the states'
        # legal_actions() lend it; the kernels hold the GIL, so one set serves every state
        self.build_scratch = (np.empty(self.num_cells, dtype=np.int32),
                              np.empty(K.MAX_SETTLEMENTS, dtype=np.int32),
                              np.empty(K.MAX_SETTLEMENTS, dtype=np.int32))

    def __repr__(self) -> str:
        return f"TaluvaGame({self.rules!r})"

    def options(self) -> dict[str, Any]:
        """The rule options as a JSON-ready dict: ``make_game("taluva", **game.options())``
        rebuilds this game (:meth:`RuleSet.to_dict`; game records store it)."""
        return self.rules.to_dict()

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """``(rules, nbr, cell_of, hexqr, origin)``, the constant arguments of the kernels."""
        b = self.board
        return self.rules_array, b.neighbours, b.cell_of, self.hexqr, b.origin

    def shuffled_deck(self, seed: int | None) -> np.ndarray:
        """``int8[48]``: the tile set in a random draw order from ``seed``.

        Raises:
            ValueError: ``seed`` is not a non-negative integer (or None for a random deck).
        """
        if seed is not None and (
            not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0
        ):
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        rng = np.random.default_rng(seed)
        return rng.permutation(full_tile_set()).astype(np.int8)

    def deck_names(self, seed: int | None) -> list[str]:
        """The draw order that ``seed`` shuffles (:meth:`shuffled_deck`) as 48 tile names
        (``"JC"``: the two terrain letters, docs/notation.md), as a tournament's deal file
        gives it (docs/tournaments.md).

        Raises:
            ValueError: ``seed`` is not a non-negative integer (or None).
        """
        return [tile_name(int(t)) for t in self.shuffled_deck(seed)]

    def parse_deck(self, names: Sequence[str]) -> np.ndarray:
        """``int8[48]``: a draw order given as tile names (the inverse of :meth:`deck_names`);
        a shorter list is completed with the rest of the tile set in type order, as
        :meth:`new_initial_state`'s ``deck`` is.

        Raises:
            ValueError: not a list of strings, an unknown tile name (named with its index), or
                more copies of a tile than the set holds.
        """
        if isinstance(names, str) or not all(isinstance(t, str) for t in names):
            raise ValueError(f"a deck is a list of tile names like 'JC', got {names!r}")
        ids = []
        for i, t in enumerate(names):
            try:
                ids.append(parse_tile(t))
            except (ValueError, KeyError) as e:
                raise ValueError(f"deck[{i}]: {t!r} is not a tile name ({e})") from None
        return complete_deck(np.asarray(ids, dtype=np.int64))

    def new_initial_state(
        self,
        seed: int | None = None,
        deck: np.ndarray | list[int] | None = None,
        island: list[Any] | None = None,
    ) -> TaluvaState:
        """The first chance node of a game.

        Args:
            seed: shuffles the deck; the same seed gives the same tile sequence when the draws
                follow the deck (:meth:`TaluvaState.draw`). Solo: it also draws the random
                starting island (``start_layout="random"``).
            deck: an explicit draw order instead, ``int[48]`` tile type ids; when shorter than 48
                (e.g. an oracle's tiles in order of use) the rest of the tile set follows in type
                order. Solo: the draw order after the starting island (the first is turned up
                as the face-up tile), completed likewise.
            island: solo only: a starting island of your own (any level-1 layout of 1 to 37
                tiles, for analysis and tests; :func:`solo.parse_island` gives the forms)
                instead of the rule set's ``start_layout``.

        Raises:
            ValueError: the deck is not drawn from the 48-tile set, or a bad island.
        """
        if self.rules.solo:
            return self._new_solo_state(seed, deck, island)
        if island is not None:
            raise ValueError("a starting island belongs to the solo variant (solo=True)")
        d = self.shuffled_deck(seed) if deck is None else complete_deck(deck)
        cells, players, d, meta = S.new_arrays(
            self.num_players, d, self.num_cells, self.rules.tile_preview
        )
        return TaluvaState(self, cells, players, d, meta)

    def state_from_arrays(self, cells: np.ndarray, players: np.ndarray, deck: np.ndarray,
                          meta: np.ndarray) -> TaluvaState:
        """A state of this game over the given arrays (:mod:`.state`'s shapes and dtypes),
        taken as they are, unchecked: what :func:`.position.parse_position` builds once it
        has checked them, so that it needs no import of this module."""
        return TaluvaState(self, cells, players, deck, meta)

    def _new_solo_state(self, seed: int | None, deck: np.ndarray | list[int] | None,
                        island: list[Any] | None) -> TaluvaState:
        """Set-up of the solo variant (SOLO.md 1; :mod:`solo`)."""
        from taluva_ai.games.taluva import solo

        self.shuffled_deck(seed)  # validates the seed
        rng = np.random.default_rng(seed)
        if island is not None:
            placements = solo.parse_island(island)
        elif self.rules.start_layout == "random":
            if deck is not None:
                raise ValueError("an explicit deck needs a starting island: start_layout="
                                 "'windmill' or island=[...]")
            placements, d = solo.random_island(rng, self.rules.start_shape)
        else:
            placements = list(solo.WINDMILL)
        if island is not None or self.rules.start_layout != "random":
            d = solo.solo_deck([p[0] for p in placements], deck, rng)
        cells, players, d, meta = solo.setup_arrays(self, placements, d)
        return TaluvaState(self, cells, players, d, meta)

    def action_to_string(self, action: int) -> str:
        """Notation of a tile or build action id (and the solo variant's bonus and box)."""
        return str(decode(action, self.board, solo=self.rules.solo))

    def string_to_action(self, text: str) -> int:
        """Id of a tile or build action in notation (no position needed).

        Raises:
            NotationError: malformed notation or a hex off the board.
        """
        return encode(Action.parse(text), self.board)


def complete_deck(tiles: np.ndarray | list[int]) -> np.ndarray:
    """``int8[48]`` deck starting with ``tiles`` and followed by the rest of the set.

    Raises:
        ValueError: ``tiles`` holds a type id outside 0..24 or more copies than the set has.
    """
    raw = np.asarray(tiles)
    if raw.ndim != 1 or (raw.size and raw.dtype.kind not in "iu"):
        raise ValueError("a deck is a 1-D sequence of integer tile type ids 0..24, got "
                         f"shape {raw.shape} of {raw.dtype}")
    if raw.size > NUM_TILES:
        raise ValueError(f"a deck holds at most {NUM_TILES} tiles, got {raw.size}")
    t = raw.astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= NUM_TILE_TYPES):
        raise ValueError("deck tile type ids must lie in 0..24")
    left = np.bincount(full_tile_set(), minlength=NUM_TILE_TYPES) - np.bincount(
        t, minlength=NUM_TILE_TYPES
    )
    if (left < 0).any():
        bad = [tile_name(int(i)) for i in np.flatnonzero(left < 0)]
        raise ValueError(f"deck holds more copies than the tile set of: {', '.join(bad)}")
    rest = np.repeat(np.arange(NUM_TILE_TYPES), left)
    return np.concatenate([t, rest]).astype(np.int8)


class TaluvaState(ArrayState, SoloStateMethods):
    """One Taluva position with its undo history.

    The position is four arrays (:mod:`state`): ``cells``, ``players``, ``deck``, ``meta``.
    ``current_player`` is ``CHANCE`` (-1) while the tile is drawn and ``TERMINAL`` (-4) at the end.
    """

    M_STEP, M_PLAYER, M_PLY = S.M_STEP, S.M_PLAYER, S.M_PLY
    S_CHANCE, S_TERMINAL = _CHANCE, _TERMINAL

    def __init__(
        self,
        game: TaluvaGame,
        cells: np.ndarray,
        players: np.ndarray,
        deck: np.ndarray,
        meta: np.ndarray,
    ) -> None:
        self.game = game
        self.cells = cells
        self.players = players
        self.deck = deck
        self.meta = meta
        self._history: list[Snapshot] = []
        self.record_history = True
        self._buf = np.empty(8 * game.num_cells, dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(cells, players, deck, meta)``, the live state arrays (not copies)."""
        return self.cells, self.players, self.deck, self.meta

    def _set_arrays(self, arrays: tuple[np.ndarray, ...]) -> None:
        self.cells, self.players, self.deck, self.meta = arrays

    # -- facts ------------------------------------------------------------------------------

    @property
    def step(self) -> S.Step:
        """What the state waits for: chance, tile, build or terminal."""
        return S.Step(int(self.meta[S.M_STEP]))

    @property
    def tile(self) -> int:
        """Type id of the tile in hand (tile step), else -1."""
        return int(self.meta[S.M_TILE]) if self.meta[S.M_STEP] == _TILE else -1

    @property
    def tiles_placed(self) -> int:
        return int(self.meta[S.M_PLACED])

    @property
    def tiles_left(self) -> int:
        """Tiles still to be placed, the one in hand included (solo: the draw pile and the
        bonus stack, plus the tile in hand)."""
        if self.game.rules.solo:
            return (int(self.meta[S.M_PILE]) + int(self.meta[S.M_STACK])
                    + int(self.meta[S.M_STEP] == _TILE))
        left = self.game.rules.deck_size - int(self.meta[S.M_DRAWN])
        if self.game.rules.tile_preview:
            left += int((self.players[: self.num_players, S.P_HAND] >= 0).sum())
        elif self.meta[S.M_STEP] == _TILE:
            left += 1
        return left

    @property
    def end_reason(self) -> S.EndReason:
        return S.EndReason(int(self.meta[S.M_END]))

    @property
    def truncated(self) -> bool:
        """True when the board bound removed every legal placement (no result; RULES.md)."""
        return bool(self.meta[S.M_END] == S.EndReason.TRUNCATED)

    def status(self, player: int) -> S.Status:
        """``ACTIVE``, ``ELIMINATED`` or ``FINISHED`` (ranked early victory).

        Raises:
            ValueError: not a seat of this game.
        """
        return S.Status(int(self.players[self._seat(player), S.P_STATUS]))

    def supply(self, player: int) -> dict[str, int]:
        """Pieces left in ``player``'s supply: ``{"huts", "temples", "towers"}``.

        Raises:
            ValueError: not a seat of this game.
        """
        p = self.players[self._seat(player)]
        return {"huts": int(p[S.P_HUTS]), "temples": int(p[S.P_TEMPLES]),
                "towers": int(p[S.P_TOWERS])}

    def built(self, player: int) -> dict[str, int]:
        """Pieces ``player`` has built (destroyed huts included, RULES.md "Built")."""
        s = self.supply(player)
        return {
            "huts": S.START_HUTS - s["huts"],
            "temples": S.START_TEMPLES - s["temples"],
            "towers": S.START_TOWERS - s["towers"],
        }

    def destroyed_huts(self, player: int) -> int:
        """Huts of ``player`` destroyed by eruptions (they still count as built)."""
        return int(self.players[self._seat(player), S.P_DESTROYED])

    def places(self) -> list[int]:
        """Final place per seat (0 best; tied seats share a place); in unranked play 0 marks the
        winners and 1 the others; -1 while undecided."""
        return [int(x) for x in self.players[: self.num_players, S.P_PLACE]]

    def winners(self) -> list[int]:
        """Seats that share first place (empty while the game goes on or when truncated)."""
        if not self.is_terminal() or self.truncated:
            return []
        return [p for p, pl in enumerate(self.places()) if pl == 0]

    def island_reach(self) -> int:
        """Largest hex distance of any hex on the table from the first volcano (0 if empty)."""
        occ = self.cells[:, S.C_LEVEL] > 0
        if not occ.any():
            return 0
        b = self.game.board
        q, r = b.q[occ], b.r[occ]
        return int(((np.abs(q) + np.abs(r) + np.abs(q + r)) // 2).max())

    def bound_may_bind(self) -> bool:
        """True when the board bound may cut a legal placement now: the island comes within 2
        hexes of the board's edge (every hex of a placement lies within 2 of the island). Never
        False when a placement is cut; the engine's default radius keeps it False in practice
        (docs/engine.md, Board bound)."""
        return self.island_reach() >= self.game.board.radius - 1

    def has_hidden_information(self) -> bool:
        """True when some seat cannot see part of the state: with ``tile_preview`` the other
        seats' held tiles (the deck order is never part of anyone's information: chance nodes
        reveal it)."""
        return self.game.rules.tile_preview

    def chance_visible_to(self, player: int) -> bool:
        """At a chance node: whether ``player`` sees its outcome (the tile drawn). With
        ``tile_preview`` only the seat that draws it (it holds the tile hidden until it places
        it); otherwise every seat. Optional protocol method (as Thurn und Taxis's)."""
        from taluva_ai.games.taluva.state import M_DRAW_FOR

        return not self.game.rules.tile_preview or int(self.meta[M_DRAW_FOR]) == int(player)

    def resample(self, player: int, rng: np.random.Generator | int | None = None) -> TaluvaState:
        """A full state consistent with what ``player`` knows (OpenSpiel's
        ``resample_from_infostate``), for determinized search.

        The tiles ``player`` has not seen (the undrawn tiles, the ones left in the box, and with
        ``tile_preview`` the other seats' held tiles) are dealt again at random: each other seat
        that holds a tile gets one from that pool and the rest form the undrawn deck in random
        order. Everything public and ``player``'s own tile stay. The copy has no undo history.

        Raises:
            ValueError: ``player`` is not a seat of this game.
        """
        if not 0 <= player < self.num_players:
            raise ValueError(f"player must be a seat 0..{self.num_players - 1}, got {player}")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        out = TaluvaState(self.game, self.cells.copy(), self.players.copy(), self.deck.copy(),
                          self.meta.copy())
        drawn = int(self.meta[S.M_DRAWN])
        end = NUM_TILES - int(self.meta[S.M_BOTTOM])  # solo: known tiles under the pile stay
        others = []
        if self.game.rules.tile_preview:
            step, mover = int(self.meta[S.M_STEP]), int(self.meta[S.M_PLAYER])
            for q in range(self.num_players):
                in_play = step in (_TILE, _BUILD) and q == mover  # being placed: public
                if q != player and not in_play and self.players[q, S.P_HAND] >= 0:
                    others.append(q)
        # where each hidden held tile stands in the drawn part of the deck: among the latest
        # draws (a seat draws its next tile at the end of its turn), searched from the newest
        # (-1: not there, in an array state no game makes; that part is then left as it is)
        held_at: list[int] = []
        for q in others:
            j = drawn - 1
            while j >= 0 and (self.deck[j] != self.players[q, S.P_HAND] or j in held_at):
                j -= 1
            held_at.append(j)
        pool = np.concatenate([self.deck[drawn:end],
                               self.players[others, S.P_HAND].astype(np.int8)])
        # sorted first, so the result depends only on what `player` knows (and the rng)
        pool = gen.permutation(np.sort(pool))
        for i, q in enumerate(others):
            out.players[q, S.P_HAND] = pool[i]
            if held_at[i] >= 0:  # the deck stays the tile set, with no true tile
                out.deck[held_at[i]] = pool[i]
        out.deck[drawn:end] = pool[len(others):]
        return out

    # -- protocol ---------------------------------------------------------------------------

    def returns(self) -> np.ndarray:
        """``float64[num_players]`` (RULES.md, End): winner +1, others -1/(n-1); a shared win
        splits so the values sum to 0; ranked play is linear in place from +1 to -1. Zeros
        before the end and for a truncated game. Solo: ``[final score]`` (SOLO.md 5; 0 before
        the end; :meth:`score` gives the running score)."""
        out = np.zeros(self.num_players, dtype=np.float64)
        K.returns(self.players, self.meta, self.game.rules_array, out)
        return out

    def legal_actions(self) -> np.ndarray:
        """``int64[k]`` legal ids of the player to move, ascending (empty at chance/terminal)."""
        rules, nbr, cell_of, _, origin = self.game.kernel_args()
        if self.game.rules.solo:
            n = K.legal_actions(self.cells, self.players, self.meta, rules, nbr, cell_of, origin,
                                self._buf)
            return self._buf[:n].copy()
        # the rules' own enumerators, with the argument types the rules call them with: a
        # first run compiles them once for applying actions (the checks at a turn's end) and
        # listing compiles nothing more (K.standard_legal_actions would link them again)
        step = self.meta[S.M_STEP]
        if step == _TILE:
            n = K.tile_actions(self.cells, self.meta, nbr, cell_of, origin, self._buf,
                               np.bool_(False))
        elif step == _BUILD:
            n = K.build_actions_labeled(self.cells, self.players, self.meta, rules, nbr, cell_of,
                                        self._buf, np.bool_(False), _NO_COST,
                                        *self.game.build_scratch)
        else:
            n = 0
        return self._buf[:n].copy()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``[(tile type id, probability)]`` of the next draw, proportional to the undrawn
        copies of each type (RULES.md Step 1; OpenSpiel ``ChanceOutcomes``).

        Raises:
            WrongStepError: not at a chance node.
        """
        if self.meta[S.M_STEP] != _CHANCE:
            why = f"no chance node: the state is at the {self.step.name.lower()} step"
            raise WrongStepError("chance_outcomes", why, f"chance_outcomes(): {why}")
        end = NUM_TILES - int(self.meta[S.M_BOTTOM])  # solo: the known tiles under the pile
        undrawn = self.deck[int(self.meta[S.M_DRAWN]):end].astype(np.int64)
        counts = np.bincount(undrawn, minlength=NUM_TILE_TYPES)
        total = counts.sum()
        return [(int(t), float(c) / total) for t, c in enumerate(counts) if c > 0]

    def draw(self) -> int:
        """Resolve the chance node with the next tile of the (seeded) deck; returns its type.

        Raises:
            WrongStepError: not at a chance node.
        """
        if self.meta[S.M_STEP] != _CHANCE:
            raise WrongStepError("draw", f"no chance node: the state is at {self.step.name}")
        t = int(self.deck[int(self.meta[S.M_DRAWN])])
        self.apply(t)
        return t

    def apply(self, action: int | str | Action) -> None:
        """Apply an action: an id, notation or :class:`Action`; at a chance node a tile type id
        (0..24) or ``draw:AB``.

        Raises:
            ActionOutOfRangeError: an id outside the action space.
            WrongStepError: an action of the wrong kind for the step, or any once over.
            IllegalActionError: the action breaks a rule (named in the message).
            NotationError: malformed notation.
        The state is unchanged when an error is raised.
        """
        a = self._resolve(action)
        saved = self._copy_arrays()
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        try:
            self.game.apply_kernel(self.cells, self.players, self.deck, self.meta, rules, nbr,
                                   cell_of, hexqr, origin, a)
        except BaseException:
            self._set_arrays(tuple(x.copy() for x in saved))
            raise
        self._record(saved, a)

    def apply_unchecked(self, action: int) -> None:
        """Apply an action id already known to be legal (from :meth:`legal_actions` or
        :meth:`chance_outcomes` of this very state), skipping the legality check. For search,
        which applies only legal actions; an illegal id within the step's range corrupts the
        state. Undo still works.

        Raises:
            ActionOutOfRangeError: an id outside the ids of the step (tile types 0..24 at a
                chance node, tile ids at the tile step, build ids at the build step...); the
                compiled kernels would write outside the state's arrays.
            WrongStepError: the game is over.
        """
        a = int(action)
        lo, hi = self._step_ids()
        if not lo <= a < hi:
            if self.meta[S.M_STEP] == _TERMINAL:
                raise WrongStepError(action, "the game is over")
            raise ActionOutOfRangeError(action, f"ids of the {self.step.name.lower()} step run "
                                        f"from {lo} to {hi - 1}")
        if self.record_history:
            self._record(self._copy_arrays(), a)
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        self.game.apply_kernel(self.cells, self.players, self.deck, self.meta, rules, nbr,
                               cell_of, hexqr, origin, a)

    def _step_ids(self) -> tuple[int, int]:
        """``(lo, hi)``: the ids the step takes lie in ``lo .. hi - 1`` (tile types at a chance
        node; :mod:`actions` ids elsewhere; none once over)."""
        step = self.meta[S.M_STEP]
        h = self.game.num_cells
        if step == _TILE:
            return 0, 6 * h
        if step == _BUILD:
            return 6 * h, 14 * h
        if step == _CHANCE:
            return 0, NUM_TILE_TYPES
        if step == _BONUS:
            return 14 * h + SK.A_BONUS_PILE, 14 * h + SK.A_STOP + 1
        if step == _BOX:
            return 14 * h + SK.A_BOX_HUT, 14 * h + SK.A_BOX_TOWER + 1
        return 0, 0

    def clone(self) -> TaluvaState:
        """An independent copy (history included)."""
        s = TaluvaState(self.game, self.cells.copy(), self.players.copy(), self.deck.copy(),
                        self.meta.copy())
        s._history = list(self._history)
        return s

    def observation(self, player: int) -> dict[str, Any]:
        """What ``player`` knows: the board, supplies, the tile in hand when it is theirs to see
        (with ``tile_preview``, only their own held tile); solo: also :meth:`solo_counts`.
        The network planes are in ``taluva_ai.encoding``.

        Raises:
            ValueError: ``player`` is not a seat of this game.
        """
        player = self._seat(player)
        hands = [
            int(h) if (i == player or not self.game.rules.tile_preview) else -1
            for i, h in enumerate(self.players[: self.num_players, S.P_HAND])
        ]
        obs = {
            "cells": self.cells.copy(),
            "supply": self.players[: self.num_players, :3].copy(),
            "status": self.players[: self.num_players, S.P_STATUS].copy(),
            "tile": self.tile,
            "hands": hands,
            "current_player": self.current_player,
            "step": int(self.step),
            "tiles_left": self.tiles_left,
        }
        if self.game.rules.solo:  # everything is public in the solo variant
            obs["solo"] = self.solo_counts()
        return obs

    def heuristic_values(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64[k], values float64[k])``: the legal actions and their one-ply heuristic
        values (:mod:`heuristic`; the scores are documented there and in docs/agents.md).
        Optional protocol method, used by the greedy player (:func:`heuristic.action_values`,
        which a first run compiles fastest)."""
        from taluva_ai.games.taluva.heuristic import action_values

        return self._heuristic_values(action_values)

    def prior_values(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64[k], values float64[k])``: the values MCTS's heuristic priors come from
        (optional protocol method; a softmax of them at ``prior_temperature``): the
        :meth:`heuristic_values` (through :func:`heuristic.fast_action_values`, the same values
        sooner), except in the solo variant, whose greedy player is myopic: there the
        preferences of its greedy rollout policy (docs/solo.md)."""
        rules, nbr, cell_of, hexqr, _ = self.game.kernel_args()
        if not self.game.rules.solo:
            from taluva_ai.games.taluva.heuristic import fast_action_values

            return self._heuristic_values(fast_action_values)
        size = 8 * self.game.num_cells
        ids = np.empty(size, dtype=np.int64)
        vals = np.empty(size, dtype=np.float64)
        n = SK.policy_values(self.cells.copy(), self.players.copy(), self.deck.copy(),
                             self.meta.copy(), rules, nbr, cell_of, hexqr, ids, vals)
        return ids[:n].copy(), vals[:n].copy()

    def _heuristic_values(self, kernel: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`heuristic_values` through ``kernel`` (one of :mod:`heuristic`'s two; the
        solo variant's running score after each action otherwise, docs/solo.md)."""
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        size = 8 * self.game.num_cells
        ids = np.empty(size, dtype=np.int64)
        vals = np.empty(size, dtype=np.float64)
        if self.game.rules.solo:
            n = SK.action_values(self.cells.copy(), self.players.copy(), self.deck.copy(),
                                 self.meta.copy(), rules, nbr, cell_of, hexqr, ids, vals)
        else:
            n = kernel(self.cells, self.players, self.meta, rules, nbr, cell_of, hexqr, origin,
                       ids, vals)
        return ids[:n].copy(), vals[:n].copy()

    def rollout(self, policy: str = "random", seed: int = 0, samples: int = 8) -> np.ndarray:
        """Play a copy of this state to the end with a compiled policy; return its returns.

        Optional protocol method for search (MCTS rollout evaluators). Chance nodes draw
        uniformly among the undrawn tiles, never from the hidden deck order.

        Args:
            policy: ``"random"`` (uniform legal actions) or ``"greedy"`` (heuristic builds; tile
                placements: best of ``samples`` uniformly drawn ones); see :mod:`heuristic`.
                Solo: ``"greedy"`` is the paced policy of :func:`solo_kernels.rollout`.
            seed: the rollout's random seed.

        Returns:
            ``float64[num_players]``, as :meth:`returns`.

        Raises:
            ValueError: an unknown policy.
        """
        from taluva_ai.games.taluva.heuristic import rollout

        if policy not in ("random", "greedy"):
            raise ValueError(f"rollout policy must be 'random' or 'greedy', got {policy!r}")
        if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
            raise ValueError(f"rollout seed must be an integer in 0..2**32-1, got {seed!r}")
        if not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"samples must be a positive integer, got {samples!r}")
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        out = np.zeros(self.num_players, dtype=np.float64)
        if self.game.rules.solo:  # the final score (SOLO.md 5)
            out[0] = SK.rollout(self.cells.copy(), self.players.copy(), self.deck.copy(),
                                self.meta.copy(), rules, nbr, cell_of, hexqr,
                                policy == "greedy", samples, seed)
            return out
        rollout(self.cells.copy(), self.players.copy(), self.deck.copy(), self.meta.copy(),
                rules, nbr, cell_of, hexqr, origin, policy == "greedy", samples, seed, out)
        return out

    def value_normalization(self) -> tuple[float, float]:
        """``(offset, scale)`` that bring :meth:`returns` to search's [-1, 1] scale as
        ``(return - offset) / scale`` (optional protocol method, read by MCTS): ``(0, 1)``;
        solo ``(40, 20)``: a score of 40 (the lowest win, SOLO.md 5) is 0 and 20 points are 1."""
        return (40.0, 20.0) if self.game.rules.solo else (0.0, 1.0)

    def search_kernels(self) -> tuple[tuple[np.ndarray, ...], tuple[Any, ...], tuple[Any, ...]]:
        """``(state arrays, constants, kernels)`` for a compiled search loop (optional protocol
        method; :mod:`search_kernels` gives the kernels' signatures). The arrays are copies."""
        from taluva_ai.games.taluva.search_kernels import KERNELS, SOLO_KERNELS

        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        if self.game.rules.solo:
            state = (self.cells.copy(), self.players.copy(), self.deck.copy(),
                     self.meta.copy())
            return state, (rules, nbr, cell_of, hexqr, np.int64(origin)), SOLO_KERNELS
        state = (self.cells.copy(), self.players.copy(), self.deck.copy(), self.meta.copy())
        return state, (rules, nbr, cell_of, hexqr, np.int64(origin)), KERNELS

    # -- notation ---------------------------------------------------------------------------

    def action_to_string(self, action: int) -> str:
        """Notation of an action id (a tile type id at a chance node gives ``draw:AB``)."""
        if self.meta[S.M_STEP] == _CHANCE:
            return str(Action(ActionKind.DRAW, tile=int(action)))
        return self.game.action_to_string(action)

    def parse_action(self, text: str) -> int:
        """Id of an action in notation in this position: a tile type id for ``draw:AB`` at a
        chance node, else a tile or build action id. For an expansion, any hex of a settlement
        of the player to move may be named (it is mapped to the settlement's smallest hex).

        Raises:
            NotationError: malformed notation.
            WrongStepError: a draw outside a chance node, or a tile/build at a chance node.
            IllegalActionError: a hex outside the board bound.
        """
        act = Action.parse(text)
        step = int(self.meta[S.M_STEP])
        if step == _TERMINAL:
            raise WrongStepError(text, "the game is over")
        if act.kind is ActionKind.DRAW:
            if step != _CHANCE:
                raise WrongStepError(text, f"a tile draw during the {self.step.name.lower()} "
                                     "step (draws happen only at chance nodes)")
            return act.tile
        if step == _CHANCE:
            raise WrongStepError(text, "a tile or build action at a chance node (the tile is "
                                 "drawn first: draw() or a draw:AB outcome)")
        if act.kind in (ActionKind.BONUS, ActionKind.BOX) and not self.game.rules.solo:
            raise IllegalActionError(text, "bonus and box actions belong to the solo variant "
                                     "(solo=True)")
        if not _on_board(self.game.board, act):
            raise IllegalActionError(text, "the hex lies outside the board bound "
                                     f"(board_radius={self.game.rules.board_radius})")
        if act.kind is ActionKind.EXPAND:
            c = self.game.board.cell(act.q, act.r)
            if (self.cells[c, S.C_BUILDING] != 0
                    and self.cells[c, S.C_OWNER] == self.meta[S.M_PLAYER]):
                canon = self._settlement_canon(c)
                if canon is not None:
                    q, r = self.game.board.hex(canon)
                    act = Action(ActionKind.EXPAND, q, r, terrain=act.terrain)
        return encode(act, self.game.board)

    def _settlement_canon(self, cell: int) -> int | None:
        """Smallest cell of the settlement holding ``cell`` (None if no building there),
        from the kernels' settlement labels."""
        if self.cells[cell, S.C_BUILDING] == 0:
            return None
        _, nbr, cell_of, _, _ = self.game.kernel_args()
        n = self.game.num_cells
        scan = np.empty(n, dtype=np.int32)
        nscan = K._scan_cells(self.meta, cell_of, 0, scan)
        label = np.full(n, -1, dtype=np.int32)
        size = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
        canon = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
        K.settlements(self.cells, nbr, scan, nscan, int(self.cells[cell, S.C_OWNER]), label, size,
                      size, size, canon)
        return int(canon[label[cell]])

    # -- validation -------------------------------------------------------------------------

    def _resolve(self, action: int | str | Action) -> int:
        """Validate and turn an action into the id the kernels take (state untouched)."""
        step = self.meta[S.M_STEP]
        if isinstance(action, str):
            action_value = None
        elif isinstance(action, Action):
            action_value = action
        elif isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            action_value = None
        else:
            raise NotationError(f"an action is an int id, notation or Action, got {action!r}")
        if step == _TERMINAL:
            raise WrongStepError(action, "the game is over")
        if isinstance(action, str):
            a = self.parse_action(action)
        elif action_value is not None:
            is_draw = action_value.kind is ActionKind.DRAW
            if is_draw and step != _CHANCE:
                raise WrongStepError(action, f"a tile draw during the {self.step.name.lower()} "
                                     "step (draws happen only at chance nodes)")
            if not is_draw and step == _CHANCE:
                raise WrongStepError(action, "a tile or build action at a chance node (the tile "
                                     "is drawn first: draw() or a draw:AB outcome)")
            if is_draw:
                a = action_value.tile
            elif action_value.kind in (ActionKind.BONUS, ActionKind.BOX) \
                    and not self.game.rules.solo:
                raise IllegalActionError(action, "bonus and box actions belong to the solo "
                                         "variant (solo=True)")
            elif not _on_board(self.game.board, action_value):
                raise IllegalActionError(action, "the hex lies outside the board bound "
                                         f"(board_radius={self.game.rules.board_radius})")
            else:
                a = encode(action_value, self.game.board)
        else:
            a = int(action)  # type: ignore[arg-type]
        a = int(a)
        if step == _CHANCE:
            if not 0 <= a < NUM_TILE_TYPES:
                raise ActionOutOfRangeError(action, "a chance outcome is a tile type id 0..24")
            end = NUM_TILES - int(self.meta[S.M_BOTTOM])
            if not (self.deck[int(self.meta[S.M_DRAWN]):end] == a).any():
                raise IllegalActionError(action, f"no undrawn copy of tile {tile_name(a)} is left")
            return a
        if not 0 <= a < self.game.num_actions:
            raise ActionOutOfRangeError(
                action, f"action ids run from 0 to {self.game.num_actions - 1}"
            )
        h = self.game.num_cells
        is_tile = a < 6 * h
        kind = "tile" if is_tile else ("build" if a < 14 * h else "bonus" if a < 14 * h + 3
                                       else "box")
        want = {_TILE: "tile", _BUILD: "build", _BONUS: "bonus", _BOX: "box"}.get(int(step))
        if kind != want:
            what = {"tile": "a tile placement", "build": "a build", "bonus": "a bonus choice",
                    "box": "a box choice"}[kind]
            step_name = self.step.name.lower()
            hint = {"tile": " (place the tile first)", "bonus": " (take a bonus tile or stop)",
                    "box": " (choose the piece to box)"}.get(want or "", "")
            raise WrongStepError(action, f"{what} during the {step_name} step{hint}")
        legal = self.legal_actions()
        i = int(np.searchsorted(legal, a))
        if i == legal.size or legal[i] != a:
            raise IllegalActionError(self.game.action_to_string(a), self.explain_illegal(a))
        return a

    def explain_illegal(self, action_id: int) -> str:
        """The RULES.md rule that action ``action_id`` breaks here (for error messages)."""
        from taluva_ai.games.taluva.explain import explain

        return explain(self, action_id)

    # -- text -------------------------------------------------------------------------------

    def to_position_string(self) -> str:
        """The whole state as one line of text (inverse: :func:`position.parse_position`)."""
        from taluva_ai.games.taluva.position import format_position

        return format_position(self)

    def __str__(self) -> str:
        from taluva_ai.games.taluva.render import render_text

        return render_text(self)

    def to_text(self, color: bool = False, legend: bool = True) -> str:
        """The position as text (:func:`~taluva_ai.games.taluva.render.render_text`): hex rows
        offset by half a hex, coordinates, and with ``legend`` the legend; ``color`` adds ANSI
        colours."""
        from taluva_ai.games.taluva.render import render_text

        return render_text(self, color=color, legend=legend)

    def __repr__(self) -> str:
        return f"<TaluvaState ply={self.ply} step={self.step.name} player={self.current_player}>"

    def summary(self) -> str:
        """One line: step, player, tile in hand, supplies (solo: the tile's source, the draw
        pile, bonus stack and face-up tile, and the running score)."""
        parts = [f"ply {self.ply}", self.step.name.lower()]
        if self.game.rules.solo:
            c = self.solo_counts()
            if self.tile >= 0:
                parts.append(f"tile {tile_name(self.tile)} ({c['source']})")
            face = c["face_up"] or "-"
            parts.append(f"pile {c['draw_pile']} stack {c['bonus_stack']} face-up {face} "
                         f"aside {c['set_aside']}")
            s = self.supply(0)
            boxed = c["boxed"]
            parts.append(f"supply h{s['huts']} t{s['temples']} w{s['towers']} boxed "
                         f"h{boxed['huts']} t{boxed['temples']} w{boxed['towers']}")
            parts.append(f"score {self.score()}")
            return " | ".join(parts)
        if self.step in (S.Step.TILE, S.Step.BUILD):
            parts.append(f"player {self.current_player}")
        if self.tile >= 0:
            parts.append(f"tile {tile_name(self.tile)}")
        for p in range(self.num_players):
            s = self.supply(p)
            st = self.status(p)
            tag = "" if st == S.Status.ACTIVE else f" {st.name.lower()}"
            parts.append(f"P{p} h{s['huts']} t{s['temples']} w{s['towers']}{tag}")
        return " | ".join(parts)


def _on_board(board: Board, act: Action) -> bool:
    from taluva_ai.games.taluva.hexgrid import hex_distance

    return hex_distance(act.q, act.r) <= board.radius


