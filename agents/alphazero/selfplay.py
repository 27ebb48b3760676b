"""Batched self-play: many games at once in one process, their leaves evaluated together.

Each game has its own :class:`~taluva_ai.agents.mcts.MCTSAgent` (PUCT or Gumbel root, chance
nodes, max^n values) whose search runs as a generator (:meth:`MCTSAgent.search_steps`): the
driver advances every game's search to its next leaf batch, evaluates the leaves of all games
in one :class:`~.evaluator.NetEvaluator` call (one network forward pass), hands each search its
results, and repeats (KataGo's and Leela's multi-game batching). When a search ends the game
plays its move and starts the next search; when a game ends a new one takes its place.

Per move (:class:`~.config.SelfPlaySection`): playout cap randomisation (a full search with
root noise whose position becomes a training sample, with probability ``full_search_prob``;
otherwise a fast search that is not recorded; Wu 2019), a temperature schedule (visits^(1/T)
for the first decisions, then the most visited), Dirichlet noise (PUCT) or Gumbel noise
(``root=gumbel``). A decision with one legal action is played without a search and not
recorded. Chance nodes draw the next tile of the game's seeded deck (``state.draw()``).

Hidden information (``state.has_hidden_information()``: Thurn und Taxis's hands and supply,
Taluva's ``tile_preview``): each search runs on a determinization, ``state.resample(player,
rng)``, a full state consistent with what the player to move knows, drawn afresh for every
search (perfect-information Monte Carlo, one sample per move, as the ``az`` and ``mcts``
agents play; Long et al. 2010). The sample recorded is encoded from the real state, from the
player's view (the same information as the determinization's).

:func:`selfplay_task` and :func:`expert_task` are the work of one worker (a process, or a
Ray actor): they play their games and write a sample file (:class:`~.replay.SampleSet`) and a
few game records. Each finished game is also kept in the task's journal (one file per game)
until the sample file is written, so a task run again after its worker died (a Ray actor is
restarted and its call retried) keeps the games already finished and plays only the others.
A worker process whose training process has died ends before it writes anything more
(:func:`taluva_ai.parallel.exit_if_orphaned`, called after each game and before the sample
file). Game ``g`` of iteration ``i`` of a run of seed ``seed`` has game seed
``SeedSequence([seed, i, g, 0])`` and agent seed ``SeedSequence([seed, i, g, 1])``; a worker
plays games ``w, w + W, w + 2W...``. The games are the same for the same config; the number of
workers and of parallel games changes which games share a batch, and so (through the shared
random stream of the tree's child shuffles) the games themselves.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.agents.alphazero.config import RunConfig, SelfPlaySection, make_encoder_for
from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.agents.alphazero.evaluator import NetEvaluator, value_targets
from taluva_ai.agents.alphazero.replay import SampleBuilder, SampleSet
from taluva_ai.agents.mcts import MCTSAgent
from taluva_ai.agents.search.tree import Tree
from taluva_ai.parallel import exit_if_orphaned
from taluva_ai.protocol import CHANCE, Game, GameState, make_game
from taluva_ai.records import RecordWriter, outcome_of
from taluva_ai.runfiles import naming, sha256_file, write_atomic


def game_seeds(seed: int, iteration: int, game: int) -> tuple[int, int]:
    """``(game seed, agent seed)`` of game ``game`` of iteration ``iteration``."""
    a = int(np.random.SeedSequence([seed, iteration, game, 0]).generate_state(1)[0])
    b = int(np.random.SeedSequence([seed, iteration, game, 1]).generate_state(1)[0])
    return a, b


def worker_seed(seed: int, iteration: int, worker: int) -> int:
    """Seed of worker ``worker``'s leaf evaluator (rollouts, chance samples) in iteration
    ``iteration``."""
    return int(np.random.SeedSequence([seed, iteration, worker, 2]).generate_state(1)[0])


@dataclass
class GameSummary:
    """One finished game: ``decisions`` (actions of players), ``plies`` (chance included),
    ``samples`` recorded, ``simulations`` searched, ``returns`` by seat, ``end_reason``, and
    ``opponent_seat``: the seat ``[selfplay] opponent`` played (-1: a game of the network
    against itself)."""

    game: int
    seed: int
    decisions: int
    plies: int
    samples: int
    simulations: int
    returns: list[float]
    end_reason: str
    outside: int = 0
    opponent_seat: int = -1


@dataclass
class _Slot:
    game: int
    seed: int
    state: GameState
    agent: MCTSAgent
    rng: np.random.Generator
    tree: Tree | None = None
    root: GameState | None = None  # the state searched: ``state`` or a determinization of it
    det_rng: np.random.Generator | None = None  # draws the determinizations
    steps: Any = None
    request: list[GameState] | None = None
    full: bool = False
    sims: int = 0
    decisions: int = 0
    samples: int = 0
    simulations: int = 0
    outside: int = 0
    history: list[int] = field(default_factory=list)
    opponent: Any = None  # the agent playing ``opponent_seat`` ([selfplay] opponent), or None
    opponent_seat: int = -1


def _advance_chance(state: GameState) -> None:
    while state.current_player == CHANCE:
        state.draw()


def record_sample(builder: SampleBuilder, encoder: NetEncoder, state: GameState,
                  actions: np.ndarray, probs: np.ndarray, game: int,
                  root_value: np.ndarray | None = None,
                  rollout_value: np.ndarray | None = None) -> int:
    """Add the sample of a decision: ``state`` with the policy target ``probs`` over the
    game's action ids ``actions`` (all legal) and, from a search, its root value by seat
    (:func:`root_values`), and the mean result of rollouts from it (:func:`rollout_values`).
    Actions without a network id are dropped from the target (the rest renormalised).
    Returns how many were dropped."""
    enc = encoder.encode(state)
    order = np.argsort(actions)
    pos = np.searchsorted(enc.legal, actions[order])
    if pos.size != enc.legal.size or not np.array_equal(enc.legal[pos], actions[order]):
        raise ValueError("the policy target is not over the legal actions")
    full_target = np.zeros(enc.legal.size, dtype=np.float64)
    full_target[pos] = probs[order]
    inside = enc.net_ids >= 0
    if not inside.any():
        return int(enc.legal.size)
    t = full_target[inside]
    if t.sum() <= 0:
        t = np.full(t.size, 1.0 / t.size)
    perms = encoder.id_permutations(enc)
    ids = perms[:, enc.net_ids[inside]]
    builder.add(enc.spatial, enc.globals, ids, t, enc.player, game, root_value, rollout_value,
                enc.frame)
    return int((~inside).sum())


def root_values(tree: Tree) -> np.ndarray | None:
    """``float64[n]`` by seat: a search tree's mean value at the root, on the value targets'
    scale (the search backs up ``(returns - offset) / scale``; clipped to ``[-1, 1]`` as
    :func:`~.evaluator.value_targets` clips), or None for a root never visited."""
    visits = float(tree.N[0])
    if visits <= 0:
        return None
    return np.clip(np.asarray(tree.W[0], dtype=np.float64) / visits, -1.0, 1.0)


def rollout_values(state: GameState, count: int, samples: int, seed: Sequence[int]
                   ) -> np.ndarray:
    """``float64[n]`` by seat: the mean value target (:func:`~.evaluator.value_targets`) of
    ``count`` greedy rollouts of ``state`` (``state.rollout("greedy", seed_i, samples)``,
    seeds drawn from ``seed``): ``[selfplay] value_rollouts``.

    Raises:
        ValueError: ``count < 1``."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    seeds = np.random.default_rng(list(seed)).integers(2**31 - 1, size=count)
    results = [value_targets(state, state.rollout("greedy", s, samples))  # type: ignore[attr-defined]
               for s in seeds.tolist()]
    return np.mean(results, axis=0)


