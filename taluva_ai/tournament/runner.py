"""Running a tournament in its run directory, and resuming it.

:func:`run_tournament` checks the settings, locks the run directory, keeps the games an
earlier run finished (their records checked by replaying them), plays the others (in
parallel, with an optional SPRT), then rates the agents (:mod:`taluva_ai.ratings`) and writes
the table, timing, PGN and reports (:mod:`taluva_ai.reports`). :func:`resume_tournament` does
so with the settings of a run directory's ``config.json``.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import os
import sys
from collections.abc import Container, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from taluva_ai.errors import RunConfigError
from taluva_ai.parallel import Backend
from taluva_ai.protocol import make_game
from taluva_ai.runfiles import (
    damaged,
    json_sha256,
    read_regular,
    run_lock,
    sha256_bytes,
    sha256_file,
    sigterm_as_interrupt,
    write_atomic,
)
from taluva_ai.tournament.agents import (
    _check_pins,
    _pins_ok,
    check_fits,
    make_agent,
    pinned_files,
    time_budget,
)
from taluva_ai.tournament.deals import (
    DEALS_FILE_MAX,
    Deal,
    _deal_of,
    deals_text,
    read_deals,
    seed_deals,
)
from taluva_ai.tournament.exports import _table_games, _timing, pgn_text
from taluva_ai.tournament.play import DEFAULT_TIME_MARGIN
from taluva_ai.tournament.rundir import (
    CONFIG_FILE,
    DEALS_FILE,
    GAMES_DIR,
    LOG_FILE,
    PGN_FILE,
    TABLE_FILE,
    TIMING_FILE,
    _append,
    _kept_outcome,
    _log_entry,
    _read_log,
    _RecordPaths,
    _records_digest,
    _task_meta,
)
from taluva_ai.tournament.schedules import MAX_GAMES, _GameTask, schedule
from taluva_ai.tournament.settings import TOURNAMENT_FORMAT, read_config, tournament_config
from taluva_ai.tournament.sprt_watch import _SprtWatch
from taluva_ai.tournament.workers import _play_stream, _process_game, _warm_up


def run_tournament(
    agent_specs: Sequence[str],
    games: int,
    out_dir: str | Path,
    players_per_game: int = 2,
    concurrency: int = 1,
    seed: int = 0,
    rules: dict[str, Any] | None = None,
    game_name: str = "taluva",
    bootstrap: int = 0,
    progress: bool = True,
    *,
    gauntlet: str | None = None,
    sprt: Any = None,
    time_margin: float = DEFAULT_TIME_MARGIN,
    plots: bool = True,
    backend: Backend | None = None,
    defer: Sequence[str] = (),
    deals: str | Path | Sequence[Deal | dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Round-robin or gauntlet tournament: every group of ``players_per_game`` agents (with a
    gauntlet, every group that holds the candidate) plays ``games`` games, on shared deals,
    each deal once per seat rotation (``games`` rounded up to a multiple of the rotations, see
    :func:`schedule`).

    Writes, under ``out_dir`` (docs/tournaments.md): ``config.json`` (the settings),
    ``games/<id>.jsonl`` (every finished game's record), ``results.jsonl`` (one line per
    finished game, appended as it ends: result, forfeit, time used), ``results.json`` (the
    table of :func:`taluva_ai.ratings.tournament_table`), ``timing.json`` (time used per
    agent), ``summary.md`` and, with ``plots``, ``ratings.png`` and ``scores.png``
    (:mod:`taluva_ai.reports`), ``deals.jsonl`` (the deals, a deal file: :func:`read_deals`)
    and, for 2-player games, ``games.pgn`` (the counted games' results for BayesElo and Ordo:
    :func:`pgn_text`).

    Resumable: run again with the same arguments (or :func:`resume_tournament`), it keeps the
    finished games and plays the rest; no game is played or counted twice. Every kept record
    is checked by replaying it (:func:`taluva_ai.records.replay_record`, with the deal's
    draws); one that fails is named in a warning line on stderr and its game is played again.
    A forfeited game has no record; its line in ``results.jsonl`` keeps it. The table is
    computed from the results in game-id order, so it depends neither on ``concurrency`` nor
    on the order in which games finish: the same seed and settings give identical records and
    ``results.json`` (time forfeits aside: they measure the machine, as ``timing.json`` and
    the time fields of ``results.jsonl`` do).

    Agents: a spec with ``time=S`` (e.g. ``mcts:time=0.5``) declares a budget of ``S`` seconds
    per move; a move that takes longer than ``S + time_margin`` forfeits the game, as does an
    exception raised by an agent or an illegal action: the game is recorded as lost by that
    seat (``end_reason`` ``"forfeit"``, with the reason) and the tournament goes on.

    SPRT: with ``sprt`` (two agents, 2 players per game), deals are counted in order and the
    test (:class:`taluva_ai.sprt.SPRT`) is updated after each complete pair (the progress bar
    shows the LLR with its bounds, the games counted and the candidate's wins, draws and
    losses); the tournament stops as soon as the LLR leaves its bounds (``games`` is then the
    maximum). The baseline
    is the first agent and the candidate the second (with a gauntlet, the candidate is the
    gauntlet agent). Games finished in parallel after the decision keep their records but are
    not counted.

    Args:
        agent_specs: distinct agent specs (``"random"``, ``"greedy:epsilon=0.1"``,
            ``"module:Class"``); at least ``players_per_game``. The first is the Elo anchor.
        games: games per group (1 .. :data:`MAX_GAMES`; the schedule is computed game by
            game, so a long run allocates nothing for the games not yet played).
        out_dir: the run directory.
        players_per_game: 2, 3 or 4 (sets the game's ``num_players``).
        concurrency: worker processes (1 plays in this process); with a Ray ``backend``, the
            games run at a time (as Ray tasks).
        seed: tournament seed (deals and agent seeds derive from it).
        rules: the game's options other than ``num_players`` (e.g. ``{"ranked": True}``).
        game_name: registered game name.
        bootstrap: bootstrap resamples for ``elo_ci95_bootstrap`` (0: none; the Wald
            intervals are always given).
        progress: show a tqdm progress bar (on stderr).
        gauntlet: the candidate's spec for a gauntlet (added to ``agent_specs`` when not in
            it), or None for a round robin.
        sprt: an :class:`taluva_ai.sprt.SPRT` (or its ``to_json()`` dict), or None.
        time_margin: seconds a move may exceed its agent's ``time=`` budget (>= 0).
        plots: write ``ratings.png`` and ``scores.png`` (needs matplotlib).
        backend: where the games are played (:mod:`taluva_ai.parallel`): None or a
            :class:`~taluva_ai.parallel.LocalBackend` for this machine, a
            :class:`~taluva_ai.parallel.RayBackend` for Ray tasks (a task whose worker dies
            is retried; its game is counted once). The records and ``results.json`` do not
            depend on it.
        defer: agent specs whose games are played after all the others (play order only,
            e.g. to get the cheap pairs of a long ladder first; each is one of the agents,
            compared by name and parameters whatever their order or spacing).
            The records and ``results.json`` do not depend on it, and it is not part of the
            settings a resume must repeat.
        deals: a deal file (:func:`read_deals`; its first ``ceil(games / players_per_game)``
            deals are played, so two runs with the same file play the same tile orders
            whatever their ``seed``) or the deals themselves; None: the deals of ``seed``
            (:func:`deal_seed`). The SHA-256 of the deals played goes to ``config.json``
            (``deals_sha256``) and the deals to ``out_dir/deals.jsonl``, which a resume reads.

    On KeyboardInterrupt (SIGINT, and SIGTERM, which is turned into one while the tournament
    runs) the worker processes are stopped and the games in progress discarded; finished
    games are kept for the resume. The run directory is locked (``out_dir/.lock``) while the
    tournament runs: a second tournament on the same directory fails at once.

    Returns:
        The results table (also written to ``out_dir/results.json``).

    Raises:
        ValueError: bad arguments (unknown agent, duplicate specs, too few agents, bad rules,
            rules whose ``num_players`` differs from ``players_per_game``, ``games`` outside
            1..MAX_GAMES, a negative ``bootstrap`` or ``time_margin``, an SPRT without exactly
            two agents and 2 players per game, an empty ``out_dir``, a bad deal file or too
            few deals).
        RunConfigError: ``out_dir`` holds a tournament made with other settings, is in use by
            another tournament, or holds something else where the tournament's files go
            (e.g. ``out_dir/games`` is a file, ``config.json`` is unreadable); or a file an
            agent plays with (an ``az`` checkpoint) differs from the one pinned in
            ``config.json`` (``agent_files``: when the run started, or in any game since),
            the message naming the file.
        OSError: a file of the run directory cannot be written (e.g. no permission).
    """
    from taluva_ai.sprt import SPRT, parse_sprt

    specs = [str(s).strip() for s in agent_specs]
    if gauntlet is not None:
        gauntlet = str(gauntlet).strip()
        if not gauntlet:
            raise ValueError("gauntlet: empty agent spec")
        if gauntlet not in specs:
            specs.append(gauntlet)
    if any(not s for s in specs):
        raise ValueError(f"agent specs must not be empty, got {list(agent_specs)}")
    if len(set(specs)) != len(specs):
        raise ValueError(f"agent specs must be distinct, got {specs}")
    if players_per_game not in (2, 3, 4):
        raise ValueError(f"players_per_game must be 2, 3 or 4, got {players_per_game}")
    if len(specs) < players_per_game:
        raise ValueError(f"{len(specs)} agents for games of {players_per_game} players")
    if not isinstance(games, int) or isinstance(games, bool) or not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be an integer in 1..{MAX_GAMES} (per group), got "
                         f"{games!r}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be an integer >= 0, got {bootstrap!r}")
    if isinstance(time_margin, bool) or not isinstance(time_margin, (int, float)) or not (
        math.isfinite(time_margin) and time_margin >= 0
    ):
        raise ValueError(f"time_margin must be a number of seconds >= 0, got {time_margin!r}")
    if str(out_dir) == "":
        raise ValueError("out_dir: empty path")
    if isinstance(sprt, dict):
        sprt = parse_sprt([f"{k}={v}" for k, v in sprt.items()])
    if sprt is not None:
        if not isinstance(sprt, SPRT):
            raise ValueError(f"sprt must be an SPRT or its settings dict, got {sprt!r}")
        if len(specs) != 2 or players_per_game != 2:
            raise ValueError("an SPRT compares two agents in 2-player games, got "
                             f"{len(specs)} agents and {players_per_game} players per game")
    made = []
    for s in specs:
        made.append(make_agent(s))  # raises ValueError for an unknown agent or bad parameter
        time_budget(s)  # and for a bad time=
    if defer is None:
        defer = ()
    if isinstance(defer, str):
        raise ValueError(f"defer must be a list of agent specs, got the string {defer!r}")
    match = importlib.import_module("taluva_ai.agents").match_specs
    try:
        found, unknown = match([str(d) for d in defer], specs)
    except ValueError as e:
        raise ValueError(f"defer: {e}") from None
    deferred = set(found)
    if unknown:
        raise ValueError(f"defer: {', '.join(repr(u) for u in unknown)} is not one of the "
                         f"agents {specs}")
    opts = dict(rules or {})
    if opts.get("num_players", players_per_game) != players_per_game:
        raise ValueError(f"rules: num_players={opts['num_players']!r} differs from "
                         f"players_per_game={players_per_game}; give it once")
    opts["num_players"] = players_per_game
    game = make_game(game_name, **opts)
    if game.num_players != players_per_game:  # the solo variant has one player
        raise ValueError(f"these rules make a game of {game.num_players} player(s), not "
                         f"{players_per_game}; solo agents are compared by the solo ladder "
                         "(docs/solo.md)")
    for agent in made:
        check_fits(agent, game)
    full_rules = game.options()
    need = math.ceil(games / players_per_game)
    used: list[Deal] | None = None
    if deals is not None:
        if isinstance(deals, (str, Path)):
            try:
                given = read_deals(deals, game)
            except OSError as e:
                raise ValueError(f"deals: {deals}: {e.strerror or e}") from None
            where = str(deals)
        else:
            given = [_deal_of(d, f"deals[{i}]", i, game) for i, d in enumerate(deals)]
            where = "the deals given"
        if len(given) < need:
            raise ValueError(f"deals: {where} holds {len(given)} deals; {games} games per "
                             f"group of {players_per_game} players need {need}")
        used = given[:need]
    digest = None if used is None else sha256_bytes(deals_text(used))

    out = Path(out_dir)
    config = tournament_config(specs, games, players_per_game, seed, game_name, full_rules,
                               gauntlet, None if sprt is None else sprt.to_json(),
                               float(time_margin), digest,
                               {s: pinned_files(a) for s, a in zip(specs, made, strict=True)})
    if out.exists() and not out.is_dir():
        raise RunConfigError(f"{out}: not a directory; give a directory as the run directory")
    out.mkdir(parents=True, exist_ok=True)
    run = _Run(out, config, specs, concurrency, bootstrap, progress, plots, sprt, backend,
               deferred, used if used is not None
               else seed_deals(game, seed, need) if need <= DEALS_FILE_MAX else None)
    with run_lock(out), sigterm_as_interrupt():
        return run.run()


