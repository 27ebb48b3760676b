"""The training config's dataclasses (:class:`RunConfig` and its sections), the checks
their fields declare (:func:`checked`, :func:`check_fields`), and :func:`build_section`,
the one reader of a table of settings into its dataclass (every section, the top level and
each ``[[schedule]]`` entry; :mod:`taluva_ai.agents.alphazero.config`).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from taluva_ai.agents.base import REQUIRED

#: ``az`` agent defaults that differ from ``mcts``'s (:mod:`.agent`; here, without PyTorch, so
#: ``taluva play --help`` can list them).
AZ_DEFAULTS: dict[str, Any] = {"sims": 200, "c": 1.25, "leaf_batch": 8}
#: ``az:builtin`` (the packaged network, :mod:`.builtin`) defaults, over :data:`AZ_DEFAULTS`:
#: the setting its anchors measured it at (no rollouts, the Gumbel root).
BUILTIN_DEFAULTS: dict[str, Any] = {"sims": 200, "rollout": "none", "root": "gumbel"}
#: The ``path`` value that names the packaged network (``az:builtin``, ``az:path=builtin``;
#: :mod:`.builtin`).
BUILTIN = "builtin"
#: The ``mcts`` parameters the ``az`` agent refuses: its priors come from the network.
AZ_NO_MCTS_PARAMETERS = ("prior", "prior_temperature")
#: The ``az`` agent's own spec parameters and their defaults (``None``: the checkpoint's),
#: before the ``mcts`` ones; ``AlphaZeroAgent.spec_parameters`` derives the same from its
#: signature (a test compares them).
AZ_OWN_PARAMETERS: dict[str, Any] = {"path": REQUIRED, "rollout": None, "lambda": None,
                                     "samples": None, "device": "auto", "threads": 1,
                                     "backend": "auto"}


def az_spec_parameters() -> dict[str, Any]:
    """The parameters of an ``az:...`` agent spec and their defaults (``None``: the
    checkpoint's setting), without importing PyTorch."""
    from taluva_ai.agents.mcts import MCTSConfig

    search = {f.name: AZ_DEFAULTS.get(f.name, f.default) for f in fields(MCTSConfig)
              if f.name not in AZ_NO_MCTS_PARAMETERS and f.name not in AZ_OWN_PARAMETERS}
    return {**AZ_OWN_PARAMETERS, **search}


#: Named network sizes.
PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"channels": 16, "blocks": 3, "global_hidden": 32, "value_hidden": 32},
    "small": {"channels": 32, "blocks": 6, "global_hidden": 64, "value_hidden": 64},
    "medium": {"channels": 64, "blocks": 10, "global_hidden": 128, "value_hidden": 128},
}


#: The largest network sizes a config may ask for: well above the presets (and the largest
#: published AlphaZero and KataGo networks' widths and depths), so that a typing slip (channels
#: = 100000) is refused in one line instead of failing to allocate.
NET_SIZE_LIMITS: dict[str, int] = {"channels": 512, "blocks": 80, "global_hidden": 4096,
                                   "value_hidden": 4096}