def write_record(path: Path, game: Game, seed: int, history: Sequence[int],
                 players: Sequence[str], meta: dict[str, Any]) -> None:
    """Write a game record (JSON Lines, :mod:`taluva_ai.records`) by replaying ``history``
    (every action, chance outcomes included) from ``game.new_initial_state(seed)``.

    Raises:
        OSError: it cannot be written (naming ``path``).
    """
    state = game.new_initial_state(seed=seed)
    with naming(path), RecordWriter(path, game, seed, list(players), meta=meta,
                                    atomic=True) as w:
        for a in history:
            w.write_action(state, a)
            state.apply(a)
        w.write_result(state)


class SelfPlay:
    """Plays self-play games with batched leaf evaluation (see the module docstring).

    Args:
        game: the game.
        encoder: its network encoder.
        evaluator: the leaf evaluator (a :class:`~.evaluator.NetEvaluator`).
        cfg: the ``[selfplay]`` settings.
    """

    def __init__(self, game: Game, encoder: NetEncoder, evaluator: NetEvaluator,
                 cfg: SelfPlaySection) -> None:
        self.game = game
        self.encoder = encoder
        self.evaluator = evaluator
        self.cfg = cfg

    def _agent(self, seed: int) -> MCTSAgent:
        c = self.cfg
        return MCTSAgent(seed=seed, evaluator=self.evaluator, sims=c.sims, c=c.c, fpu=c.fpu,
                         leaf_batch=c.leaf_batch, root=c.root, gumbel_m=c.gumbel_m,
                         dirichlet_alpha=c.dirichlet_alpha if c.root == "puct" else 0.0,
                         dirichlet_frac=c.dirichlet_frac, temperature=1.0)

    def play(self, games: Sequence[tuple[int, int, int]], builder: SampleBuilder,
             on_game: Callable[[GameSummary, _Slot], None] | None = None
             ) -> list[GameSummary]:
        """Play ``games`` (``(index, game seed, agent seed)`` each), ``parallel_games`` at a
        time; add their samples to ``builder``. ``on_game(summary, slot)`` is called when a
        game ends. Returns the summaries in the order the games ended."""
        todo = deque(games)
        if todo and self._compiled(todo[0]):
            return self._play_compiled(todo, builder, on_game)
        slots: list[_Slot] = []
        done: list[GameSummary] = []

        def start_game() -> None:
            slots.append(self._new_slot(*todo.popleft()))

        while todo and len(slots) < self.cfg.parallel_games:
            start_game()
        while slots:
            for slot in list(slots):
                while slot.request is None:
                    if self._start_move(slot):
                        continue
                    summary = self._finish_game(slot, builder)
                    done.append(summary)
                    if on_game is not None:
                        on_game(summary, slot)
                    slots.remove(slot)
                    if todo:
                        start_game()  # its first search starts in the next round
                    break
            active = [s for s in slots if s.request is not None]
            if not active:
                continue
            batch = [st for s in active for st in (s.request or [])]
            priors, values = self.evaluator.evaluate(batch)
            i = 0
            for s in active:
                k = len(s.request or [])
                result = (priors[i:i + k], values[i:i + k])
                i += k
                try:
                    s.request = s.steps.send(result)
                except StopIteration:
                    s.request = None
                    self._finish_move(s, builder)
        return done

    def _new_slot(self, index: int, gseed: int, aseed: int) -> _Slot:
        """A new game: its state, its network's search and, in a share ``opponent_share``
        of the games, the opponent and its seat (both drawn from the game seed, so the same
        games meet it whatever the workers)."""
        slot = _Slot(index, gseed, self.game.new_initial_state(seed=gseed), self._agent(aseed),
                     np.random.default_rng(aseed))
        c = self.cfg
        if c.opponent and c.opponent_share > 0:
            from taluva_ai.agents import make_agent

            pick = np.random.default_rng([gseed, 6])
            if pick.random() < c.opponent_share:
                slot.opponent_seat = int(pick.integers(self.game.num_players))
                slot.opponent = make_agent(c.opponent, seed=int(pick.integers(2**31 - 1)))
        return slot

    def _compiled(self, first: tuple[int, int, int]) -> bool:
        """Whether the games run on the compiled batched search (agents/search/batched.py)."""
        from taluva_ai.agents.search.batched import compiled_net_search_ok

        state = self.game.new_initial_state(seed=first[1])
        _advance_chance(state)
        return compiled_net_search_ok(self._agent(first[2]), state)

    def _play_compiled(self, todo: deque[tuple[int, int, int]], builder: SampleBuilder,
                       on_game: Callable[[GameSummary, _Slot], None] | None
                       ) -> list[GameSummary]:
        """:meth:`play` on the compiled batched search: every round collects the leaves of
        all games in one compiled call, evaluates them in one network call and backs them up
        in another; Python runs only between moves."""
        from taluva_ai.agents.search.batched import BatchedSearch

        n = min(self.cfg.parallel_games, len(todo))
        first = todo[0]
        search = BatchedSearch(self.evaluator, self._agent(first[2]).config, n,
                               self.game.num_players)
        slots: list[_Slot | None] = [None] * n
        done: list[GameSummary] = []

        def next_search(b: int) -> None:
            """Start slot ``b``'s next search: its game's next move, or a new game."""
            while True:
                slot = slots[b]
                if slot is None:
                    if not todo:
                        search.release(b)
                        return
                    slot = self._new_slot(*todo.popleft())
                    slots[b] = slot
                if self._prepare_move(slot):
                    assert slot.root is not None
                    search.start(b, slot.agent, slot.root, sims=slot.sims, noise=slot.full)
                    return
                summary = self._finish_game(slot, builder)
                done.append(summary)
                if on_game is not None:
                    on_game(summary, slot)
                slots[b] = None

        for b in range(n):
            next_search(b)
        while search.active():
            for b in search.run_round():
                slot = slots[b]
                assert slot is not None
                slot.tree = search.tree(b)
                self._finish_move(slot, builder)
                next_search(b)
        return done

    def _start_move(self, slot: _Slot) -> bool:
        """Begin the next search of a game (playing forced moves and chance outcomes on the
        way). False when the game is over."""
        if not self._prepare_move(slot):
            return False
        assert slot.root is not None and slot.tree is not None
        slot.steps = slot.agent.search_steps(slot.root, slot.tree, sims=slot.sims,
                                             noise=slot.full)
        try:
            slot.request = next(slot.steps)
        except StopIteration:  # pragma: no cover (a search always evaluates its root)
            slot.request = None
            self._finish_move(slot, None)
        return True

    def _prepare_move(self, slot: _Slot) -> bool:
        """Play a game's forced moves and chance outcomes up to its next real decision and
        set up that decision's search (full or fast, the root, a fresh tree). False when the
        game is over."""
        c = self.cfg
        st = slot.state
        while True:
            while st.current_player == CHANCE:
                slot.history.append(st.draw())
            if st.is_terminal():
                return False
            if slot.opponent is not None and st.current_player == slot.opponent_seat:
                a = int(slot.opponent.act(st))  # the opponent's move: no search, no sample
                st.apply(a)
                slot.history.append(a)
                slot.decisions += 1
                continue
            legal = st.legal_actions()
            if legal.size > 1:
                break
            a = int(legal[0])
            st.apply(a)
            slot.history.append(a)
            slot.decisions += 1
        slot.full = c.full_search_prob >= 1.0 or slot.rng.random() < c.full_search_prob
        slot.sims = c.sims if slot.full else c.fast_sims
        slot.tree = Tree(len(st.returns()))
        slot.root = st
        if getattr(st, "has_hidden_information", lambda: False)():
            if slot.det_rng is None:
                slot.det_rng = np.random.default_rng([slot.seed, 3])
            slot.root = st.resample(st.current_player, slot.det_rng)  # type: ignore[attr-defined]
        return True

    def _finish_move(self, slot: _Slot, builder: SampleBuilder | None) -> None:
        c = self.cfg
        assert slot.tree is not None
        temp = c.temperature if slot.decisions < c.temperature_decisions else \
            c.final_temperature
        action = slot.agent.choose(slot.tree, slot.root or slot.state, temperature=temp,
                                   stats=False)
        slot.simulations += int(slot.tree.N[0])
        if slot.full and builder is not None:
            actions, probs = slot.agent.root_policy()
            rv = None if not c.value_rollouts else rollout_values(
                slot.state, c.value_rollouts, c.rollout_samples,
                (slot.seed, 5, slot.decisions))
            slot.outside += record_sample(builder, self.encoder, slot.state, actions, probs,
                                          slot.game, root_values(slot.tree), rv)
            slot.samples += 1
        slot.state.apply(action)
        slot.history.append(action)
        slot.decisions += 1
        slot.tree = None
        slot.root = None
        slot.steps = None

    def _finish_game(self, slot: _Slot, builder: SampleBuilder) -> GameSummary:
        returns = np.asarray(slot.state.returns(), dtype=np.float64)
        builder.finish_game(slot.game, value_targets(slot.state, returns),
                            self.encoder.aux_targets(slot.state), slot.state)
        out = outcome_of(slot.state, len(slot.history))
        return GameSummary(slot.game, slot.seed, slot.decisions, len(slot.history),
                           slot.samples, slot.simulations, [float(x) for x in returns],
                           out.end_reason, slot.outside, slot.opponent_seat)