def resume_tournament(
    out_dir: str | Path, concurrency: int = 1, bootstrap: int = 0, progress: bool = True,
    plots: bool = True, backend: Backend | None = None, defer: Sequence[str] = (),
) -> dict[str, Any]:
    """Finish (or recompute) the tournament of ``out_dir`` with the settings of its
    ``config.json``: the games already finished are kept, the others played (``defer``: as
    in :func:`run_tournament`).

    Raises:
        RunConfigError: ``out_dir`` holds no readable tournament ``config.json`` of this
            format.
        ValueError, OSError: as :func:`run_tournament`.
    """
    path = Path(out_dir) / CONFIG_FILE
    cfg = read_config(path)
    if cfg.get("format") != TOURNAMENT_FORMAT:
        raise RunConfigError(f"{path}: format {cfg.get('format')!r}, not "
                             f"{TOURNAMENT_FORMAT!r}; this version cannot resume it")
    keys = ("game", "rules", "agents", "gauntlet", "games_per_group", "players_per_game",
            "seed", "sprt", "time_margin_s")
    missing = [k for k in keys if k not in cfg]
    if missing or not isinstance(cfg["rules"], dict):
        raise RunConfigError(f"{path}: not a tournament's settings (missing: "
                             f"{', '.join(missing) or 'rules'})")
    rules = {k: v for k, v in cfg["rules"].items() if k != "num_players"}
    deals = None
    if cfg.get("deals_sha256") is not None:  # a run from a deal file: its deals.jsonl
        deals_path = Path(out_dir) / DEALS_FILE
        try:
            text = read_regular(deals_path)
        except OSError as e:
            raise RunConfigError(f"{deals_path}: unreadable ({e.strerror or e}); restore the "
                                 "deal file the run was started with (--deals)") from None
        if sha256_bytes(text) != cfg["deals_sha256"]:
            raise RunConfigError(f"{deals_path}: not the deals of this run (its SHA-256 differs "
                                 f"from {path}'s deals_sha256); restore the deal file the run "
                                 "was started with (--deals)")
        deals = deals_path
    return run_tournament(
        cfg["agents"], cfg["games_per_group"], out_dir, cfg["players_per_game"],
        concurrency=concurrency, seed=cfg["seed"], rules=rules, game_name=cfg["game"],
        bootstrap=bootstrap, progress=progress, gauntlet=cfg["gauntlet"], sprt=cfg["sprt"],
        time_margin=cfg["time_margin_s"], plots=plots, backend=backend, defer=defer,
        deals=deals)