@dataclass(frozen=True)
class NetConfig:
    """Network size: a preset, any field of which may be overridden.

    Attributes:
        preset: ``tiny``, ``small`` or ``medium`` (:data:`PRESETS`).
        channels: trunk channels ``C``; blocks: residual blocks; global_hidden: ``H``;
            value_hidden: ``V``. 0 means the preset's value; at most
            :data:`NET_SIZE_LIMITS`.
        stem_kernel: the stem convolution's kernel, 3 (the default) or 1: a 1 x 1 stem does
            a ninth of the 3 x 3 stem's work, which was a third of the ``tiny`` network's
            inference time on the CPU (docs/alphazero.md), for one 3 x 3 layer less of
            receptive field.
        aux_head: an auxiliary head that learns the encoder's auxiliary targets
            (KataGo's auxiliary targets, Wu 2019; :class:`~.net.AZNet`), weighted by
            ``[train] aux_weight``; training only, it does not change how the network plays.
        ownership_head: a head that learns who holds each hex at the end of the game
            (KataGo's ownership target, Wu 2019; :meth:`~.encoder.NetEncoder.
            ownership_targets`), weighted by ``[train] ownership_weight``; training only.

    Raises:
        ValueError: unknown preset, or a size that is negative or above
            :data:`NET_SIZE_LIMITS` (naming the key and the range).
    """

    preset: str = "tiny"
    channels: int = 0
    blocks: int = 0
    global_hidden: int = 0
    value_hidden: int = 0
    stem_kernel: int = 3
    aux_head: bool = False
    ownership_head: bool = False

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"net preset must be one of {', '.join(PRESETS)}, got "
                             f"{self.preset!r}")
        for head in ("aux_head", "ownership_head"):
            if not isinstance(getattr(self, head), bool):
                raise ValueError(f"net {head} must be true or false, got "
                                 f"{getattr(self, head)!r}")
        if self.stem_kernel not in (1, 3) or isinstance(self.stem_kernel, bool):
            raise ValueError(f"net stem_kernel must be 1 or 3, got {self.stem_kernel!r}")
        for name, most in NET_SIZE_LIMITS.items():
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= most:
                raise ValueError(f"net {name} must be an integer in 0..{most} (0: the "
                                 f"preset's value), got {v!r}")

    @classmethod
    def parse(cls, shape: str) -> NetConfig:
        """The network of a shape string ``preset[/1x1][/aux][/size=N...]`` (``tiny``,
        ``tiny/1x1`` for a 1 x 1 stem, ``tiny/aux`` with the auxiliary head,
        ``small/blocks=4``), as ``taluva bench --selfplay`` and
        ``experiments/compare_shapes.py`` name networks.

        Raises:
            ValueError: an unknown preset, part, key or value (naming the shape).
        """
        preset, *parts = shape.split("/")
        kw: dict[str, Any] = {}
        for part in parts:
            if part == "1x1":
                kw["stem_kernel"] = 1
                continue
            if part == "aux":
                kw["aux_head"] = True
                continue
            key, eq, value = part.partition("=")
            if not eq or key not in ("channels", "blocks", "global_hidden", "value_hidden") \
                    or not value.isascii() or not value.isdigit():
                raise ValueError(f"shape {shape!r}: {part!r} is not 1x1, aux or a size=N")
            kw[key] = int(value)
        return cls(preset, **kw)

    def problem_with(self, encoder: Any, game: str | None = None) -> str | None:
        """Why this network cannot read ``encoder`` (a :class:`~.encoder.NetEncoder`), in one
        line naming the ``[net]`` key, or None: an auxiliary head needs an encoding with
        auxiliary targets and a stem kernel other than 3 the ``conv`` family (the only one
        with a stem). ``game`` (the game's name) makes the line name the game."""
        family = getattr(encoder, "network", "conv")
        players = f" ({game}, {encoder.num_players} player(s))" if game else ""
        if self.aux_head and (not encoder.num_aux or family != "conv"):
            return (f"[net] aux_head: the {encoder.name} encoding{players} has no auxiliary "
                    "targets")
        if self.ownership_head and (not getattr(encoder, "num_ownership", 0) or
                                    family != "conv"):
            return (f"[net] ownership_head: the {encoder.name} encoding{players} has no "
                    "ownership targets")
        if self.stem_kernel != 3 and family != "conv":
            who = f"{game}'s network" if game else f"the {family} family"
            return f"[net] stem_kernel: {who} has no stem convolution"
        return None

    def sizes(self) -> dict[str, int]:
        """The resolved sizes ``{"channels", "blocks", "global_hidden", "value_hidden"}``."""
        base = dict(PRESETS[self.preset])
        for k in base:
            v = getattr(self, k)
            if v:
                base[k] = v
        if base["channels"] < 1:
            raise ValueError("net channels must be >= 1")
        return base