# -- expert games (warm start) ----------------------------------------------------------------


def play_expert_games(game: Game, encoder: NetEncoder, games: Sequence[tuple[int, int, int]],
                      builder: SampleBuilder, expert: str, temperature: float,
                      epsilon: float, on_game: Callable[[GameSummary, list[int]], None]
                      | None = None, value_rollouts: int = 0, rollout_samples: int = 8
                      ) -> list[GameSummary]:
    """Expert games for the warm start (``[warm_start]``; expert iteration, Anthony et al.
    2017): every decision with more than one legal action becomes a sample.

    ``expert="heuristic"``: the target is the softmax of ``state.heuristic_values()`` at
    ``temperature``; the move is the best one (ties at random), or with probability
    ``epsilon`` one sampled from the target. Otherwise ``expert`` is an MCTS agent spec: the
    target is its search policy, the move its choice. ``value_rollouts > 0`` records the
    mean result of that many greedy rollouts with each sample (:func:`rollout_values`, as
    self-play does).
    """
    from taluva_ai.agents import make_agent

    done = []
    for index, gseed, aseed in games:
        rng = np.random.default_rng(aseed)
        state = game.new_initial_state(seed=gseed)
        agent = None if expert == "heuristic" else make_agent(expert, seed=aseed)
        history: list[int] = []
        decisions = samples = outside = 0
        while True:
            while state.current_player == CHANCE:
                history.append(state.draw())
            if state.is_terminal():
                break
            if agent is None:
                ids, vals = state.heuristic_values()  # type: ignore[attr-defined]
                z = (vals - vals.max()) / temperature
                probs = np.exp(z)
                probs /= probs.sum()
                if rng.random() < epsilon:
                    a = int(ids[rng.choice(ids.size, p=probs)])
                else:
                    best = np.flatnonzero(vals == vals.max())
                    a = int(ids[best[rng.integers(best.size)]])
                actions = ids
            else:
                a = int(agent.act(state))
                actions, probs = agent.root_policy()
            if actions.size > 1:
                rv = None if not value_rollouts else rollout_values(
                    state, value_rollouts, rollout_samples, (gseed, 5, decisions))
                outside += record_sample(builder, encoder, state, np.asarray(actions),
                                         np.asarray(probs), index, None, rv)
                samples += 1
            state.apply(a)
            history.append(a)
            decisions += 1
        returns = np.asarray(state.returns(), dtype=np.float64)
        builder.finish_game(index, value_targets(state, returns), encoder.aux_targets(state),
                            state)
        out = outcome_of(state, len(history))
        summary = GameSummary(index, gseed, decisions, len(history), samples, 0,
                              [float(x) for x in returns], out.end_reason, outside)
        done.append(summary)
        if on_game is not None:
            on_game(summary, history)
    return done


