"""Taluva and Thurn und Taxis as OpenSpiel games (``pip install 'taluva-ai[openspiel]'``).

Importing this package registers two OpenSpiel Python games whose states delegate every rule to
this project's engines (:func:`taluva_ai.protocol.make_game`); nothing of the rules is written
twice::

    import pyspiel
    import taluva_ai.openspiel  # registers the games
    game = pyspiel.load_game("python_taluva(players=3,tiles_per_player=12)")
    tnt = pyspiel.load_game("python_thurn_und_taxis(players=2)")

``python_taluva`` takes every multiplayer rule option of docs/engine.md as a game parameter
(``players`` for ``num_players``; ``tiles_per_player=0`` for all 48 tiles); the solo variant
(one player, a score without a declared bound) is not offered. ``python_thurn_und_taxis`` takes
the options of docs/thurn_und_taxis.md (``players``, ``all_provinces_rule``,
``route_tile_fallback``, ``max_rounds``). An invalid value raises the engine's one-line
``RuleError`` / ``TnTRuleError``.

The facts declared (docs/openspiel.md): sequential, explicit stochastic chance (a tile drawn,
a card leaving the supply), terminal rewards, zero-sum returns in ``[-1, 1]``; information
perfect for Taluva and imperfect for Thurn und Taxis and for Taluva with ``tile_preview``.
Observation tensors are the project's encoders (Taluva: :func:`taluva_ai.encoding.encode`
planes ``[C, S, S]`` of a view of radius ``view_radius``, an observation parameter, default
13; Thurn und Taxis: ``float32[536]``). ``state.serialize()`` is text (the history, the move
number, the start and current position strings); ``game.deserialize_state`` replays and checks
it and never unpickles (:class:`SerializedStateError` for anything else).
``resample_from_infostate`` gives a state with a line of its own: only the sampled hidden cards
or tiles, in its history, strings and tensors. ``chance_outcomes()`` away from a chance node
raises ``pyspiel.SpielError``. OpenSpiel 2.0.2's C++ ``pyspiel.MCTSBot`` and
``pyspiel.ISMCTSBot`` crash on Python games: use the Python bots. An illegal action raises
:class:`OpenSpielIllegalActionError` (both a ``pyspiel.SpielError`` and the project's
``IllegalActionError``) with the project's message, and leaves the state as it was.

Interop: :class:`OpenSpielMCTSAgent` (the ``openspiel`` agent of the registry, OpenSpiel's
``MCTSBot`` with random rollouts) plays in ``taluva play`` / ``taluva tournament``;
:class:`AgentBot` lets any agent of this project play in OpenSpiel's ``evaluate_bots``.

The package: :mod:`.core` (names, parameters, a state's payload), :mod:`.game` (the games,
registered on import), :mod:`.state` (the state), :mod:`.serialization` (serialized states),
:mod:`.bots` (interop), :mod:`.playthroughs` (the golden playthroughs and the benchmark,
``python -m taluva_ai.openspiel``). Every public name is imported from here.
"""

from __future__ import annotations

try:
    import pyspiel  # noqa: F401 - checked first, with the remedy in one line
except ImportError:  # pragma: no cover - exercised by test_openspiel_missing
    raise ImportError("taluva_ai.openspiel needs OpenSpiel: pip install 'taluva-ai[openspiel]' "
                      "(the open_spiel package)") from None

from taluva_ai.openspiel.bots import AgentBot, OpenSpielMCTSAgent, OpenSpielMCTSConfig
from taluva_ai.openspiel.core import (
    TALUVA,
    THURN_UND_TAXIS,
    OpenSpielIllegalActionError,
    _steps,
    openspiel_game,
)
from taluva_ai.openspiel.game import TaluvaOpenSpielGame, ThurnUndTaxisOpenSpielGame
from taluva_ai.openspiel.playthroughs import PLAYTHROUGHS, bench, main, write_playthroughs
from taluva_ai.openspiel.serialization import (
    MAX_SERIALIZED_CHARS,
    SerializedStateError,
    deserialize_game_and_state,
    serialize_game_and_state,
)
from taluva_ai.openspiel.state import OpenSpielState

__all__ = ["MAX_SERIALIZED_CHARS", "PLAYTHROUGHS", "TALUVA", "THURN_UND_TAXIS", "AgentBot",
           "OpenSpielIllegalActionError", "OpenSpielMCTSAgent", "OpenSpielMCTSConfig",
           "OpenSpielState", "SerializedStateError", "TaluvaOpenSpielGame",
           "ThurnUndTaxisOpenSpielGame", "_steps", "bench", "deserialize_game_and_state", "main",
           "openspiel_game", "serialize_game_and_state", "write_playthroughs"]