#: The largest values of the run's sizes (:func:`checked`'s ``most``): far above what any
#: machine uses, from two cores to a GPU cluster (AlphaZero searched 800 simulations a move,
#: KataGo trains on batches of 256 to 2,048 samples), so that only a typing slip meets them.
SIMS_MOST = 100_000  # [selfplay] sims, fast_sims
LEAF_BATCH_MOST = 4_096  # [selfplay] leaf_batch
GAMES_MOST = 1_000_000  # [selfplay] games (per iteration)
PARALLEL_GAMES_MOST = 16_384  # [selfplay] parallel_games (per worker)
ROLLOUTS_MOST = 4_096  # [selfplay] rollout_samples, value_rollouts
BATCH_SIZE_MOST = 65_536  # [train] batch_size
STEPS_MOST = 10_000_000  # [train] steps (per iteration)
WORKERS_MOST = 16_384  # workers
ITERATIONS_MOST = 1_000_000  # iterations


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the file, section and key."""


@dataclass(frozen=True)
class Bounds:
    """The values a number may take, in interval notation: ``">= 1"``, ``"> 0"``,
    ``"[0, 1]"``, ``"(0, 1]"``, ``"[0, 1)"``, ``"(0, 0.5)"`` (the notation is also what the
    refusal says)."""

    text: str
    lo: float
    hi: float
    lo_open: bool
    hi_open: bool

    @classmethod
    def parse(cls, text: str) -> Bounds:
        if text.startswith(">"):
            return cls(text, float(text.lstrip(">=")), math.inf, not text.startswith(">="),
                       True)
        lo, hi = text[1:-1].split(",")
        return cls(text, float(lo), float(hi), text[0] == "(", text[-1] == ")")

    def holds(self, value: float) -> bool:
        above = value > self.lo if self.lo_open else value >= self.lo
        below = value < self.hi if self.hi_open else value <= self.hi
        return above and below

    def refusal(self, key: str, value: Any, note: str = "") -> str:
        """``"key must be >= 1, got 0"``, ``"key must lie in [0, 1] (note), got 2.0"``."""
        verb = "be" if self.text.startswith(">") else "lie in"
        return f"{key} must {verb} {self.text}{f' ({note})' if note else ''}, got {value}"


def checked(default: Any, bounds: str = "", *, choices: tuple[str, ...] = (),
            note: str = "", most: int | None = None) -> Any:
    """A config field with its check, made by :func:`check_fields`: ``bounds`` (a
    :class:`Bounds` text) for a number, ``choices`` for a string; ``note`` is added to the
    refusal (e.g. ``"0: no cap"``). ``most``: the largest value taken, a bound far above any
    machine's use (from two cores to a GPU cluster; docs/alphazero.md, "Config keys") that
    refuses a typing slip (``sims = 64000000``) in one line instead of a run that never ends
    or cannot allocate."""
    return field(default=default, metadata={
        "bounds": Bounds.parse(bounds) if bounds else None, "choices": choices, "note": note,
        "most": most})


def _one_of(choices: tuple[str, ...]) -> str:
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def check_fields(obj: Any, where: str) -> None:
    """Check every field of the dataclass ``obj`` declared with :func:`checked`, in order.

    Raises:
        ConfigError: the first value outside its bounds or choices (``where`` then the
            field's name, its bounds or choices, and the value).
    """
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        bounds, choices = f.metadata.get("bounds"), f.metadata.get("choices")
        if bounds is not None and not bounds.holds(value):
            raise ConfigError(f"{where}{bounds.refusal(f.name, value, f.metadata['note'])}")
        most = f.metadata.get("most")
        if most is not None and value > most:
            raise ConfigError(f"{where}{f.name} must be at most {most:_} (a bound far above "
                              f"any run's need, against typing slips), got {value:_}")
        if choices and value not in choices:
            raise ConfigError(f"{where}{f.name} must be {_one_of(choices)}, got {value!r}")


@dataclass(frozen=True)
class GameSection:
    """``[game]``: the game and its rule options.

    Attributes:
        name: a registered game (``make_game(name, num_players=..., **rules)``).
        num_players: seats (the network has one value output per seat).
        rules: other rule options (e.g. ``{tiles_per_player = 12}``), checked by the game.
    """

    name: str = "taluva"
    num_players: int = 2
    rules: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def read_table(data: dict[str, Any]) -> dict[str, Any]:
        """The ``[game]`` table as the fields' values: keys other than ``name`` and
        ``num_players`` are rule options, gathered into ``rules`` (read by
        :func:`build_section`)."""
        data = dict(data)
        rules = dict(data.pop("rules", {}) or {})
        for k in list(data):
            if k not in ("name", "num_players"):
                rules[k] = data.pop(k)
        data["rules"] = rules
        return data


@dataclass(frozen=True)
class EncoderSection:
    """``[encoder]``: options of the game's network encoder (Taluva: ``view_radius``, 0 = the
    encoding's default, 13; ``build_sites``, the build-site globals of docs/encoding.md)."""

    view_radius: int = 0
    build_sites: bool = False


@dataclass(frozen=True)
class NetSection(NetConfig):
    """``[net]``: the network size, the fields of :class:`NetConfig` (which checks them): a
    ``preset`` (tiny, small, medium) and optional overrides (0 = the preset's value),
    ``stem_kernel`` (3 or 1) and ``aux_head``, the auxiliary
    head (KataGo's auxiliary targets; its loss weighted by ``[train] aux_weight``), and
    ``ownership_head`` (KataGo's ownership target; ``[train] ownership_weight``)."""


@dataclass(frozen=True)
class WarmStartSection:
    """``[warm_start]``: supervised start from expert games (expert iteration; Anthony et al.
    2017), iteration 0 of the run.

    Attributes:
        games: expert games to play (0: no warm start; iteration 0 is a random network).
        expert: ``heuristic`` (targets: softmax of the game's one-ply heuristic values,
            ``state.heuristic_values()``, at ``heuristic_temperature``; moves: the best one,
            or with probability ``epsilon`` one sampled from the target), or an ``mcts:...``
            agent spec (targets: its search policy; moves: its choices).
        heuristic_temperature: softmax temperature in heuristic units (Taluva: a temple is
            worth 100, a hut 3).
        epsilon: share of heuristic moves sampled from the target instead of the best one.
        steps: training steps on the expert data.
        init: a checkpoint (``.pt``) whose network iteration 0 starts from instead of a
            random one, before its expert games and steps if any: another run's network,
            continued under a new config (:func:`~.net.init_from_checkpoint`; it may gain
            global inputs, e.g. ``[encoder] build_sites``). Read when a run starts (a
            relative path from the current directory), which keeps a copy, ``init.pt`` in
            the run directory, for ``--redo 0``; not read on a resume. ``""``: none.
    """

    games: int = checked(0, ">= 0")
    expert: str = "heuristic"
    heuristic_temperature: float = checked(10.0, "> 0")
    epsilon: float = checked(0.2, "[0, 1]")
    steps: int = checked(0, ">= 0")
    init: str = ""


@dataclass(frozen=True)
class SelfPlaySection:
    """``[selfplay]``: games per iteration and the search that plays them.

    Attributes:
        games: self-play games per iteration (all workers together).
        parallel_games: games played at once in one worker; their leaves are evaluated in
            one network call.
        sims: simulations of a full search; fast_sims: of a fast one.
        full_search_prob: playout cap randomisation (KataGo; Wu 2019): each move is a full
            search (recorded as a training sample, root noise on) with this probability, else
            a fast search (not recorded, no noise). 1 records every move.
        root: ``puct`` or ``gumbel`` (Gumbel sequential halving at the root, Danihelka et al.
            2022; targets are the improved policy); gumbel_m: actions it considers.
        c, fpu: PUCT constant and the value of unvisited children.
        dirichlet_alpha, dirichlet_frac: root noise of full PUCT searches (AlphaZero).
        temperature: move choice by visits^(1/T) for the first ``temperature_decisions``
            decisions of a game, then ``final_temperature`` (0: the most visited). With
            ``root=gumbel``, a positive temperature keeps the Gumbel noise in the choice.
        leaf_batch: leaves one game's search collects (with virtual loss) per network call.
        rollout, rollout_lambda, rollout_samples: leaf value mixing (``none``, ``greedy`` or
            ``random``; :mod:`.evaluator`).
        value_rollouts: greedy rollouts (``state.rollout("greedy")``, ``rollout_samples``
            tile placements sampled per decision) played from every recorded position; their
            mean result is recorded with the sample (:attr:`~.replay.SampleSet.rollout_value`)
            and mixed into its value target by ``[train] rollout_target_mix``. 0: none. A
            lower-variance value target than one game's result, from an estimator
            independent of the network (unlike the search's root value); docs/alphazero.md.
        opponent, opponent_share: a league of one fixed opponent (AlphaStar's exploiters, in
            their simplest form): in a share ``opponent_share`` of the games (drawn from each
            game's seed), one seat, also drawn, is played by the agent ``opponent`` (an agent
            spec: ``greedy``, ``mcts:sims=400,rollout=greedy``); the network plays the others
            and only its decisions become samples. It meets the habits self-play against
            itself does not punish (docs/alphazero.md). ``""`` and 0: none.
        records: self-play games per iteration written as game records (JSON Lines).
    """

    games: int = checked(32, ">= 1", most=GAMES_MOST)
    parallel_games: int = checked(16, ">= 1", most=PARALLEL_GAMES_MOST)
    sims: int = checked(64, ">= 1", most=SIMS_MOST)
    fast_sims: int = checked(16, ">= 1", most=SIMS_MOST)
    full_search_prob: float = checked(1.0, "(0, 1]")
    root: str = checked("puct", choices=("puct", "gumbel"))
    gumbel_m: int = checked(16, ">= 1")
    c: float = checked(1.25, ">= 0")
    fpu: float = 0.0
    dirichlet_alpha: float = checked(0.3, ">= 0")
    dirichlet_frac: float = checked(0.25, "[0, 1]")
    temperature: float = checked(1.0, ">= 0")
    temperature_decisions: int = checked(20, ">= 0")
    final_temperature: float = checked(0.0, ">= 0")
    leaf_batch: int = checked(4, ">= 1", most=LEAF_BATCH_MOST)
    rollout: str = checked("none", choices=("none", "greedy", "random"))
    rollout_lambda: float = checked(0.0, "[0, 1]")
    rollout_samples: int = checked(8, ">= 1", most=ROLLOUTS_MOST)
    value_rollouts: int = checked(0, ">= 0", most=ROLLOUTS_MOST)
    opponent: str = ""
    opponent_share: float = checked(0.0, "[0, 1]")
    records: int = checked(2, ">= 0")


@dataclass(frozen=True)
class ReplaySection:
    """``[replay]``: the training window: samples of the most recent ``window_games``
    self-play (and warm-start) games.

    With ``window_start > 0`` the window grows, as KataGo's does (Wu 2019: early data is
    worth less and a small window turns it over fast): at iteration ``k`` it holds
    ``min(window_games, window_start + window_growth * k)`` games.
    """

    window_games: int = checked(1000, ">= 1")
    window_start: int = checked(0, ">= 0")
    window_growth: int = checked(0, ">= 0")

    def window_at(self, iteration: int) -> int:
        """The window, in games, when iteration ``iteration``'s samples join the buffer."""
        if self.window_start <= 0:
            return self.window_games
        return min(self.window_games, self.window_start + self.window_growth * iteration)


@dataclass(frozen=True)
class TrainSection:
    """``[train]``: the trainer.

    Attributes:
        steps: optimiser steps per iteration; batch_size: samples per step (each in a random
            one of the encoder's symmetries).
        max_sample_reuse: a cap on how often an iteration draws each sample of the replay
            buffer, on average: the iteration trains ``min(steps, ceil(max_sample_reuse *
            samples / batch_size))`` steps (:meth:`steps_for`). It binds when the buffer is
            small, as after a run resumes from a pack without its replay data, where ``steps``
            would pass over one iteration's samples a dozen times (KataGo likewise ties its
            training steps to the data it has). 0: no cap.
        optimizer: ``adamw`` or ``sgd`` (with ``momentum``, Nesterov); lr: learning rate;
            weight_decay: decoupled (AdamW) or L2 (SGD).
        value_weight: weight of the value loss (mean squared error per player slot) against
            the policy loss (cross-entropy with the search policy).
        max_grad_norm: gradient clipping (0: none).
        value_target_mix: the value target mixes the game's result ``z`` with the search's
            root value ``q`` when the sample was recorded: ``(1 - mix) z + mix q`` (0: the
            result alone, AlphaZero; :meth:`~.replay.ReplayBuffer.sample`).
        rollout_target_mix: the value target also mixes in the mean result ``r`` of the
            greedy rollouts recorded with the sample (``[selfplay] value_rollouts``):
            ``(1 - mix_q - mix_r) z + mix_q q + mix_r r`` (where ``q`` or ``r`` is unknown its
            share goes to ``z``); ``value_target_mix + rollout_target_mix <= 1``.
        aux_weight: weight of the auxiliary head's loss (mean squared error over the known
            auxiliary targets; ``[net] aux_head``). A value other than the default without
            the head is refused (it would do nothing).
        ownership_weight: weight of the ownership head's loss (binary cross-entropy per
            board pixel and player slot, over the samples with ownership targets; ``[net]
            ownership_head``). A value other than the default without the head is refused.
        priority_alpha: prioritized replay (Schaul et al. 2016, as MuZero uses it,
            Schrittwieser et al. 2020): sample ``i`` is drawn with probability proportional
            to ``p_i ** alpha``, ``p_i`` the mean over player slots of ``|z - q|``, the
            game's result against the search's root value when the sample was recorded
            (``q`` unknown: 0), plus 0.01. The positions the search judged worst are drawn
            most: in Taluva the openings, where the tiles still decide (docs/alphazero.md,
            "Prioritized replay"). 0: uniform (the default).
        priority_beta: the importance-sampling correction of prioritized replay: each drawn
            sample's losses are weighted by ``(N P(i)) ** -beta`` over the mean of that weight
            under the sampling (so the weights average 1 and ``lr`` keeps its meaning); 1
            undoes the sampling's bias in expectation, 0 keeps it (the prioritised samples
            count more). A value other than the default without ``priority_alpha > 0`` is
            refused. The losses in the metrics are the weighted ones.
        elimination_weight: the samples of games that ended with a seat eliminated
            (Taluva: RULES.md "End of the game") weigh this many times the others in every
            loss, the weights scaled to a mean of 1 over the replay buffer, so the learning
            rate means what it did (importance weighting of a rare outcome). 1: none (the
            default). Self-play against itself rarely punishes a habit that opponents of
            another style exploit by eliminating the network; this makes the value head learn
            the few games where it happened harder. Needs an encoder that can tell (Taluva
            with 2-4 players, whose auxiliary targets say it), else refused.
        lr_schedule: a piecewise-constant learning rate by iteration, as the step schedules
            of AlphaZero (Silver et al. 2018) and KataGo: ``{"31" = 5e-4, "60" = 2e-4}`` trains
            iterations 31-59 at 5e-4 and 60 on at 2e-4; iterations before the first key (and
            the warm start's iteration 0, unless a key is ``"0"``) at ``lr``
            (:meth:`lr_at`). The rate is set before every iteration's training, so an edited
            ``lr`` or schedule takes effect when a run is resumed (the optimiser's saved
            state would otherwise keep the old one).
    """

    steps: int = checked(100, ">= 0", most=STEPS_MOST)
    batch_size: int = checked(128, ">= 1", most=BATCH_SIZE_MOST)
    max_sample_reuse: float = checked(0.0, ">= 0", note="0: no cap")
    optimizer: str = checked("adamw", choices=("adamw", "sgd"))
    lr: float = checked(1e-3, "> 0")
    momentum: float = checked(0.9, "[0, 1)")
    weight_decay: float = checked(1e-4, ">= 0")
    value_weight: float = checked(1.0, ">= 0")
    max_grad_norm: float = checked(5.0, ">= 0")
    value_target_mix: float = checked(0.0, "[0, 1]")
    rollout_target_mix: float = checked(0.0, "[0, 1]")
    aux_weight: float = checked(1.0, ">= 0")
    ownership_weight: float = checked(1.0, ">= 0")
    priority_alpha: float = checked(0.0, "[0, 4]")
    priority_beta: float = checked(1.0, "[0, 1]")
    elimination_weight: float = checked(1.0, "(0, 100]")
    lr_schedule: dict[str, float] = field(default_factory=dict)

    def steps_for(self, samples: int) -> int:
        """Optimiser steps for an iteration whose replay buffer holds ``samples`` samples.

        ``steps``, capped at ``ceil(max_sample_reuse * samples / batch_size)`` when
        ``max_sample_reuse > 0``; 0 when the buffer is empty.
        """
        if samples <= 0:
            return 0
        if self.max_sample_reuse <= 0:
            return self.steps
        return min(self.steps, math.ceil(self.max_sample_reuse * samples / self.batch_size))

    def lr_at(self, iteration: int) -> float:
        """The learning rate of iteration ``iteration`` (``lr_schedule``, else ``lr``)."""
        lr = self.lr
        for start, value in sorted((int(k), float(v)) for k, v in self.lr_schedule.items()):
            if iteration >= start:
                lr = value
        return lr


@dataclass(frozen=True)
class GatingSection:
    """``[gating]``: the candidate of each iteration plays the current best in paired games
    (every deal once per seat rotation) and replaces it when it wins.

    Attributes:
        enabled: false promotes every candidate (AlphaZero); true gates (AlphaGo Zero).
        games: games per round (rounded up to a multiple of the players).
        rule: ``threshold`` (promote when the candidate's score >= ``threshold``; AlphaGo
            Zero used 0.55) or ``sprt`` (sequential probability ratio test on the score,
            ``elo0`` vs ``elo1`` with error rates ``alpha``, ``beta``, one round after another
            until decided or ``max_rounds``; undecided keeps the best).
        az: ``az`` agent parameters of both players (e.g. ``"sims=32"``).
    """

    enabled: bool = True
    games: int = checked(20, ">= 1")
    rule: str = checked("threshold", choices=("threshold", "sprt"))
    threshold: float = checked(0.55, "[0, 1]")
    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = checked(0.05, "(0, 0.5)")
    beta: float = checked(0.05, "(0, 0.5)")
    max_rounds: int = checked(4, ">= 1")
    az: str = "sims=32"


@dataclass(frozen=True)
class AnchorsSection:
    """``[anchors]``: the best network against fixed opponents, for the metrics (win rate and
    Elo relative to each anchor).

    Attributes:
        opponents: fixed agents' specs (e.g. ``["random", "greedy",
            "mcts:sims=400,rollout=greedy", "az:builtin"]``); of the ``az`` agents only the
            packaged network (``az:builtin``, 2-player Taluva), not ``az:path=...``.
        games: games against each (paired: each deal with both seatings).
        every: play them every ``every`` iterations (0: only after the last iteration).
        az: ``az`` parameters of the network's player (e.g. ``"sims=200,rollout=greedy,
            lambda=0.5"``).
    """

    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    games: int = checked(20, ">= 1")
    every: int = checked(1, ">= 0")
    az: str = "sims=64"


@dataclass(frozen=True)
class RunConfig:
    """A whole training run (top-level keys and the sections).

    Attributes:
        seed: every random choice of the run derives from it.
        iterations: training iterations after iteration 0 (the warm start or the initial
            network).
        workers: self-play and tournament processes (0: one per CPU core).
        device: ``auto`` (CUDA when available), ``cpu``, ``cuda``...: where the network runs
            in self-play and training.
        torch_threads: torch CPU threads of the trainer (0: one per CPU core). The default
            is 1: on a machine whose cores are busy, several torch threads spin-wait on each
            other (measured up to 4x slower with 2 threads on a loaded 2-core machine);
            raise it on a dedicated machine.
    """

    seed: int = checked(0, ">= 0")
    iterations: int = checked(4, ">= 0", most=ITERATIONS_MOST)
    workers: int = checked(0, ">= 0", note="0: one per core", most=WORKERS_MOST)
    device: str = "auto"
    torch_threads: int = checked(1, ">= 0")
    game: GameSection = field(default_factory=GameSection)
    encoder: EncoderSection = field(default_factory=EncoderSection)
    net: NetSection = field(default_factory=NetSection)
    warm_start: WarmStartSection = field(default_factory=WarmStartSection)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    replay: ReplaySection = field(default_factory=ReplaySection)
    train: TrainSection = field(default_factory=TrainSection)
    gating: GatingSection = field(default_factory=GatingSection)
    anchors: AnchorsSection = field(default_factory=AnchorsSection)
    schedule: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON/TOML-ready nested dict (sections as tables; ``schedule`` as a list of
        tables, left out when empty)."""
        d = dataclasses.asdict(self)
        d["schedule"] = [dict(entry) for entry in self.schedule]
        if not d["schedule"]:
            del d["schedule"]
        return d

    def at(self, iteration: int) -> RunConfig:
        """The settings in force at ``iteration``: this config with every ``[[schedule]]``
        entry whose ``at`` is ``<= iteration`` applied in order (a later entry overrides an
        earlier one's keys). The result has no schedule of its own (it is one stage's
        settings); a config without a schedule is returned as it is."""
        out = self
        for entry in self.schedule:
            if entry["at"] > iteration:
                break
            out = apply_entry(out, entry)
        return dataclasses.replace(out, schedule=()) if self.schedule else out

    def stages(self) -> Iterator[tuple[int, RunConfig]]:
        """``(at, self.at(at))`` for each ``[[schedule]]`` entry in order, each stage made
        from the one before (one entry applied each: linear in the number of entries, where
        calling :meth:`at` for each would be quadratic)."""
        out = dataclasses.replace(self, schedule=())
        for entry in self.schedule:
            out = apply_entry(out, entry)
            yield entry["at"], out

    def scheduled_keys(self, iteration: int) -> dict[str, Any]:
        """The ``section.key`` settings that the schedule has changed by ``iteration``, with
        their values then (empty before the first entry): what a metrics line records."""
        now = self.at(iteration)
        return {f"{section}.{key}": getattr(getattr(now, section), key)
                for entry in self.schedule if entry["at"] <= iteration
                for section, keys in entry.items() if section != "at" for key in keys}


def apply_entry(cfg: RunConfig, entry: dict[str, Any]) -> RunConfig:
    """``cfg`` with the settings of one ``[[schedule]]`` entry (``{"at": N, section: {key:
    value}}``) applied."""
    return dataclasses.replace(cfg, **{
        section: dataclasses.replace(getattr(cfg, section), **keys)
        for section, keys in entry.items() if section != "at"})


_SECTIONS: dict[str, type] = {
    "game": GameSection, "encoder": EncoderSection, "net": NetSection,
    "warm_start": WarmStartSection, "selfplay": SelfPlaySection, "replay": ReplaySection,
    "train": TrainSection, "gating": GatingSection, "anchors": AnchorsSection,
}


def _check_value(where: str, key: str, value: Any, hint: Any) -> Any:
    """``value`` of the field ``key`` typed as ``hint`` says (a section: a table, read by
    :func:`build_section`).

    Raises:
        ConfigError: a value of another type (``where``, the key, what it must be, the value).
    """
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{key}] must be a table, got {value!r}")
        return build_section(hint, value, f"{where}: [{key}]")
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be true or false, got {value!r}")
        return value
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value):
            raise ConfigError(f"{where}: {key} must be a finite number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string, got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {key} must be a list of strings, got {value!r}")
        return list(value)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: {key} must be a table, got {value!r}")
        return dict(value)
    raise AssertionError(f"unhandled type {hint!r}")  # pragma: no cover


def build_section(cls: type, data: dict[str, Any], where: str) -> Any:
    """The one reader of a table of settings: the dataclass ``cls`` (a section, or
    :class:`RunConfig` for the top level, whose sections it reads in turn) from the table
    ``data`` (through the class's ``read_table`` hook first, if it has one:
    :meth:`GameSection.read_table`), each value type-checked against its field. The fields'
    bounds are checked after, by :func:`check_fields` (``validate``).

    Raises:
        ConfigError: an unknown key (naming the known ones), a value of the wrong type, or a
            section's own refusal (``[net]``), each after ``where``.
    """
    hints = typing.get_type_hints(cls)
    table = getattr(cls, "read_table", None)
    data = table(data) if table is not None else dict(data)
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(known))
    if unknown:
        what = "key(s) or section(s)" if cls is RunConfig else "key(s)"
        raise ConfigError(f"{where}: unknown {what} {', '.join(unknown)}; known: "
                          f"{', '.join(known)}")
    kwargs = {k: _check_value(where, k, v, hints[k]) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except ValueError as e:  # a section that checks itself ([net])
        raise ConfigError(f"{where}: {e}") from None