# -- worker tasks -----------------------------------------------------------------------------


def worker_init(torch_threads: int = 1) -> None:
    """Initialise a worker process (or Ray actor): SIGINT is left to the main process (which
    stops the workers), torch uses ``torch_threads`` threads."""
    import torch

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(max(1, torch_threads))


def _task_setup(task: dict[str, Any]) -> tuple[RunConfig, Game, NetEncoder]:
    from taluva_ai.agents.alphazero.config import config_from_dict

    cfg = config_from_dict(task["config"], "run config")
    game = make_game(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.rules)
    return cfg, game, make_encoder_for(cfg)


class _Progress:
    """Counts a worker's finished games into its progress file (read by the main process's
    progress bar)."""

    def __init__(self, task: dict[str, Any], done: int = 0) -> None:
        self.path = Path(task["progress"]) if task.get("progress") else None
        self.done = done

    def game_done(self) -> None:
        self.done += 1
        if self.path is not None:
            self.path.write_text(str(self.done), encoding="utf-8")


class _Journal:
    """The finished games of a worker task (``task["out"]`` ``<dir>/worker_<w>.npz``), one
    sample file and one summary each in ``<dir>/.worker_<w>.games/``, kept until the task's
    own sample file is written; the games a previous run of the task finished are read back
    when it starts (see the module docstring), unless ``task["keep_finished"]`` is false:
    then they are dropped and every game is played again."""

    def __init__(self, task: dict[str, Any]) -> None:
        out = Path(task["out"])
        self.dir = out.with_name(f".{out.stem}.games")
        self.sets: list[SampleSet] = []
        self.summaries: list[GameSummary] = []
        if not task.get("keep_finished", True):
            self.remove()
        if self.dir.is_dir():
            for meta in sorted(self.dir.glob("game_*.json")):
                try:
                    samples = SampleSet.load(meta.with_suffix(".npz"))
                    summary = GameSummary(**json.loads(meta.read_text(encoding="utf-8")))
                except (OSError, ValueError, TypeError):
                    continue  # cut short when the worker died: the game is played again
                self.sets.append(samples)
                self.summaries.append(summary)
        self.games = {s.game for s in self.summaries}

    def save(self, builder: SampleBuilder, summary: GameSummary) -> None:
        """Keep a finished game: its samples (from ``builder``), then its summary."""
        self.dir.mkdir(exist_ok=True)
        name = f"game_{summary.game:04d}"
        builder.build([summary.game]).save(self.dir / f"{name}.npz")
        _write_json(self.dir / f"{name}.json", summary.__dict__)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _write_json(path: Path, data: Any) -> str:
    """Write ``data`` as one line of JSON, atomically; returns the file's SHA-256."""
    return write_atomic(path, json.dumps(data) + "\n")


