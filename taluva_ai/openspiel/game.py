"""The OpenSpiel games (:mod:`taluva_ai.openspiel`): ``python_taluva``
(:class:`TaluvaOpenSpielGame`) and ``python_thurn_und_taxis``
(:class:`ThurnUndTaxisOpenSpielGame`) over their shared :class:`_GameBase` (the declared
facts, observers, deserialization), each game's observations and its resampling of hidden
tiles or cards; registered with OpenSpiel when this module is imported.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from taluva_ai.errors import IllegalActionError
from taluva_ai.openspiel.core import (
    _SPECS,
    TALUVA,
    THURN_UND_TAXIS,
    OpenSpielIllegalActionError,
    _Core,
    _engine_game,
    _engine_options,
    _options_key,
    _Step,
    _taluva_defaults,
    _tnt_defaults,
    _to_move,
)
from taluva_ai.openspiel.serialization import (
    _COUNT,
    _FIELDS,
    _HISTORY_ITEM,
    MAX_SERIALIZED_CHARS,
    SerializedStateError,
    _clip,
    _parse_start,
    _shorten,
)
from taluva_ai.openspiel.state import OpenSpielState
from taluva_ai.protocol import GameState, chance_observers


class _InfoStateObserver:
    """Information-state strings (no tensor)."""

    tensor = None

    def __init__(self) -> None:
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: Any, player: int) -> None:
        pass

    def string_from(self, state: Any, player: int) -> str:
        return state.information_state_text(player)


class _Observer:
    """The default observation: the project's encoder as the tensor, the engine's view of
    ``player`` as the string."""

    def __init__(self, game: _GameBase, params: dict[str, Any]) -> None:
        self._game = game
        self._params = game.observer_params(params)
        shape = game.observation_shape(self._params)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: Any, player: int) -> None:
        self.tensor[:] = self._game.observation_values(state._core.engine, player,
                                                       self._params).ravel()

    def string_from(self, state: Any, player: int) -> str:
        return state.observation_text(player)


class _GameBase(pyspiel.Game):
    """What both games share; subclasses give the game's facts and texts."""

    engine_name = ""
    short_name = ""
    long_name = ""

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        raise NotImplementedError

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**self.defaults(), **(params or {})}
        unknown = sorted(set(p) - set(self.defaults()))
        if unknown:
            raise ValueError(f"{self.short_name}: unknown parameter(s) {', '.join(unknown)}; "
                             f"known: {', '.join(self.defaults())}")
        options = _engine_options(p)
        self.engine_game = _engine_game(self.engine_name, json.dumps(options, sort_keys=True))
        template = self.engine_game.new_initial_state(seed=0)
        template.record_history = False
        self._template = template
        super().__init__(self.game_type(self.imperfect()), self.game_info(), p)

    # the facts
    def imperfect(self) -> bool:
        return self.imperfect_rules(self.engine_game)

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        raise NotImplementedError

    @classmethod
    def game_type(cls, imperfect: bool) -> pyspiel.GameType:
        info = pyspiel.GameType.Information
        return pyspiel.GameType(
            short_name=cls.short_name,
            long_name=cls.long_name,
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=(info.IMPERFECT_INFORMATION if imperfect
                         else info.PERFECT_INFORMATION),
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=4,
            min_num_players=2,
            provides_information_state_string=True,
            provides_information_state_tensor=False,
            provides_observation_string=True,
            provides_observation_tensor=True,
            parameter_specification=cls.defaults(),
        )

    def game_info(self) -> pyspiel.GameInfo:
        g = self.engine_game
        return pyspiel.GameInfo(
            num_distinct_actions=g.num_actions,
            max_chance_outcomes=g.max_chance_outcomes,
            num_players=g.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.max_decisions(),
        )

    def max_decisions(self) -> int:
        """Most player decisions in a game (OpenSpiel's ``max_game_length``)."""
        return int(self.engine_game.max_game_length)

    def max_chance_nodes_in_history(self) -> int:
        return int(self.engine_game.max_game_length)

    # states
    def new_initial_state(self) -> OpenSpielState:
        return OpenSpielState(self, _Core(self._template.clone(), self._template))

    def state_from_engine(self, engine_state: GameState) -> OpenSpielState:
        """An OpenSpiel state holding a copy of the engine state ``engine_state`` (a position
        of a game with these options); its OpenSpiel history is empty, and its information-
        state strings start at this position.

        Raises:
            ValueError: the state belongs to another game or other options.
        """
        g = getattr(engine_state, "game", None)
        if g is None or g.name != self.engine_name or \
                _options_key(g) != _options_key(self.engine_game):
            raise ValueError(f"{self.short_name}: the state belongs to another game or other "
                             f"options ({g!r}, this game: {self.engine_game!r})")
        return OpenSpielState(self, _Core(engine_state.clone(), engine_state.clone()))

    def deserialize_state(self, text: str) -> OpenSpielState:
        """The state of ``state.serialize()``'s ``text``: its start position is parsed by the
        engine's checked parser, its history replayed from there action by action (each one
        legal for the seat to move), and the end compared with its position. Nothing in it is
        unpickled or run.

        Raises:
            SerializedStateError: any other string (one line naming the field), among them
                OpenSpiel's default ``__dict__=`` (pickle) form of Python states.
        """
        name = self.short_name

        def refuse(why: str) -> SerializedStateError:
            return SerializedStateError(f"{name}: serialized state refused: {why}")

        if not isinstance(text, str):
            raise refuse(f"expected a str, got {type(text).__name__}")
        if len(text) > MAX_SERIALIZED_CHARS:
            raise refuse(f"{len(text)} characters, more than {MAX_SERIALIZED_CHARS}")
        if "__dict__=" in text:
            raise refuse("it holds '__dict__=' (a pickle, OpenSpiel's default form for Python "
                         "states), which is never loaded; states serialize as history, "
                         "move_number, start and position lines")
        lines = text.split("\n")
        if len(lines) == len(_FIELDS) + 1 and lines[-1] == "":
            lines.pop()
        if len(lines) != len(_FIELDS):
            raise refuse(f"expected {len(_FIELDS)} lines ({', '.join(f + '=' for f in _FIELDS)}"
                         f"), got {len(lines)}")
        values = {}
        for i, (line, key) in enumerate(zip(lines, _FIELDS, strict=True)):
            if not line.startswith(key + "="):
                raise refuse(f"line {i + 1}: expected '{key}=...', got {_clip(line)}")
            values[key] = line[len(key) + 1:]
        g = self.engine_game
        n = g.num_players
        most = self.max_decisions() + self.max_chance_nodes_in_history()
        items = values["history"].split(",") if values["history"] else []
        if len(items) > most:
            raise refuse(f"history: {len(items)} actions, more than a game has ({most})")
        history = []
        for i, item in enumerate(items):
            m = _HISTORY_ITEM.fullmatch(item)
            if m is None:
                raise refuse(f"history item {i + 1}: {_clip(item)} is not 'player:action'")
            player, action = int(m.group(1)), int(m.group(2))
            if not -1 <= player < n:
                raise refuse(f"history item {i + 1}: player {player} is not -1 (chance) or a "
                             f"seat 0..{n - 1}")
            top = g.max_chance_outcomes if player == -1 else g.num_actions
            if not 0 <= action < top:
                raise refuse(f"history item {i + 1}: action {action} is outside 0..{top - 1}")
            history.append((player, action))
        if _COUNT.fullmatch(values["move_number"]) is None:
            raise refuse(f"move_number: {_clip(values['move_number'])} is not a count")
        if int(values["move_number"]) != len(history):
            raise refuse(f"move_number: {int(values['move_number'])}, but the history has "
                         f"{len(history)} actions")
        try:
            start = _parse_start(g, values["start"])
        except (ValueError, KeyError, IndexError) as e:
            raise refuse(f"start: {_shorten(str(e))}") from None
        state = OpenSpielState(self, _Core(start.clone(), start))
        for i, (player, action) in enumerate(history):
            to_move = state.current_player()
            if to_move != player:
                raise refuse(f"history item {i + 1}: {player}:{action}, but "
                             f"{_to_move(to_move)}")
            try:
                state.apply_action(action)
            except OpenSpielIllegalActionError as e:
                raise refuse(f"history item {i + 1}: {_shorten(str(e))}") from None
        if str(state) != values["position"]:
            raise refuse("position: not the position the history leads to from start")
        return state

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> Any:
        """The default observation (``iig_obs_type`` None, or public and private information
        without perfect recall) or information-state strings (``perfect_recall``); None for
        the other kinds (no factored observations)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall
                                    and iig_obs_type.private_info
                                    == pyspiel.PrivateInfoType.SINGLE_PLAYER):
            return _Observer(self, params or {})
        if iig_obs_type.perfect_recall:
            if params:
                raise ValueError(f"{self.short_name}: information states take no parameters, "
                                 f"got {params}")
            return _InfoStateObserver()
        return None

    # texts and tensors (game-specific)
    def observer_params(self, params: dict[str, Any]) -> dict[str, Any]:
        if {k for k in params if k != "name"}:
            raise ValueError(f"{self.short_name}: observations take no parameters, got {params}")
        return {}

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        raise NotImplementedError

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        raise NotImplementedError

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        raise NotImplementedError

    @classmethod
    def chance_receiver(cls, engine: Any) -> int | None:
        """At a chance node: the one seat that sees the outcome (the engine's
        ``chance_visible_to``), or None when all do."""
        seen = chance_observers(engine)
        return seen[0] if seen is not None and len(seen) == 1 else None

    @classmethod
    def decision_token(cls, engine: Any, action: int) -> str:
        """What every seat sees of a decision (applied next in ``engine``)."""
        return engine.game.action_to_string(action)

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """A line consistent with what ``player`` has seen of ``core``'s: ``(start, engine,
        changed)``, the start position, the engine state it leads to and the new outcome of
        each chance step (by index in ``steps``) whose outcome was redrawn; every other step
        is kept. Nothing of the true hidden outcomes is left in them."""
        raise NotImplementedError


class TaluvaOpenSpielGame(_GameBase):
    """``python_taluva``: Taluva (docs/rules.md) with the options of docs/engine.md.

    Facts: 2-4 players; ``num_distinct_actions`` = the engine's ``14 H`` (``H`` hexes of the
    board of ``board_radius``); 25 chance outcomes (tile types); ``max_game_length`` = 2 per
    tile in play (place, build); perfect information unless ``tile_preview``.
    """

    engine_name = "taluva"
    short_name = TALUVA
    long_name = "Taluva (taluva-ai engine)"

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return _taluva_defaults()

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        return bool(engine_game.rules.tile_preview)

    def max_decisions(self) -> int:
        return 2 * int(self.engine_game.rules.deck_size)

    def max_chance_nodes_in_history(self) -> int:
        return int(self.engine_game.rules.deck_size)

    def observer_params(self, params: dict[str, Any]) -> dict[str, Any]:
        from taluva_ai.games.taluva.encoding import DEFAULT_VIEW_RADIUS

        params = {k: v for k, v in params.items() if k != "name"}  # from a "name(k=v)" string
        unknown = sorted(set(params) - {"view_radius"})
        if unknown:
            raise ValueError(f"{TALUVA}: unknown observation parameter(s) {', '.join(unknown)}; "
                             "known: view_radius")
        r = params.get("view_radius", DEFAULT_VIEW_RADIUS)
        if not isinstance(r, int) or isinstance(r, bool) or not 1 <= r <= 40:
            raise ValueError(f"{TALUVA}: view_radius must be an integer in 1..40, got {r!r}")
        return {"view_radius": r}

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        from taluva_ai.games.taluva.encoding import num_planes

        side = 2 * params["view_radius"] + 1
        return (num_planes(self.engine_game.num_players), side, side)

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        from taluva_ai.games.taluva.encoding import encode

        return encode(engine, player, view_radius=params["view_radius"])[0]

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        from taluva_ai.games.taluva.tiles import tile_name

        lines = [f"seat {player} | {engine.summary()}"]
        if engine.game.rules.tile_preview:
            held = engine.observation(player)["hands"][player]
            lines.append(f"seat {player} holds {tile_name(held) if held >= 0 else '-'}")
        lines.append(engine.to_text(legend=False).rstrip("\n"))
        return "\n".join(lines)

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        from taluva_ai.games.taluva.actions import Action, ActionKind

        return str(Action(ActionKind.DRAW, tile=int(outcome)))

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """Taluva: what ``player`` has not seen is the undrawn tiles' order and, with
        ``tile_preview``, the tile each other seat holds (not yet in play). Those held tiles
        and the undrawn tiles are dealt again (the engine's ``resample``); a held tile drawn
        within the line changes its draw there (and its place in the deck's drawn part); the
        start's deck is the new deck, so that every draw of the line finds its tile next."""
        from taluva_ai.games.taluva.game import TaluvaState
        from taluva_ai.games.taluva.state import M_BOTTOM, M_DRAWN, M_PLACED, P_HAND, Step
        from taluva_ai.games.taluva.tiles import NUM_TILES

        engine, start = core.engine, core.start
        drawn = int(engine.meta[M_DRAWN])
        end = NUM_TILES - int(engine.meta[M_BOTTOM])
        first = int(start.meta[M_DRAWN])  # deck index of the line's first draw
        others = []  # the seats whose held tile `player` has not seen (as the engine's resample)
        if engine.game.rules.tile_preview:
            in_play = engine.current_player if engine.step in (Step.TILE, Step.BUILD) else None
            others = [q for q in range(engine.num_players)
                      if q != player and q != in_play and engine.players[q, P_HAND] >= 0]
        # the line's draw of each such held tile: the seat's last draw (None: held since start)
        last_draw: dict[int, tuple[int, int]] = {}
        k = 0
        for i, s in enumerate(steps):
            if s.player == -1:
                if isinstance(s.token, tuple):
                    last_draw[s.token[0]] = (i, first + k)
                k += 1
        pool = np.concatenate([engine.deck[drawn:end],
                               engine.players[others, P_HAND].astype(np.int8)])
        pool = rng.permutation(np.sort(pool))  # sorted first: depends only on what is known
        out = TaluvaState(engine.game, engine.cells.copy(), engine.players.copy(),
                          engine.deck.copy(), engine.meta.copy())
        new_start = TaluvaState(start.game, start.cells.copy(), start.players.copy(),
                                start.deck.copy(), start.meta.copy())
        changed = {}
        placed = int(start.meta[M_PLACED])
        region = [int(t) for t in start.deck[placed:first]]
        redealt = False
        for j, q in enumerate(others):
            tile = pool[j]
            out.players[q, P_HAND] = tile
            if q in last_draw:
                i, d = last_draw[q]
                out.deck[d] = tile
                changed[i] = int(tile)
            else:  # held since the start: its draw is among the start's drawn, unplaced tiles
                true = int(start.players[q, P_HAND])
                new_start.players[q, P_HAND] = tile
                if true in region:
                    region.remove(true)
                else:  # pragma: no cover - a start whose drawn tiles are not placed in order
                    k = int(np.flatnonzero(new_start.deck[:first] == true)[-1])
                    new_start.deck[k] = tile
                    continue
                region.append(int(tile))
                redealt = True
        if redealt:  # in an order that says nothing of which seat holds which tile
            new_start.deck[placed:first] = sorted(region)
        out.deck[drawn:end] = pool[len(others):]
        new_start.deck[first:] = out.deck[first:]
        out.deck[:first] = new_start.deck[:first]
        return new_start, out, changed

    @classmethod
    def decision_token(cls, engine: Any, action: int) -> str:
        text = engine.game.action_to_string(action)
        if engine.tile >= 0:  # the tile placed is public (with tile_preview it was hidden)
            from taluva_ai.games.taluva.tiles import tile_name

            return f"{tile_name(engine.tile)}:{text}"
        return text


class ThurnUndTaxisOpenSpielGame(_GameBase):
    """``python_thurn_und_taxis``: Thurn und Taxis (docs/thurn_und_taxis.md).

    Facts: 2-4 players; 327 distinct actions; 22 chance outcomes (the city of a card leaving the
    supply); imperfect information (hands and the supply are hidden); ``max_game_length`` the
    engine's bound on actions (``6 + 100 x max_rounds x players``).
    """

    engine_name = "thurn_und_taxis"
    short_name = THURN_UND_TAXIS
    long_name = "Thurn und Taxis (taluva-ai engine)"

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return _tnt_defaults()

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        return True

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        return tuple(self.engine_game.observation_tensor_shape)

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        return engine.observation_tensor(player)

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        parts = []
        for key, v in engine.observation(player).items():
            if isinstance(v, np.ndarray):
                rows = (v.reshape(-1, v.shape[-1]) if v.ndim > 1 else v[None]).tolist()
                v = "/".join(",".join(map(str, row)) for row in rows)
            parts.append(f"{key}={v}")
        return " ".join(parts)

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        from taluva_ai.games.thurn_und_taxis.actions import chance_to_string

        return chance_to_string(outcome)

    #: Deals tried by :meth:`resample_line` before it gives up.
    RESAMPLE_TRIES = 1000

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """Thurn und Taxis: what ``player`` has not seen is the city of each card dealt to
        another hand from the supply (and of the other hands' unknown cards at the start).
        A deal of those (:func:`_tnt_deal`) respects the cards later seen leaving those hands
        and the make-up of each reshuffled supply; the line is then replayed from its start
        with the new deal, and a deal under which the line does not replay exactly (another
        hand would have changed what was forced: a surplus discard the engine makes by itself
        when only one card may go) is drawn again.

        Raises:
            RuntimeError: no deal replayed the line in :attr:`RESAMPLE_TRIES` tries.
        """
        from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisState
        from taluva_ai.games.thurn_und_taxis.state import L_DISCARD, L_HAND, L_KNOWN, L_SUPPLY

        facts = _tnt_facts(core, steps)
        piles = facts[4]

        def same_pile(engine: Any, i: int) -> bool:  # what the engine discarded by itself
            return bool(np.array_equal(engine.cards[L_DISCARD], piles[i]))

        start = core.start
        n = start.num_players
        start_unknown, supplies = facts[0], facts[1]
        unseen = supplies[0] + sum(start_unknown[q] for q in range(n) if q != player)
        for _ in range(cls.RESAMPLE_TRIES):
            changed, dealt = _tnt_deal(facts, player, n, rng)
            cards, route, houses, players, meta = start._copy_arrays()
            # a seed of its own: the true one, with the public line, would replay the true deal
            new_start = ThurnUndTaxisState(start.game, cards, route, houses, players, meta,
                                           seed=int(rng.integers(2**62)))
            c = new_start.cards
            for q in range(n):
                if q != player:
                    c[L_HAND + q] = c[L_KNOWN + q] + dealt[q]
            c[L_SUPPLY] = unseen - dealt.sum(axis=0)
            # before the first unseen card of the line (when none is held at the start) the
            # line is the true one
            trusted = 0 if dealt.any() else min(changed, default=len(steps))
            engine = _replay_line(new_start, steps, changed, trusted, same_pile)
            if engine is not None:
                return new_start, engine, changed
        raise RuntimeError(f"resample_from_infostate: no deal of the unseen cards replayed the "
                           f"line in {cls.RESAMPLE_TRIES} tries")


def _replay_line(start: Any, steps: list[_Step], changed: dict[int, int], trusted: int = 0,
                 check: Any = None) -> Any:
    """The engine state ``steps`` lead to from ``start`` with the outcomes of ``changed``, or
    None when the line does not replay (a step by another seat than the one to move, an
    illegal action, or ``check(engine, i)`` false after step ``i``). The first ``trusted``
    steps are known to replay (unchecked)."""
    engine = start.clone()
    engine.record_history = False
    for s in steps[:trusted]:
        engine.apply_unchecked(s.action)
    for i, s in enumerate(steps[trusted:], trusted):
        if engine.current_player != s.player:
            return None
        try:
            engine.apply(changed.get(i, s.action))
        except IllegalActionError:
            return None
        if check is not None and not check(engine, i):
            return None
    return engine


def _tnt_deal(facts: tuple, player: int, n: int, rng: np.random.Generator
              ) -> tuple[dict[int, int], np.ndarray]:
    """One random deal of what ``player`` has not seen of a Thurn und Taxis line
    (:func:`_tnt_facts`): ``(changed, dealt)``, the city of each card dealt to another hand
    within the line (by step index) and the unknown cards of each other hand at the start.

    Each card another seat played or discarded while none of its known cards was of that city
    came from one of its unseen draws before: tied to one at random among those whose
    stretch (the supply between two reshuffles) still holds that city. The other unseen draws
    of a stretch get, in random order, the cities of that stretch's supply that ``player``
    did not see drawn; what is left of the last stretch is the supply now."""
    start_unknown, supplies, draws, leaves, _ = facts
    cities = len(supplies[0])
    pools = [s.copy() for s in supplies]
    slots: list[tuple[int, int, int]] = []  # (step index, -1 at the start; seat; stretch)
    for q in range(n):
        if q != player:
            pools[0] += start_unknown[q]
            slots += [(-1, q, 0)] * int(start_unknown[q].sum())
    for i, to, city, stretch in draws:
        if to == -1 or to == player:
            pools[stretch][city] -= 1
        else:
            slots.append((i, to, stretch))
    city_of: list[int] = [-1] * len(slots)
    # the unseen draws of one seat and stretch made before a leave are interchangeable for every
    # later leave, so the search branches on the stretch only
    open_slots: dict[tuple[int, int], list[int]] = {}
    for k, (_, q, stretch) in enumerate(slots):
        open_slots.setdefault((q, stretch), []).append(k)
    todo = [(i, q, c) for i, q, c in leaves if q != player]
    cap = pools
    # depth-first over the leaves in order: frames[t] = [stretches still to try, choice made]
    frames: list[list[Any]] = []
    t = 0
    while t < len(todo):
        i, q, c = todo[t]
        if len(frames) == t:
            stretches = [e for e in range(len(cap)) if cap[e][c] > 0 and any(
                slots[k][0] <= i for k in open_slots.get((q, e), ()))]
            rng.shuffle(stretches)
            frames.append([stretches, None])
        frame = frames[t]
        if frame[1] is not None:  # back here: undo the choice that led nowhere
            e, k = frame[1]
            frame[1] = None
            city_of[k] = -1
            cap[e][c] += 1
            open_slots[(q, e)].append(k)
        if not frame[0]:
            frames.pop()
            t -= 1
            if t < 0:  # the true deal is one answer, so this cannot happen
                raise RuntimeError("resample_from_infostate: no deal fits the cards seen")
            continue
        e = frame[0].pop()
        ready = [k for k in open_slots[(q, e)] if slots[k][0] <= i]
        k = ready[int(rng.integers(len(ready)))]
        open_slots[(q, e)].remove(k)
        cap[e][c] -= 1
        city_of[k] = c
        frame[1] = (e, k)
        t += 1
    tied = [c >= 0 for c in city_of]
    for e, left in enumerate(cap):
        free = [k for k in range(len(slots)) if not tied[k] and slots[k][2] == e]
        cards = rng.permutation(np.repeat(np.arange(cities), left))
        for k, city in zip(free, cards[:len(free)], strict=True):
            city_of[k] = int(city)
    changed = {}
    dealt = np.zeros((n, cities), np.int64)
    for k, (i, q, _) in enumerate(slots):
        if i >= 0:
            changed[i] = city_of[k]
        else:
            dealt[q, city_of[k]] += 1
    return changed, dealt


def _tnt_facts(core: _Core, steps: list[_Step]) -> tuple:
    """What a Thurn und Taxis resample needs of the line, whoever asks (cached on its last
    step): ``(start_unknown, supplies, draws, leaves, piles)``: the unknown cards of each hand
    at the start (``int64[n, 22]``, hand less known cards), the supply at the start and after
    each reshuffle, each card dealt from the supply ``(step index, seat of the hand or -1 for the
    display, city, reshuffles before it)``, each unknown card that left a hand ``(step
    index, seat, city)``, and the discard pile after each step (``int8[steps, 22]``). Found by
    replaying the line from its start."""
    from taluva_ai.games.thurn_und_taxis.state import (
        L_DISCARD,
        L_HAND,
        L_KNOWN,
        L_SUPPLY,
        M_CHANCE_TO,
        M_PLAYER,
        M_RESHUFFLES,
        TO_HAND,
    )

    last = steps[-1] if steps else None
    if last is not None and last.facts is not None:
        return last.facts
    eng = core.start.clone()
    eng.record_history = False
    n = eng.num_players

    def unknown() -> np.ndarray:
        c = eng.cards.astype(np.int64)
        return c[L_HAND:L_HAND + n] - c[L_KNOWN:L_KNOWN + n]

    before = unknown()
    start_unknown = before.copy()
    supplies = [eng.cards[L_SUPPLY].astype(np.int64)]
    draws = []
    leaves = []
    piles = np.empty((len(steps), eng.cards.shape[1]), eng.cards.dtype)
    for i, s in enumerate(steps):
        reshuffles = int(eng.meta[M_RESHUFFLES])
        if s.player == -1:
            to = int(eng.meta[M_PLAYER]) if eng.meta[M_CHANCE_TO] == TO_HAND else -1
            draws.append((i, to, s.action, len(supplies) - 1))
            if to >= 0:
                before[to, s.action] += 1
        eng.apply_unchecked(s.action)
        after = unknown()
        for q, c in zip(*np.nonzero(before > after), strict=True):
            leaves += [(i, int(q), int(c))] * int(before[q, c] - after[q, c])
        if int(eng.meta[M_RESHUFFLES]) != reshuffles:
            supplies.append(eng.cards[L_SUPPLY].astype(np.int64))
        before = after
        piles[i] = eng.cards[L_DISCARD]
    facts = (start_unknown, supplies, draws, leaves, piles)
    if last is not None:
        last.facts = facts
    return facts


def _register() -> None:
    for cls in (TaluvaOpenSpielGame, ThurnUndTaxisOpenSpielGame):
        _SPECS[cls.engine_name] = cls
        pyspiel.register_game(cls.game_type(cls is ThurnUndTaxisOpenSpielGame), cls)


_register()
