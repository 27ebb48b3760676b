"""The OpenSpiel state (:class:`OpenSpielState`, :mod:`taluva_ai.openspiel`): every rule
delegated to the engine state it holds; chance outcomes, actions, returns, observation and
information-state strings, and ``resample_from_infostate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from taluva_ai.errors import IllegalActionError
from taluva_ai.openspiel.core import (
    _SPECS,
    OpenSpielIllegalActionError,
    _Core,
    _line_text,
    _Replay,
    _state_text,
    _Step,
    _steps,
    _to_move,
)
from taluva_ai.protocol import CHANCE, TERMINAL

if TYPE_CHECKING:  # annotations only (the game module imports this one)
    from taluva_ai.openspiel.game import _GameBase


class OpenSpielState(pyspiel.State):
    """An OpenSpiel state over one engine state (:attr:`engine_state`)."""

    def __init__(self, game: _GameBase, core: _Core | None = None) -> None:
        super().__init__(game)
        self._core = core if core is not None else _Core(game._template.clone(), game._template)

    @property
    def engine_state(self) -> Any:
        """The engine state (live: apply actions through OpenSpiel, not on it)."""
        return self._core.engine

    def _spec(self) -> type[_GameBase]:
        return _SPECS[self._core.engine.game.name]

    def current_player(self) -> int:
        p = self._core.engine.current_player
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        return int(p)

    def _legal(self) -> np.ndarray:
        core = self._core
        ply = core.engine.ply
        if core.legal is None or core.legal[0] != ply:
            core.legal = (ply, core.engine.legal_actions())
        return core.legal[1]

    def _legal_actions(self, player: int) -> list[int]:
        return self._legal().tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``[(outcome, probability)]`` of the chance node (the engine's).

        Raises:
            pyspiel.SpielError: not a chance node (a decision or the end), as OpenSpiel's own
                games do.
        """
        engine = self._core.engine
        p = engine.current_player
        if p != CHANCE:
            raise pyspiel.SpielError(f"chance_outcomes(): not a chance node "
                                     f"({_to_move(self.current_player())})")
        return engine.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        core = self._core
        engine = core.engine
        if engine.__class__ is _Replay:  # a known line being recorded (_with_line)
            return
        spec = self._spec()
        a = int(action)
        chance = engine.current_player == CHANCE
        player = -1 if chance else int(engine.current_player)
        seat = spec.chance_receiver(engine) if chance else None
        token: Any = ""
        fast = False
        if not chance and not engine.is_terminal():
            legal = self._legal()
            i = int(np.searchsorted(legal, a))
            fast = i < legal.size and legal[i] == a
            token = spec.decision_token(engine, a) if fast else ""
        try:
            if fast:
                engine.apply_unchecked(a)  # a legal id of this very position
            else:
                engine.apply(a)
        except IllegalActionError as e:
            raise OpenSpielIllegalActionError(e.action, e.rule, str(e)) from e
        if chance:
            token = spec.chance_text(a) if seat is None else (seat, spec.chance_text(a))
        core.log = _Step(core.log, player, a, token)
        core.cache = None

    def _action_to_string(self, player: int, action: int) -> str:
        spec = self._spec()
        if player == pyspiel.PlayerId.CHANCE:
            return spec.chance_text(action)
        return self._core.engine.game.action_to_string(action)

    def is_terminal(self) -> bool:
        return self._core.engine.is_terminal()

    def returns(self) -> list[float]:
        return self._core.engine.returns().tolist()

    def __str__(self) -> str:
        """The engine's position string (the whole state, hidden information included)."""
        return self._core.engine.to_position_string()

    def serialize(self) -> str:
        """This state as text, for ``game.deserialize_state``: four lines, ``history=`` (the
        OpenSpiel history, ``player:action`` comma-separated, -1 for chance), ``move_number=``,
        ``start=`` (the engine's position string of the position the history starts from) and
        ``position=`` (the engine's position string now). No pickle."""
        return _state_text(self._core)

    def _cached(self, key: Any, make: Any) -> str:
        core = self._core
        if core.cache is None:
            core.cache = {}
        text = core.cache.get(key)
        if text is None:
            text = core.cache[key] = make()
        return text

    def observation_text(self, player: int) -> str:
        """The observation string of ``player`` (cached at this position)."""
        return self._cached(("obs", player),
                            lambda: self._spec().observation_text(self._core.engine, player))

    def information_state_text(self, player: int) -> str:
        """What ``player`` has seen: its seat, every action and chance outcome in order (an
        outcome seen by another seat only as ``?``; a Taluva placement with its tile), and with
        imperfect information its current observation string. Cached per position and seat;
        the line's part grows step by step from the last string asked for."""
        return self._cached(("info", player), lambda: self._information_state_text(player))

    def _information_state_text(self, player: int) -> str:
        text = f"seat {player}: " + _line_text(self._core.log, player)
        if self._spec().imperfect_rules(self._core.engine.game):
            text += "\n" + self.observation_text(player)
        return text

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state consistent with everything ``player_id`` has seen, with a line of its own:
        the chance outcomes hidden from that seat (cards dealt to other hands, other seats'
        held tiles) and the hidden order of what is left are drawn again at random (seeded
        from one draw of ``probability_sampler``), so the copy's ``history()``, every seat's
        information-state string, its observations and its position string hold the sampled
        cards or tiles, never the true ones, and its history replays from its start to it
        (``serialize`` / ``deserialize_state`` round-trip). The seat's own information state
        and observation are unchanged. A draw respects what the seat saw later (a card another
        seat played from its hand, the make-up of a reshuffled supply, a tile put in play); it
        is not weighted by how likely the other seats' moves made each deal. Python only
        (OpenSpiel's C++ algorithms do not call it).

        Raises:
            ValueError: ``player_id`` is not a seat.
        """
        core = self._core
        n = core.engine.num_players
        p = int(player_id)
        if not 0 <= p < n:
            raise ValueError(f"resample_from_infostate: player must be a seat 0..{n - 1}, "
                             f"got {player_id}")
        seed = int(float(probability_sampler()) * 2**32) % 2**32
        rng = np.random.default_rng(seed)
        steps = _steps(core.log)
        spec = self._spec()
        start, engine, changed = spec.resample_line(core, steps, p, rng)
        line = []
        for i, s in enumerate(steps):
            if i in changed:
                a = changed[i]
                line.append((s.player, a, (s.token[0], spec.chance_text(a))))
            else:
                line.append((s.player, s.action, s.token))
        return _with_line(self.get_game(), start, engine, line)


def _with_line(game: _GameBase, start: Any, engine: Any, line: list[tuple[int, int, Any]]
               ) -> OpenSpielState:
    """A state at ``engine`` whose OpenSpiel history is ``line`` (``(player, action, token)``
    from ``start``), recorded without playing it: the caller knows the line leads there."""
    replay = _Replay()
    out = OpenSpielState(game, _Core(replay, start))
    for player, action, _ in line:
        replay.current_player = player
        out.apply_action(action)
    log = None
    for player, action, token in line:
        log = _Step(log, player, action, token)
    out._core = _Core(engine, start, log)
    return out