def _write_task_outputs(task: dict[str, Any], builder: SampleBuilder, journal: _Journal,
                        summaries: list[GameSummary], extra: dict[str, Any],
                        records: int) -> dict[str, Any]:
    """Write the task's sample file (the journal's games and the new ones) and its
    statistics (``<out>.json``); then drop the journal. Returns the statistics, with
    ``files``: the SHA-256 of each file the task made (the sample file, the statistics, the
    records of its games below ``records``), by path (the training run records them in its
    ``state.json``)."""
    exit_if_orphaned()
    out = Path(task["out"])
    samples = SampleSet.concatenate([*journal.sets, builder.build()])
    files = {str(out): samples.save(out)}
    summaries = sorted([*journal.summaries, *summaries], key=lambda s: s.game)
    stats = {"worker": task["worker"], "games": len(summaries), "samples": len(samples),
             "recovered_games": sorted(journal.games),
             "summaries": [s.__dict__ for s in summaries], **extra}
    files[str(out.with_suffix(".json"))] = _write_json(out.with_suffix(".json"), stats)
    for s in summaries:  # records written now, or by an earlier run of the task
        rec = Path(task["records_dir"]) / f"game_{s.game:04d}.jsonl"
        if s.game < records and rec.is_file():
            files[str(rec)] = sha256_file(rec)
    journal.remove()
    return {**stats, "files": files}


