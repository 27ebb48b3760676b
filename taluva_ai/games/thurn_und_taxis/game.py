"""The object API over one Thurn und Taxis state: ``ThurnUndTaxisGame`` / ``ThurnUndTaxisState``
(OpenSpiel-style, the protocol of :mod:`taluva_ai.protocol`).

All rules live in :mod:`kernels`; this module validates input, keeps the undo history,
translates between ids and notation, and answers the hidden-information questions
(:meth:`ThurnUndTaxisState.observation`, :meth:`ThurnUndTaxisState.resample`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from taluva_ai.errors import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    WrongStepError,
)
from taluva_ai.games.array_state import ArrayState, MetaField, Snapshot
from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import kernels as K
from taluva_ai.games.thurn_und_taxis import state as S
from taluva_ai.games.thurn_und_taxis.rules import TnTRuleError, TnTRules

#: The five state arrays ``(cards, route, houses, players, meta)`` (:mod:`state`).
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: Action kinds that belong to each step (anything else there is a WrongStepError).
_STEP_KINDS: dict[int, tuple[str, ...]] = {
    int(S.Step.DRAW): ("take", "administrator"),
    int(S.Step.DRAW2): ("postmaster", "start", "abandon", "extend"),
    int(S.Step.PLAY): ("start", "abandon", "extend"),
    int(S.Step.AFTER_PLAY): ("carrier", "pass", "close"),
    int(S.Step.HOUSE): ("house",),
    int(S.Step.CARRIAGE): ("cartwright", "pass"),
    int(S.Step.DISCARD): ("discard",),
}


def _check_seed(seed: Any) -> int:
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


class ThurnUndTaxisGame:
    """Thurn und Taxis (THURN-UND-TAXIS.md) with one :class:`TnTRules`.

    Args:
        rules: the options; or give them as keywords (``ThurnUndTaxisGame(num_players=3)``).

    Attributes:
        num_actions: 327, one ``Discrete`` space for every step (:mod:`actions`).
        max_chance_outcomes: 22, the cities a card leaving the supply can show.
        max_game_length: an upper bound on actions plus chance outcomes.

    Raises:
        TypeError: both ``rules`` and keyword options.
        TnTRuleError: an unknown or invalid option (a ValueError naming it).
    """

    name = "thurn_und_taxis"
    num_actions = A.NUM_ACTIONS
    max_chance_outcomes = B.NUM_CITIES
    #: Shape of :meth:`ThurnUndTaxisState.observation_tensor` (:mod:`encoding`).
    observation_tensor_shape = (536,)

    def __init__(self, rules: TnTRules | None = None, **options: Any) -> None:
        if rules is not None and options:
            raise TypeError("give either a TnTRules or keyword options, not both")
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(TnTRules)})
        if unknown:
            raise TnTRuleError(f"unknown rule option(s): {', '.join(unknown)}; known: "
                               f"{', '.join(f.name for f in dataclasses.fields(TnTRules))}")
        self.rules = rules if rules is not None else TnTRules(**options)
        self.num_players = self.rules.num_players
        self.rules_array = self.rules.as_array()
        # per turn at most 2 draws + 2 refills + administrator (1 + 6) + 2 plays + 1 close with
        # 9 houses + cartwright + discards (a hand holds at most 66 cards): a loose bound
        self.max_game_length = 6 + self.rules.max_rounds * self.num_players * 100

    def __repr__(self) -> str:
        return f"ThurnUndTaxisGame({self.rules!r})"

    def options(self) -> dict[str, Any]:
        """The options as a JSON-ready dict: ``make_game("thurn_und_taxis", **game.options())``
        rebuilds this game."""
        return self.rules.to_dict()

    def new_initial_state(self, seed: int | None = None) -> ThurnUndTaxisState:
        """The first chance node of a game (the 6 display cards are dealt one by one).

        Args:
            seed: seeds :meth:`ThurnUndTaxisState.draw`, which resolves chance nodes; the same
                seed and the same decisions give the same cards. None: a fresh random seed.

        Raises:
            ValueError: ``seed`` is not a non-negative integer or None.
        """
        return ThurnUndTaxisState(self, *S.new_arrays(self.num_players), seed=_check_seed(seed))

    def state_from_arrays(self, cards: np.ndarray, route: np.ndarray, houses: np.ndarray,
                          players: np.ndarray, meta: np.ndarray, seed: int
                          ) -> ThurnUndTaxisState:
        """A state of this game over the given arrays (:mod:`.state`'s shapes and dtypes),
        taken as they are, unchecked: what :func:`.position.parse_position` builds once it
        has checked them, so that it needs no import of this module."""
        return ThurnUndTaxisState(self, cards, route, houses, players, meta, seed=seed)

    def state_from_position(self, text: str) -> ThurnUndTaxisState:
        """The state a position string describes (:mod:`position`; no history).

        Raises:
            PositionError: a malformed or inconsistent position string (names the field).
        """
        from taluva_ai.games.thurn_und_taxis.position import parse_position

        return parse_position(self, text)

    def action_to_string(self, action: int) -> str:
        """Notation of an action id (no position needed: ids have one meaning)."""
        return A.action_to_string(action)

    def string_to_action(self, text: str) -> int:
        """Id of a player's action in notation.

        Raises:
            NotationError: malformed notation, or a chance outcome (``deal:<city>``).
        """
        kind, a = A.parse(text)
        if kind == "chance":
            raise NotationError(f"{text!r} is a chance outcome, not a player's action")
        return a


class ThurnUndTaxisState(ArrayState):
    """One Thurn und Taxis position with its undo history.

    The position is five arrays (:mod:`state`): ``cards``, ``route``, ``houses``, ``players``,
    ``meta``; ``seed`` drives :meth:`draw`. ``current_player`` is ``CHANCE`` (-1) while a card
    leaves the supply and ``TERMINAL`` (-4) at the end.
    """

    M_STEP, M_PLAYER, M_PLY = S.M_STEP, S.M_PLAYER, S.M_PLY
    S_CHANCE, S_TERMINAL = S.S_CHANCE, S.S_TERMINAL

    def __init__(self, game: ThurnUndTaxisGame, cards: np.ndarray, route: np.ndarray,
                 houses: np.ndarray, players: np.ndarray, meta: np.ndarray, seed: int = 0
                 ) -> None:
        self.game = game
        self._set_arrays((cards, route, houses, players, meta))
        self.seed = seed
        self._history: list[Snapshot] = []
        self.record_history = True
        self._buf = np.empty(A.NUM_ACTIONS, dtype=np.int64)

    def arrays(self) -> Arrays:
        """``(cards, route, houses, players, meta)``, the live state arrays (not copies)."""
        return self.cards, self.route, self.houses, self.players, self.meta

    def _set_arrays(self, arrays: tuple[np.ndarray, ...]) -> None:
        self.cards, self.route, self.houses, self.players, self.meta = arrays

    def _copy_arrays(self) -> Arrays:
        return (self.cards.copy(), self.route.copy(), self.houses.copy(), self.players.copy(),
                self.meta.copy())

    # -- facts ------------------------------------------------------------------------------

    step = MetaField(S.M_STEP, S.Step, "What the state waits for (:class:`state.Step`).")
    player = MetaField(S.M_PLAYER, int,
                       "Seat whose turn it is (also at a chance node of that turn).")
    round = MetaField(S.M_ROUND, int, "Rounds completed.")
    official = MetaField(S.M_OFFICIAL, B.OFFICIALS.__getitem__,
                         "The official used this turn: ``none``, ``postmaster``, "
                         "``administrator``, ``postal_carrier`` or ``cartwright``.")
    end_reason = MetaField(S.M_END, S.EndReason, "``NONE`` while the game goes on; "
                           "``CARRIAGE_7``, ``LAST_HOUSE`` or ``TRUNCATED``.")
    end_triggered_by = MetaField(S.M_END_BY, int, "Seat that triggered the end (and holds "
                                 "the game_end tile), or -1.")

    @property
    def truncated(self) -> bool:
        """True when ``max_rounds`` stopped the game (it is scored all the same, §8)."""
        return bool(self.meta[S.M_END] == S.EndReason.TRUNCATED)

    def hand(self, player: int) -> dict[str, int]:
        """``{city: copies}`` in ``player``'s hand (hidden information: for tests, tools and
        the owner; agents read :meth:`observation`).

        Raises:
            ValueError: not a seat of this game.
        """
        row = self.cards[S.L_HAND + self._seat(player)]
        return {B.CITIES[c]: int(row[c]) for c in np.flatnonzero(row)}

    def display(self) -> dict[str, int]:
        """``{city: copies}`` face up in the display."""
        row = self.cards[S.L_DISPLAY]
        return {B.CITIES[c]: int(row[c]) for c in np.flatnonzero(row)}

    def route_of(self, player: int) -> list[str]:
        """``player``'s route from its left end to its right end."""
        p = self._seat(player)
        return [B.CITIES[int(c)] for c in self.route[p, : int(self.players[p, S.P_ROUTE_LEN])]]

    def houses_of(self, player: int) -> list[str]:
        """Cities where ``player`` has a house, in city-id order."""
        return [B.CITIES[int(c)] for c in np.flatnonzero(self.houses[self._seat(player)])]

    def houses_left(self, player: int) -> int:
        return int(self.players[self._seat(player), S.P_HOUSES_LEFT])

    def carriage(self, player: int) -> int:
        """Highest carriage held (3..7), 0 for none."""
        return int(self.players[self._seat(player), S.P_CARRIAGE])

    def tiles(self, player: int) -> dict[str, tuple[int, int]]:
        """``{stack: (tiles, points)}`` of the bonus tiles ``player`` holds (only the route
        stacks can give a seat more than one tile)."""
        p = self._seat(player)
        return {B.STACKS[s]: (int(self.players[p, S.P_STACK_COUNT + s]),
                            int(self.players[p, S.P_STACK_POINTS + s]))
                for s in range(B.NUM_STACKS) if self.players[p, S.P_STACK_COUNT + s] > 0}

    def tile_points(self, player: int) -> int:
        return int(self.players[self._seat(player), S.P_TILE_POINTS])

    def stack_left(self, stack: str) -> list[int]:
        """Values still in bonus stack ``stack``, top first.

        Raises:
            KeyError: not a stack id.
        """
        s = B.STACK_ID[stack]
        taken = int(self.meta[S.M_STACK_TAKEN + s])
        return [int(v) for v in B.STACK_VALUES[s, taken: int(B.STACK_SIZE[s])]]

    def scores(self) -> list[int]:
        """Points per seat (§7): highest carriage + bonus tiles - houses not placed."""
        return [int(B.CARRIAGE_POINTS[self.players[p, S.P_CARRIAGE]]
                    + self.players[p, S.P_TILE_POINTS] - self.players[p, S.P_HOUSES_LEFT])
                for p in range(self.num_players)]

    def places(self) -> list[int]:
        """Final place per seat (0 best; tie-break of §7), -1 while the game goes on."""
        return [int(x) for x in self.players[: self.num_players, S.P_PLACE]]

    def winners(self) -> list[int]:
        """Seats in first place (several only for a tie without game_end holder)."""
        if not self.is_terminal():
            return []
        return [p for p, pl in enumerate(self.places()) if pl == 0]

    def has_hidden_information(self) -> bool:
        """Always True: hands and the supply are hidden (§9)."""
        return True

    # -- protocol ---------------------------------------------------------------------------

    def returns(self) -> np.ndarray:
        """``float64[num_players]``: the winner +1, the others -1/(n-1); a shared win (only in
        a truncated game) splits so the values sum to 0. Zeros before the end."""
        out = np.zeros(self.num_players, dtype=np.float64)
        K.returns(self.players, self.meta, self.game.rules_array, out)
        return out

    def legal_actions(self) -> np.ndarray:
        """``int64[k]`` legal ids of the player to move, ascending (empty at chance/terminal)."""
        n = K.legal_actions(*self.arrays(), self.game.rules_array, self._buf)
        return self._buf[:n].copy()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """At a chance node, ``(city, probability)``: a card leaves the supply uniformly among
        its cards (so a city's probability is its share of the supply). Empty elsewhere."""
        if self.meta[S.M_STEP] != S.S_CHANCE:
            return []
        counts = self.cards[S.L_SUPPLY].astype(np.int64)
        total = int(counts.sum())
        return [(int(c), float(counts[c]) / total) for c in np.flatnonzero(counts)]

    def draw(self) -> int:
        """Resolve the chance node with the state's seeded chance: the outcome is drawn from
        :meth:`chance_outcomes` with ``numpy.random.default_rng([seed, ply])``, so the same seed
        and the same decisions give the same cards. Returns the city applied.

        Raises:
            WrongStepError: not at a chance node.
        """
        if self.meta[S.M_STEP] != S.S_CHANCE:
            raise WrongStepError("draw", f"no chance node: the state is at {self.step.name}")
        counts = self.cards[S.L_SUPPLY].astype(np.int64)
        r = int(np.random.default_rng([self.seed, self.ply]).integers(int(counts.sum())))
        c = int(np.searchsorted(np.cumsum(counts), r, side="right"))
        self.apply(c)
        return c

    def apply(self, action: int | str) -> None:
        """Apply an action id or notation; at a chance node a city id (0..21) or
        ``deal:<city>``.

        Raises:
            ActionOutOfRangeError: an id outside the action space (or a city id outside 0..21
                at a chance node).
            WrongStepError: an action of a kind that does not belong to the step, a chance
                outcome outside a chance node, a player's action at one, anything once over.
            IllegalActionError: the action breaks a rule (named in the message).
            NotationError: malformed notation.
        The state is unchanged when an error is raised.
        """
        a = self._resolve(action)
        self._record(self._copy_arrays(), a)
        self._apply_id(a)

    def _apply_id(self, a: int) -> None:
        if self.meta[S.M_STEP] == S.S_CHANCE:
            K.apply_chance(*self.arrays(), self.game.rules_array, a)
        else:
            K.apply_action(*self.arrays(), self.game.rules_array, a)

    def apply_unchecked(self, action: int) -> None:
        """Apply an id known to be legal (from :meth:`legal_actions` or
        :meth:`chance_outcomes` of this very state), skipping the legality check. For search;
        an illegal id in range corrupts the state.

        Raises:
            ActionOutOfRangeError: an id outside ``0 .. 326`` (a city id ``0 .. 21`` at a
                chance node); the compiled kernels would write outside the state's arrays.
            WrongStepError: the game is over.
        """
        a = int(action)
        step = int(self.meta[S.M_STEP])
        if step == S.S_TERMINAL:
            raise WrongStepError(action, "the game is over")
        hi = B.NUM_CITIES if step == S.S_CHANCE else A.NUM_ACTIONS
        if not 0 <= a < hi:
            what = "a chance outcome is a city id" if step == S.S_CHANCE else "action ids run from"
            raise ActionOutOfRangeError(action, f"{what} 0 to {hi - 1}")
        self._record(self._copy_arrays(), a)
        self._apply_id(a)

    def clone(self) -> ThurnUndTaxisState:
        """An independent copy (history included)."""
        s = ThurnUndTaxisState(self.game, *self._copy_arrays(), seed=self.seed)
        s._history = list(self._history)
        s.record_history = self.record_history
        return s

    # -- hidden information -----------------------------------------------------------------

    def observation(self, player: int) -> dict[str, Any]:
        """What ``player`` knows (§9), as arrays (copies).

        Keys (``n`` = number of players, cities in id order, stacks in :data:`board.STACKS`
        order): ``player``; ``hand`` ``int8[22]`` (own hand); ``display``, ``discard``
        ``int8[22]``; ``supply_size``; ``hand_sizes`` ``int64[n]``; ``known`` ``int8[n, 22]``
        (per seat, the cards taken face up and still in hand); ``unknown`` ``int64[n]``
        (hand size minus known cards); ``routes`` ``int8[n, 22]`` (cities left to right, -1
        padded); ``houses`` ``int8[n, 22]``; ``houses_left``, ``carriage`` ``int64[n]``;
        ``tile_counts``, ``tile_points`` ``int64[n, 10]``; ``stacks_left`` ``int64[10]``;
        ``step``, ``current_player``, ``turn_player``, ``official``, ``forced_postmaster``,
        ``close_mode``, ``close_province``, ``picks_left``, ``round``, ``turn``,
        ``end_triggered_by``, ``reshuffles``, ``chance_to_hand``. Nothing else of the other
        hands or of the supply's make-up.

        Raises:
            ValueError: not a seat of this game.
        """
        p = self._seat(player)
        n = self.num_players
        hands = self.cards[S.L_HAND: S.L_HAND + n].astype(np.int64).sum(axis=1)
        known = self.cards[S.L_KNOWN: S.L_KNOWN + n].copy()
        return {
            "player": p,
            "hand": self.cards[S.L_HAND + p].copy(),
            "display": self.cards[S.L_DISPLAY].copy(),
            "discard": self.cards[S.L_DISCARD].copy(),
            "supply_size": int(self.cards[S.L_SUPPLY].astype(np.int64).sum()),
            "hand_sizes": hands,
            "known": known,
            "unknown": hands - known.astype(np.int64).sum(axis=1),
            "routes": self.route[:n].copy(),
            "houses": self.houses[:n].copy(),
            "houses_left": self.players[:n, S.P_HOUSES_LEFT].astype(np.int64),
            "carriage": self.players[:n, S.P_CARRIAGE].astype(np.int64),
            "tile_counts": self.players[:n, S.P_STACK_COUNT:S.P_STACK_COUNT + B.NUM_STACKS]
            .astype(np.int64),
            "tile_points": self.players[:n, S.P_STACK_POINTS:S.P_STACK_POINTS + B.NUM_STACKS]
            .astype(np.int64),
            "stacks_left": (B.STACK_SIZE
                            - self.meta[S.M_STACK_TAKEN:S.M_STACK_TAKEN + B.NUM_STACKS])
            .astype(np.int64),
            "step": int(self.meta[S.M_STEP]),
            "current_player": self.current_player,
            "turn_player": int(self.meta[S.M_PLAYER]),
            "official": int(self.meta[S.M_OFFICIAL]),
            "forced_postmaster": bool(self.meta[S.M_FORCED]),
            "close_mode": int(self.meta[S.M_MODE]),
            "close_province": int(self.meta[S.M_MODE_PROVINCE]),
            "picks_left": int(self.meta[S.M_TODO]),
            "round": int(self.meta[S.M_ROUND]),
            "turn": int(self.meta[S.M_TURN]),
            "end_triggered_by": int(self.meta[S.M_END_BY]),
            "reshuffles": int(self.meta[S.M_RESHUFFLES]),
            "chance_to_hand": bool(self.meta[S.M_STEP] == S.S_CHANCE
                                   and self.meta[S.M_CHANCE_TO] == S.TO_HAND),
        }

    def observation_tensor(self, player: int) -> np.ndarray:
        """``float32[536]`` in ``[0, 1]``: :meth:`observation` for networks, seats rotated so
        ``player`` comes first (:mod:`encoding`; computed by its compiled ``encode_arrays``,
        equal to ``encode(self.observation(player))``). Optional protocol method (envs and
        the AlphaZero encoder use it).

        Raises:
            ValueError: not a seat of this game.
        """
        from taluva_ai.games.thurn_und_taxis.encoding import OBS_SIZE, encode_arrays

        out = np.empty(OBS_SIZE, dtype=np.float32)
        encode_arrays(*self.arrays(), self.game.rules_array, self._seat(player), out)
        return out

    def chance_visible_to(self, player: int) -> bool:
        """At a chance node: whether ``player`` will see its outcome (a card going to the
        display, or to ``player``'s own hand), so that information-set search branches on it.
        A card dealt to another seat's hand is hidden (§9). Optional protocol method."""
        return bool(self.meta[S.M_CHANCE_TO] != S.TO_HAND or self.meta[S.M_PLAYER] == player)

    def unseen_cards(self, player: int) -> np.ndarray:
        """``int64[22]``: per city, the cards ``player`` cannot locate: all 3 copies less the
        display, the discard pile, every route, ``player``'s hand and the other seats' known
        cards. They lie in the supply or in the other seats' unknown hand slots (§9)."""
        p = self._seat(player)
        n = self.num_players
        c = self.cards.astype(np.int64)
        pool = (3 - c[S.L_DISPLAY] - c[S.L_DISCARD] - c[S.L_ROUTE:S.L_ROUTE + n].sum(axis=0)
                - c[S.L_HAND + p])
        for q in range(n):
            if q != p:
                pool -= c[S.L_KNOWN + q]
        return pool

    def resample(self, player: int, rng: np.random.Generator | int | None = None
                 ) -> ThurnUndTaxisState:
        """A full state consistent with what ``player`` knows (OpenSpiel's
        ``resample_from_infostate``; §9 Resample), for determinized search.

        The unseen cards (:meth:`unseen_cards`) are dealt uniformly at random to the other
        seats' unknown hand slots (seat order) and to the supply; everything public,
        ``player``'s hand and the other seats' known cards stay. The copy has no history and
        the same seed.

        Raises:
            ValueError: ``player`` is not a seat of this game.
        """
        p = self._seat(player)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        pool = self.unseen_cards(p)
        cards = np.repeat(np.arange(B.NUM_CITIES), pool)  # sorted: depends on the pool only
        cards = gen.permutation(cards)
        out = ThurnUndTaxisState(self.game, *self._copy_arrays(), seed=self.seed)
        c = out.cards
        i = 0
        for q in range(self.num_players):
            if q == p:
                continue
            slots = int(c[S.L_HAND + q].sum()) - int(c[S.L_KNOWN + q].sum())
            c[S.L_HAND + q] = c[S.L_KNOWN + q] + np.bincount(cards[i:i + slots],
                                                          minlength=B.NUM_CITIES)
            i += slots
        c[S.L_SUPPLY] = np.bincount(cards[i:], minlength=B.NUM_CITIES)
        return out

    # -- players' helpers -------------------------------------------------------------------

    def heuristic_values(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64[k], values float64[k])``: the legal actions and the greedy heuristic's
        values (:mod:`heuristic`; docs/thurn_und_taxis.md). Reads only what the player to move
        knows. Optional protocol method, used by the greedy player and greedy rollouts."""
        from taluva_ai.games.thurn_und_taxis.heuristic import action_values

        ids = np.empty(A.NUM_ACTIONS, dtype=np.int64)
        vals = np.empty(A.NUM_ACTIONS, dtype=np.float64)
        n = action_values(*self.arrays(), self.game.rules_array, ids, vals)
        return ids[:n].copy(), vals[:n].copy()

    def rollout(self, policy: str = "random", seed: int = 0, samples: int = 1) -> np.ndarray:
        """Play a copy of this state to the end with a compiled policy and return its
        ``returns()``. Optional protocol method for MCTS rollouts. Chance nodes draw from the
        supply's make-up in this state (a determinization's, in search).

        Args:
            policy: ``"random"`` or ``"greedy"`` (:mod:`heuristic`).
            seed: the rollout's random seed (0..2**32-1).
            samples: unused (the protocol's argument for Taluva's sampled placements).

        Raises:
            ValueError: an unknown policy or a bad seed.
        """
        from taluva_ai.games.thurn_und_taxis.heuristic import rollout

        if policy not in ("random", "greedy"):
            raise ValueError(f"rollout policy must be 'random' or 'greedy', got {policy!r}")
        if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
            raise ValueError(f"rollout seed must be an integer in 0..2**32-1, got {seed!r}")
        out = np.zeros(self.num_players, dtype=np.float64)
        rollout(*self._copy_arrays(), self.game.rules_array, policy == "greedy", seed, out)
        return out

    # -- notation ---------------------------------------------------------------------------

    def action_to_string(self, action: int) -> str:
        """Notation of an action id; at a chance node, of a chance outcome (``deal:<city>``)."""
        if self.meta[S.M_STEP] == S.S_CHANCE:
            return A.chance_to_string(action)
        return A.action_to_string(action)

    def parse_action(self, text: str) -> int:
        """The id (or, for ``deal:<city>``, the chance outcome) of an action in notation.
        Legality is not checked (``apply`` does).

        Raises:
            NotationError: malformed notation.
            WrongStepError: a chance outcome outside a chance node, a player's action at one,
                or anything once the game is over.
        """
        kind, a = A.parse(text)
        step = int(self.meta[S.M_STEP])
        if step == S.S_TERMINAL:
            raise WrongStepError(text, "the game is over")
        if kind == "chance" and step != S.S_CHANCE:
            raise WrongStepError(text, f"a chance outcome during the {self.step.name.lower()} "
                                 "step (cards leave the supply only at chance nodes)")
        if kind == "action" and step == S.S_CHANCE:
            raise WrongStepError(text, "a player's action at a chance node (a card leaves the "
                                 "supply first: draw() or a deal:<city> outcome)")
        return a

    # -- validation -------------------------------------------------------------------------

    def _resolve(self, action: int | str) -> int:
        """Validate and turn an action into the id (or chance outcome) the kernels take."""
        if isinstance(action, str):
            a = self.parse_action(action)
        elif isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            a = int(action)
        else:
            raise NotationError(f"an action is an int id or notation, got {action!r}")
        step = int(self.meta[S.M_STEP])
        if step == S.S_TERMINAL:
            raise WrongStepError(action, "the game is over")
        if step == S.S_CHANCE:
            if not 0 <= a < B.NUM_CITIES:
                raise ActionOutOfRangeError(action, "a chance outcome is a city id 0..21")
            if self.cards[S.L_SUPPLY, a] == 0:
                raise IllegalActionError(action, f"no {B.CITIES[a]} card is left in the supply")
            return a
        if not 0 <= a < A.NUM_ACTIONS:
            raise ActionOutOfRangeError(action, f"action ids run from 0 to {A.NUM_ACTIONS - 1}")
        text = A.action_to_string(a)
        kind = text.split(":", 1)[0]
        if kind not in _STEP_KINDS[step]:
            raise WrongStepError(text, f"a {kind} action during the {self.step.name.lower()} "
                                 f"step (it takes: {', '.join(_STEP_KINDS[step])})")
        legal = self.legal_actions()
        i = int(np.searchsorted(legal, a))
        if i == legal.size or legal[i] != a:
            from taluva_ai.games.thurn_und_taxis.explain import explain

            raise IllegalActionError(text, explain(self, a))
        return a

    # -- text -------------------------------------------------------------------------------

    def to_position_string(self) -> str:
        """The whole state as one line (inverse: :func:`position.parse_position`)."""
        from taluva_ai.games.thurn_und_taxis.position import format_position

        return format_position(self)

    def seat_summary(self, player: int) -> str:
        """``12 points (carriage 5, tiles 9, 2 houses left)``: one seat's score, for the
        ``taluva`` command's result lines."""
        p = self._seat(player)
        left = self.houses_left(p)
        return (f"{self.scores()[p]} points (carriage {self.carriage(p) or '-'}, tiles "
                f"{self.tile_points(p)}, {left} house{'' if left == 1 else 's'} left)")

    def summary(self) -> str:
        """One line: ply, step, seat, and per seat score, houses left, carriage, route."""
        parts = [f"ply {self.ply}", f"round {self.round}", self.step.name.lower()]
        if self.current_player >= 0:
            parts.append(f"seat {self.current_player} (official {self.official})")
        for p, sc in enumerate(self.scores()):
            parts.append(f"P{p} {sc}pt h{self.houses_left(p)} c{self.carriage(p)} "
                         f"r{len(self.route_of(p))}")
        return " | ".join(parts)

    def __str__(self) -> str:
        lines = [self.summary()]
        lines.append("display: " + _cards_text(self.cards[S.L_DISPLAY])
                     + f"   supply: {int(self.cards[S.L_SUPPLY].sum())} cards"
                     + f"   discard: {int(self.cards[S.L_DISCARD].sum())} cards")
        for p in range(self.num_players):
            tiles = ", ".join(f"{name} {pts}" for name, (_, pts) in self.tiles(p).items())
            lines.append(f"seat {p}: route {'-'.join(self.route_of(p)) or '(none)'}; hand "
                         f"{_cards_text(self.cards[S.L_HAND + p])}; houses "
                         f"{', '.join(self.houses_of(p)) or '(none)'}; tiles {tiles or '-'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<ThurnUndTaxisState ply={self.ply} step={self.step.name} "
                f"player={self.current_player}>")


def _cards_text(row: np.ndarray) -> str:
    items = [f"{B.CITIES[c]}" + (f"x{int(row[c])}" if row[c] > 1 else "")
             for c in np.flatnonzero(row)]
    return " ".join(items) if items else "(empty)"


__all__ = ["Arrays", "ThurnUndTaxisGame", "ThurnUndTaxisState"]