class _Run:
    """One tournament in its locked run directory."""

    def __init__(self, out: Path, config: dict[str, Any], specs: list[str], concurrency: int,
                 bootstrap: int, progress: bool, plots: bool, sprt: Any,
                 backend: Backend | None = None, defer: set[str] | None = None,
                 deals: Sequence[Deal] | None = None) -> None:
        self.out = out
        self.deals = list(deals) if deals is not None else None
        self.backend = backend
        self.defer = defer or set()
        self.config = config
        self.pins = config.get("agent_files")  # checked in every game
        self.upgrade = False  # an older run's config.json gains the pins
        self.specs = specs
        self.concurrency = concurrency
        self.bootstrap = bootstrap
        self.progress = progress
        self.plots = plots
        self.sprt = sprt
        self.game_name: str = config["game"]
        self.rules: dict[str, Any] = config["rules"]
        self.margin: float = config["time_margin_s"]
        self.games_dir = out / GAMES_DIR
        self.log_path = out / LOG_FILE

    def _check_dir(self) -> None:
        out = self.out
        cfg_path = out / CONFIG_FILE
        results_path = out / TABLE_FILE
        if cfg_path.exists():
            old = read_config(cfg_path)
            if "agent_files" in old:  # the agents' files, pinned when the run started
                self._check_files(old["agent_files"])
            else:  # a run of an older version: its files were not pinned when it started;
                # they are from now on (config.json gains them, below)
                self.upgrade = "agent_files" in self.config
                old["agent_files"] = self.config.get("agent_files")
                if old["agent_files"] is None:
                    del old["agent_files"]
            if old != self.config:
                keys = sorted(k for k in set(old) | set(self.config)
                              if old.get(k) != self.config.get(k))
                raise RunConfigError(
                    f"{out} holds a tournament made with other settings (they differ in: "
                    f"{', '.join(keys)}); use another output directory or the same arguments"
                )
        if self.games_dir.exists() and not self.games_dir.is_dir():
            raise RunConfigError(f"{self.games_dir}: not a directory (the tournament keeps its "
                                 "records there); move it away or use another --out")
        for path, what in ((results_path, "writes its table"),
                           (self.log_path, "appends its results")):
            if path.exists() and not path.is_file():
                raise RunConfigError(f"{path}: not a file (the tournament {what} there); "
                                     "move it away or use another --out")
        for path in (results_path, self.log_path, out):
            if path.exists() and not os.access(path, os.W_OK):
                raise PermissionError(13, "Permission denied", str(path))

    def _check_files(self, pinned: Any) -> None:
        """Refuse to go on when a file an agent reads differs from the one ``config.json``
        pinned when the run started (:func:`_check_pins`)."""
        now = self.config.get("agent_files") or {}
        if not _pins_ok(pinned):
            raise RunConfigError(f"{self.out / CONFIG_FILE}: agent_files is not a mapping of "
                                 "agent specs to {file: SHA-256 (64 hex digits)}; run the "
                                 "tournament's command again with another --out")
        for spec, files in pinned.items():
            if spec in self.specs:
                _check_pins(spec, now.get(spec) or {}, files)

    def run(self) -> dict[str, Any]:
        self._check_dir()
        cfg = self.config
        # the schedule is computed game by game (a run of millions of games allocates
        # nothing for the games not played yet): only the games that left a record or a
        # results line are looked at before play starts
        from_file = cfg.get("deals_sha256") is not None
        tasks = schedule(self.specs, cfg["games_per_group"], cfg["players_per_game"],
                         cfg["seed"], cfg["gauntlet"], self.deals if from_file else None)
        paths = _RecordPaths(self.games_dir)
        on_disk = []
        if self.games_dir.is_dir():
            for item in os.scandir(self.games_dir):
                gid = item.name[:-len(".jsonl")] if item.name.endswith(".jsonl") else None
                if gid is not None and gid in tasks.ids:
                    if not item.is_file():
                        raise RunConfigError(f"{item.path}: not a file (the record of a game "
                                             "goes there); move it away or use another --out")
                    on_disk.append(gid)
        self.games_dir.mkdir(exist_ok=True)
        cfg_path = self.out / CONFIG_FILE
        if not cfg_path.exists() or self.upgrade:
            write_atomic(cfg_path, json.dumps({**cfg, "sha256": json_sha256(cfg)}, indent=2)
                         + "\n")
        if self.deals is not None:  # the deals played: a deal file for another run (--deals)
            text = deals_text(self.deals)
            deals_path = self.out / DEALS_FILE
            if not deals_path.is_file() or read_regular(deals_path) != text.encode("utf-8"):
                write_atomic(deals_path, text)
        for part in self.games_dir.glob(".*.part"):  # records of games interrupted while played
            part.unlink(missing_ok=True)

        logged = self._read_log(tasks.ids)
        done: dict[str, dict[str, Any]] = {}
        for i in sorted({cast(int, tasks.position(g)) for g in (*logged, *on_disk)}):
            t = tasks[i]
            entry = self._kept(t, paths[t.game_id], logged.get(t.game_id))
            if entry is not None:
                done[t.game_id] = entry

        def todo_part(deferred: bool) -> Iterator[_GameTask]:
            for t in tasks:
                if t.game_id not in done and \
                        any(s in self.defer for s in t.seats) == deferred:
                    yield t

        # play order: game-id order, the deferred agents' games last
        todo: Iterator[_GameTask] = itertools.chain(todo_part(False), todo_part(True))
        left = len(tasks) - len(done)
        if done and self.progress:  # a rerun or --resume: say what it kept
            print(f"{self.out}: {len(done)} of {len(tasks)} games kept from an earlier run "
                  f"(their records checked); {left} to play", file=sys.stderr, flush=True)
        baseline = candidate = None
        watch = None
        if self.sprt is not None:
            candidate = cfg["gauntlet"] or self.specs[1]
            baseline = next(s for s in self.specs if s != candidate)
            watch = _SprtWatch(self.sprt, tasks, candidate)
            if watch.update(done):
                todo, left = iter(()), 0
        with self.log_path.open("a", encoding="utf-8") as log:
            for gid in done:  # games kept from their records alone: logged now
                if gid not in logged:
                    _append(log, done[gid])
            if left:  # compile (first run) or load the kernels before the first timed move
                key, game = _process_game(self.game_name, self.rules)
                _warm_up(game, key, list(self.specs), progress=self.progress)
            from taluva_ai.warmup import progress_bar

            bar = progress_bar(total=len(tasks), initial=len(tasks) - left,
                               disable=not self.progress, desc="games", unit="game")
            if watch is not None:  # the SPRT line from the start (0 games)
                bar.set_postfix_str(watch.status())
            stream = _play_stream(todo, paths, self.game_name, self.rules, self.concurrency,
                                  self.margin, self.backend, count=left, pins=self.pins)
            try:
                for t, entry in stream:
                    _append(log, entry)
                    done[t.game_id] = entry
                    if watch is not None:
                        decided = watch.update(done)
                        bar.set_postfix_str(watch.status(), refresh=False)
                        bar.update(1)
                        if decided:
                            break
                    else:
                        bar.update(1)
            finally:
                stream.close()  # stops the workers when the loop ends early
                bar.close()
        if watch is not None and watch.decided_deal is not None:
            counted: Sequence[_GameTask] = tasks.up_to_deal(watch.decided_deal)
        else:
            counted = tasks
        write_atomic(self.log_path, "".join(
            json.dumps(done[g]) + "\n" for g in sorted(done, key=tasks.ids.order)))
        return self._finish(counted, done, paths, baseline, candidate, len(tasks))

    def _read_log(self, ids: Container[str]) -> dict[str, dict[str, Any]]:
        return _read_log(self.log_path, ids)

    def _kept(self, task: _GameTask, path: Path, entry: dict[str, Any] | None
              ) -> dict[str, Any] | None:
        """The finished game of ``task``, as its log entry, or None to play it (again). A
        record that is missing although the log lists its game as finished, or whose bytes
        differ from the checksum its log line recorded, is named on stderr and its game
        played again."""
        if entry is not None and entry.get("forfeit") is None and not path.exists():
            print(f"{path}: missing ({self.log_path.name} lists the game as finished); "
                  "playing this game again", file=sys.stderr)
            return None
        outcome, moves, why = _kept_outcome(path, task, self.game_name, self.rules,
                                            self.config.get("agent_files"))
        if outcome is not None:
            digest = sha256_file(path)
            want = None if entry is None else entry.get("record_sha256")
            if want is not None and digest != want:  # it replays, but is not what was written
                print(f"{path}: {damaged(digest, want, f'recorded in {self.log_path.name}')}; "
                      "playing this game again", file=sys.stderr)
                return None
            fresh = _log_entry(task, outcome, None, None, digest)
            fresh["moves"] = moves
            keys = ("seats", "places", "winners", "end_reason", "plies", "deal", "rotation",
                    "moves")
            if entry is not None and all(entry.get(k) == fresh[k] for k in keys):
                return entry  # the logged line, with the time used
            if entry is not None:
                print(f"{self.log_path}: the line of game {task.game_id} differs from its "
                      f"record {path.name}; the record's result is used", file=sys.stderr)
            return fresh  # a game whose line was lost with the process: no time known
        if (why is None and entry is not None and entry.get("forfeit") is not None
                and entry["seats"] == list(task.seats) and entry["deal"] == task.deal
                and entry["rotation"] == task.rotation):
            want = _task_meta(task, self.config.get("agent_files")).get("agent_files")
            if "agent_files" in entry and entry["agent_files"] != want:  # (older lines: none)
                print(f"{self.log_path}: the line of game {task.game_id}: forfeited by "
                      "another network than the one this run pinned; playing this game again",
                      file=sys.stderr)
                return None
            return entry  # a forfeited game: no record, its log line keeps it
        if why is not None:
            print(f"{path}: {why}; playing this game again", file=sys.stderr)
        return None

    def _finish(self, counted: Sequence[_GameTask], done: dict[str, dict[str, Any]],
                paths: _RecordPaths, baseline: str | None, candidate: str | None,
                scheduled: int) -> dict[str, Any]:
        from taluva_ai.ratings import tournament_table
        from taluva_ai.reports import write_reports

        games_done = _table_games(self.specs, counted, done)
        sprt_agents = None if baseline is None or candidate is None else (baseline, candidate)
        table = tournament_table(self.specs, games_done, self.config["players_per_game"],
                                 bootstrap=self.bootstrap, seed=self.config["seed"],
                                 sprt=self.sprt, sprt_agents=sprt_agents)
        if "sprt" in table:
            table["sprt"]["games"] = len(counted)
            table["sprt"]["max_games"] = scheduled
        table = {"config": self.config,
                 "records_sha256": _records_digest(paths, counted, done), **table}
        timing = _timing(self.specs, counted, done, self.margin)
        write_atomic(self.out / TABLE_FILE, json.dumps(table, indent=2) + "\n")
        write_atomic(self.out / TIMING_FILE, json.dumps(timing, indent=2) + "\n")
        if self.config["players_per_game"] == 2:
            write_atomic(self.out / PGN_FILE, pgn_text(
                self.game_name, [done[t.game_id] for t in counted if t.game_id in done]))
        write_reports(self.out, table, timing=timing, plots=self.plots)
        return table