def run_tasks(ex: Any, fn: Callable[[dict[str, Any]], dict[str, Any]],
              tasks: Sequence[dict[str, Any]], games: int, desc: str,
              progress: bool = True) -> list[dict[str, Any]]:
    """Run worker tasks (:func:`selfplay_task` or :func:`expert_task`, one per worker) on the
    executor ``ex`` (:meth:`taluva_ai.parallel.Backend.executor`) with a progress bar of the
    ``games`` they play, summed from their progress files; returns their results in task
    order.

    Raises:
        KeyboardInterrupt: Ctrl-C, seen between polls (deferred while workers run in other
            processes, so none is cut mid-write by it).
        Exception: the first worker error, as the worker raised it.
    """
    from taluva_ai.parallel import sigint_deferred
    from taluva_ai.warmup import progress_bar

    futures = [ex.submit(fn, task) for task in tasks]
    with progress_bar(total=games, desc=desc, unit="game", leave=False,
                      disable=not progress) as bar:
        pending = list(futures)
        with sigint_deferred(not ex.in_process) as interrupted:
            while pending:
                for f in ex.wait(pending, timeout=0.5):
                    ex.result(f)  # raises a worker's error here
                    pending.remove(f)
                if interrupted.is_set():
                    raise KeyboardInterrupt
                n = 0
                for task in tasks:
                    with contextlib.suppress(OSError, ValueError):
                        n += int(Path(task["progress"]).read_text() or 0)
                bar.update(n - bar.n)  # drawn at most every mininterval
    return [ex.result(f) for f in futures]


