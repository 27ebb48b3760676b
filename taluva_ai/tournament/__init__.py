"""Matches and tournaments between agents, for any game of :mod:`taluva_ai.protocol`.

:func:`play_game` plays one game (and writes its record); :func:`run_tournament` plays a
round robin or a gauntlet with duplicate deals (every deal once per seat rotation), in
parallel, resumably, with per-move time limits, forfeits and an optional SPRT, then rates the
agents (:mod:`taluva_ai.ratings`) and writes the reports (:mod:`taluva_ai.reports`). The run
directory is documented in docs/tournaments.md.

Seeds (all derived with :class:`numpy.random.SeedSequence`, so every game is reproducible on
its own):

- a game's seed shuffles the deck (``game.new_initial_state(seed)``; chance nodes are resolved
  by ``state.draw()``, so one seed gives one tile sequence whatever the players do, as long as
  the game lasts) and, through ``SeedSequence(seed).spawn(num_players)``, seeds the agent of
  each seat (``agent.reset(seed)``);
- in a tournament, deal ``d`` has seed ``SeedSequence([seed, d]).generate_state(1)[0]``; every
  group of agents plays the same deals, each deal once per seat rotation;
- or the deals come from a deal file (:func:`read_deals`, ``--deals FILE``: one deal a line,
  its seed and, for a game with a deck, its explicit draw order), so that two runs play the
  same deals whatever their seeds; every run writes the deals it played to
  ``out_dir/deals.jsonl``, a deal file itself.

The modules, from the bottom up (each imports only from those before it):

- :mod:`~taluva_ai.tournament.play`: one game: seeds, time limits, forfeits, its result.
- :mod:`~taluva_ai.tournament.agents`: agents by spec (the registry, looked up by name),
  their time budgets and the files they play with.
- :mod:`~taluva_ai.tournament.deals`: deals and deal files.
- :mod:`~taluva_ai.tournament.schedules`: the games of a tournament, computed on demand.
- :mod:`~taluva_ai.tournament.settings`: tournament files (TOML) and ``config.json``.
- :mod:`~taluva_ai.tournament.rundir`: the files of a run directory (over
  :mod:`taluva_ai.runfiles`: atomic writes, checksums, the run lock, SIGTERM as Ctrl-C).
- :mod:`~taluva_ai.tournament.sprt_watch`: the SPRT, watched while the games are played.
- :mod:`~taluva_ai.tournament.exports`: the table of a run so far, PGN.
- :mod:`~taluva_ai.tournament.workers`: the games, played in worker processes.
- :mod:`~taluva_ai.tournament.runner`: :func:`run_tournament`, :func:`resume_tournament`.

The package sits above the games and the agents (DESIGN.md, layers): it reaches an agent only
through its name, never by a static import.
"""

from __future__ import annotations

from taluva_ai.tournament.agents import check_fits, make_agent, pinned_files, time_budget
from taluva_ai.tournament.deals import (
    DEAL_KEYS,
    DEALS_FILE_MAX,
    Deal,
    deal_seed,
    deals_text,
    read_deals,
    seed_deals,
)
from taluva_ai.tournament.exports import export_pgn, interim_table, pgn_result, pgn_text
from taluva_ai.tournament.play import (
    DEFAULT_TIME_MARGIN,
    FORFEIT,
    Forfeit,
    GameResult,
    MoveTimeout,
    agent_seeds,
    play_game,
)
from taluva_ai.tournament.rundir import (
    CONFIG_FILE,
    DEALS_FILE,
    GAMES_DIR,
    LOG_FILE,
    PGN_FILE,
    TABLE_FILE,
    TIMING_FILE,
)
from taluva_ai.tournament.runner import resume_tournament, run_tournament
from taluva_ai.tournament.schedules import MAX_GAMES, Schedule, schedule
from taluva_ai.tournament.settings import (
    TOURNAMENT_FILE_KEYS,
    TOURNAMENT_FORMAT,
    read_config,
    read_tournament_file,
    tournament_config,
)

__all__ = [
    "CONFIG_FILE",
    "DEALS_FILE",
    "DEALS_FILE_MAX",
    "DEAL_KEYS",
    "DEFAULT_TIME_MARGIN",
    "FORFEIT",
    "GAMES_DIR",
    "LOG_FILE",
    "MAX_GAMES",
    "PGN_FILE",
    "TABLE_FILE",
    "TIMING_FILE",
    "TOURNAMENT_FILE_KEYS",
    "TOURNAMENT_FORMAT",
    "Deal",
    "Forfeit",
    "GameResult",
    "MoveTimeout",
    "Schedule",
    "agent_seeds",
    "check_fits",
    "deal_seed",
    "deals_text",
    "export_pgn",
    "interim_table",
    "make_agent",
    "pgn_result",
    "pgn_text",
    "pinned_files",
    "play_game",
    "read_config",
    "read_deals",
    "read_tournament_file",
    "resume_tournament",
    "run_tournament",
    "schedule",
    "seed_deals",
    "time_budget",
    "tournament_config",
]