def selfplay_task(task: dict[str, Any]) -> dict[str, Any]:
    """One worker's share of an iteration's self-play.

    ``task``: ``{"config": RunConfig.to_dict(), "iteration", "worker", "workers",
    "checkpoint": path of the network to play, "out": sample file path, "records_dir",
    "device", "progress": progress file, optionally "keep_finished": false to play the
    games an earlier run of the task finished again (for samples byte-identical to an
    uninterrupted run's)}``. Writes the sample file (and ``<out>.json`` with the game
    summaries, the speed and ``recovered_games``: the games taken back from the journal of an
    earlier run of the task) and returns those statistics.
    """
    from taluva_ai.agents.alphazero.agent import load_net
    from taluva_ai.agents.alphazero.net import resolve_device

    t0 = time.perf_counter()
    cfg, game, encoder = _task_setup(task)
    device = resolve_device(task["device"])
    net, _, _ = load_net(task["checkpoint"], device)
    it, w, nw = task["iteration"], task["worker"], task["workers"]
    sp = cfg.selfplay
    evaluator = NetEvaluator(net, encoder, device, rollout=sp.rollout,
                             rollout_lambda=sp.rollout_lambda, samples=sp.rollout_samples,
                             seed=worker_seed(cfg.seed, it, w))
    journal = _Journal(task)
    indices = [g for g in range(w, sp.games, nw) if g not in journal.games]
    games = [(g, *game_seeds(cfg.seed, it, g)) for g in indices]
    builder = SampleBuilder(encoder)
    records_dir = Path(task["records_dir"])
    names = [f"az-selfplay:iteration={it}"] * game.num_players
    progress = _Progress(task, len(journal.games))

    def on_game(summary: GameSummary, slot: _Slot) -> None:
        exit_if_orphaned()  # the training process died: write nothing more
        progress.game_done()
        if summary.game < sp.records:
            players = list(names)
            if slot.opponent_seat >= 0:
                players[slot.opponent_seat] = sp.opponent
            write_record(records_dir / f"game_{summary.game:04d}.jsonl", game, slot.seed,
                         slot.history, players, {"iteration": it, "game": summary.game,
                                                 "samples": summary.samples})
        journal.save(builder, summary)

    t1 = time.perf_counter()
    summaries = SelfPlay(game, encoder, evaluator, sp).play(games, builder, on_game)
    seconds = time.perf_counter() - t1
    return _write_task_outputs(task, builder, journal, summaries, {
        "seconds": seconds, "setup_seconds": t1 - t0,
        "evaluations": evaluator.evaluations,
        "simulations": sum(s.simulations for s in summaries),
        "decisions": sum(s.decisions for s in summaries),
    }, sp.records)


def expert_task(task: dict[str, Any]) -> dict[str, Any]:
    """One worker's share of the warm-start expert games (``task`` as for
    :func:`selfplay_task`, without a checkpoint)."""
    t0 = time.perf_counter()
    cfg, game, encoder = _task_setup(task)
    w, nw = task["worker"], task["workers"]
    ws = cfg.warm_start
    journal = _Journal(task)
    games = [(g, *game_seeds(cfg.seed, 0, g)) for g in range(w, ws.games, nw)
             if g not in journal.games]
    builder = SampleBuilder(encoder)
    records_dir = Path(task["records_dir"])
    names = [f"expert:{ws.expert}"] * game.num_players
    progress = _Progress(task, len(journal.games))

    def on_game(summary: GameSummary, history: list[int]) -> None:
        exit_if_orphaned()
        progress.game_done()
        if summary.game < cfg.selfplay.records:
            write_record(records_dir / f"game_{summary.game:04d}.jsonl", game, summary.seed,
                         history, names, {"iteration": 0, "game": summary.game,
                                          "samples": summary.samples})
        journal.save(builder, summary)

    summaries = play_expert_games(game, encoder, games, builder, ws.expert,
                                  ws.heuristic_temperature, ws.epsilon, on_game,
                                  cfg.selfplay.value_rollouts, cfg.selfplay.rollout_samples)
    return _write_task_outputs(task, builder, journal, summaries, {
        "seconds": time.perf_counter() - t0, "setup_seconds": 0.0, "evaluations": 0,
        "simulations": 0, "decisions": sum(s.decisions for s in summaries),
    }, cfg.selfplay.records)
