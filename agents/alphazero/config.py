"""Training-run configuration: TOML files (``experiments/configs/*.toml``) read into frozen
dataclasses, every key checked before any work starts.

A config file has top-level keys (:class:`RunConfig`: ``seed``, ``iterations``, ``workers``,
``device``, ``torch_threads``) and the sections ``[game]``, ``[encoder]``, ``[net]``,
``[warm_start]``, ``[selfplay]``, ``[replay]``, ``[train]``, ``[gating]``, ``[anchors]``; each
section's keys are the fields of its dataclass below, and every key is optional (the
defaults are those of the dataclass). docs/alphazero.md lists them all.

An unknown section or key, a value of the wrong type or out of range fails with a
:class:`ConfigError` naming the file, the section and the key.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from taluva_ai.agents.base import REQUIRED
from taluva_ai.runfiles import MAX_CONFIG_BYTES, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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
            note: str = "") -> Any:
    """A config field with its check, made by :func:`check_fields`: ``bounds`` (a
    :class:`Bounds` text) for a number, ``choices`` for a string; ``note`` is added to the
    refusal (e.g. ``"0: no cap"``)."""
    return field(default=default, metadata={
        "bounds": Bounds.parse(bounds) if bounds else None, "choices": choices, "note": note})


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

    games: int = checked(32, ">= 1")
    parallel_games: int = checked(16, ">= 1")
    sims: int = checked(64, ">= 1")
    fast_sims: int = checked(16, ">= 1")
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
    leaf_batch: int = checked(4, ">= 1")
    rollout: str = checked("none", choices=("none", "greedy", "random"))
    rollout_lambda: float = checked(0.0, "[0, 1]")
    rollout_samples: int = checked(8, ">= 1")
    value_rollouts: int = checked(0, ">= 0")
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

    steps: int = checked(100, ">= 0")
    batch_size: int = checked(128, ">= 1")
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
    iterations: int = checked(4, ">= 0")
    workers: int = checked(0, ">= 0", note="0: one per core")
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
            changes: dict[str, Any] = {}
            for section, keys in entry.items():
                if section != "at":
                    changes[section] = dataclasses.replace(getattr(out, section), **keys)
            out = dataclasses.replace(out, **changes)
        return dataclasses.replace(out, schedule=()) if self.schedule else out

    def scheduled_keys(self, iteration: int) -> dict[str, Any]:
        """The ``section.key`` settings that the schedule has changed by ``iteration``, with
        their values then (empty before the first entry): what a metrics line records."""
        now = self.at(iteration)
        return {f"{section}.{key}": getattr(getattr(now, section), key)
                for entry in self.schedule if entry["at"] <= iteration
                for section, keys in entry.items() if section != "at" for key in keys}


_SECTIONS: dict[str, type] = {
    "game": GameSection, "encoder": EncoderSection, "net": NetSection,
    "warm_start": WarmStartSection, "selfplay": SelfPlaySection, "replay": ReplaySection,
    "train": TrainSection, "gating": GatingSection, "anchors": AnchorsSection,
}
#: The sections a ``[[schedule]]`` entry may change: what an iteration does. The game, the
#: encoder, the network and the warm start make the run's networks what they are (a
#: checkpoint of another shape could not continue), and the top-level keys are the run's own.
SCHEDULABLE = ("selfplay", "replay", "train", "gating", "anchors")
#: Keys of those sections that a schedule may not change, and why.
_UNSCHEDULABLE = {
    ("train", "optimizer"): "the optimiser's state carries over from one iteration to the "
                            "next; start a new run from the network ([warm_start] init)",
    ("train", "lr_schedule"): "set train.lr in the schedule instead",
}


def _schedule(data: Any, source: str, iterations: int) -> tuple[dict[str, Any], ...]:
    """Check ``[[schedule]]`` (a list of tables, each ``at = N`` and ``section.key = value``
    pairs of :data:`SCHEDULABLE`) and return it sorted by ``at``, values typed as the
    sections' fields."""
    where = f"{source}: [[schedule]]"
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ConfigError(f"{where} must be an array of tables ([[schedule]] entries), got "
                          f"{data!r}")
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for n, raw in enumerate(data, 1):
        w = f"{where} entry {n}"
        at = raw.get("at")
        if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= max(iterations, 1):
            raise ConfigError(f"{w}: at must be an iteration number from 1 to iterations "
                              f"({iterations}), got {at!r}")
        if at in seen:
            raise ConfigError(f"{w}: another entry is also at iteration {at}; merge them")
        seen.add(at)
        entry: dict[str, Any] = {"at": at}
        for section, keys in raw.items():
            if section == "at":
                continue
            if section not in SCHEDULABLE or not isinstance(keys, dict):
                raise ConfigError(f"{w} (at = {at}): {section!r} cannot be scheduled; an entry "
                                  f"sets section.key = value for the sections "
                                  f"{', '.join(SCHEDULABLE)}")
            if not keys:
                continue
            for key in keys:
                if (section, key) in _UNSCHEDULABLE:
                    raise ConfigError(f"{w} (at = {at}): {section}.{key} cannot be scheduled: "
                                      f"{_UNSCHEDULABLE[section, key]}")
            cls = _SECTIONS[section]
            built = _build(cls, dict(keys), f"{w} (at = {at}): [{section}]")
            entry[section] = {k: getattr(built, k) for k in keys}
        if len(entry) == 1:
            raise ConfigError(f"{w} (at = {at}): changes nothing; give section.key = value "
                              "pairs, e.g. train.lr = 5e-4")
        out.append(entry)
    return tuple(sorted(out, key=lambda e: e["at"]))


def _check_value(where: str, key: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
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


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: "
                          f"{', '.join(known)}")
    kwargs = {k: _check_value(where, k, v, hints[k]) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except ValueError as e:  # a section that checks itself ([net])
        raise ConfigError(f"{where}: {e}") from None


def config_from_dict(data: dict[str, Any], source: str = "config") -> RunConfig:
    """Build and check a :class:`RunConfig` from a nested dict (a parsed TOML file).

    In ``[game]``, keys other than ``name`` and ``num_players`` are rule options (gathered
    into ``rules``).

    Raises:
        ConfigError: an unknown section or key, a wrong type, a value out of range, or rule
            and encoder options the game refuses.
    """
    top_known = [f.name for f in dataclasses.fields(RunConfig)]
    unknown = sorted(set(data) - set(top_known))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) or section(s) {', '.join(unknown)}; "
                          f"known: {', '.join(top_known)}")
    kwargs: dict[str, Any] = {}
    hints = typing.get_type_hints(RunConfig)
    for key, value in data.items():
        if key == "schedule":
            continue  # below, once iterations is known
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{key}] must be a table, got {value!r}")
            value = dict(value)
            if key == "game":
                rules = dict(value.pop("rules", {}) or {})
                for k in list(value):
                    if k not in ("name", "num_players"):
                        rules[k] = value.pop(k)
                value["rules"] = rules
            kwargs[key] = _build(_SECTIONS[key], value, f"{source}: [{key}]")
        else:
            kwargs[key] = _check_value(source, key, value, hints[key])
    if "schedule" in data:
        kwargs["schedule"] = _schedule(data["schedule"], source,
                                       kwargs.get("iterations", RunConfig.iterations))
    cfg = RunConfig(**kwargs)
    validate(cfg, source)
    for entry in cfg.schedule:  # each stage of the run is a whole, valid config
        validate(cfg.at(entry["at"]), f"{source}: [[schedule]] at = {entry['at']}")
    return cfg


def load_config(path: str | Path) -> RunConfig:
    """Read and check a TOML config file.

    Raises:
        ConfigError: unreadable file, bad TOML, or a bad key or value (named).
    """
    p = Path(path)
    try:
        data = tomllib.loads(read_regular(p, "a config", MAX_CONFIG_BYTES).decode("utf-8"))
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the config ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: not valid TOML ({e})") from None
    return config_from_dict(data, str(p))


def _need(cond: bool, source: str, message: str) -> None:
    if not cond:
        raise ConfigError(f"{source}: {message}")


def validate(cfg: RunConfig, source: str = "config") -> None:
    """Each field's bounds or choices (declared with :func:`checked`, made by
    :func:`check_fields`), the rules that tie fields together, and the game, encoder,
    network and agent specs built once (so a bad option fails here, before any work).

    Raises:
        ConfigError: the first problem found, named.
    """
    s = source
    check_fields(cfg, f"{s}: ")
    for name in _SECTIONS:
        check_fields(getattr(cfg, name), f"{s}: [{name}] ")
    sp, tr, ga, an, ws = cfg.selfplay, cfg.train, cfg.gating, cfg.anchors, cfg.warm_start
    _need((sp.rollout == "none") == (sp.rollout_lambda == 0.0), s,
          "[selfplay] rollout and rollout_lambda go together: rollout='none' with "
          "rollout_lambda=0, or a rollout with rollout_lambda > 0")
    _need(bool(sp.opponent) == (sp.opponent_share > 0), s,
          "[selfplay] opponent and opponent_share come together: an opponent spec and a "
          f"share above 0 (got opponent = {sp.opponent!r}, opponent_share = "
          f"{sp.opponent_share})")
    _need(cfg.net.aux_head or tr.aux_weight == TrainSection.aux_weight, s,
          f"[train] aux_weight = {tr.aux_weight} weighs the auxiliary head's loss: it needs "
          f"[net] aux_head = true")
    _need(cfg.net.ownership_head or tr.ownership_weight == TrainSection.ownership_weight, s,
          f"[train] ownership_weight = {tr.ownership_weight} weighs the ownership head's loss: "
          f"it needs [net] ownership_head = true")
    _need(tr.priority_alpha > 0 or tr.priority_beta == TrainSection.priority_beta, s,
          f"[train] priority_beta = {tr.priority_beta} corrects prioritized replay: it needs "
          "[train] priority_alpha > 0")
    _need(tr.value_target_mix + tr.rollout_target_mix <= 1.0, s,
          f"[train] value_target_mix + rollout_target_mix must be <= 1, got "
          f"{tr.value_target_mix} + {tr.rollout_target_mix}")
    _need(tr.rollout_target_mix == 0 or sp.value_rollouts > 0, s,
          f"[train] rollout_target_mix = {tr.rollout_target_mix} mixes in the rollouts' "
          f"result: it needs [selfplay] value_rollouts > 0")
    seen: dict[int, str] = {}
    for key, value in tr.lr_schedule.items():
        _need(key.isascii() and key.isdigit(), s,
              f"[train] lr_schedule: the key {key!r} is not an iteration number (0, 1, ...)")
        _need(int(key) not in seen, s, f"[train] lr_schedule: the keys {seen.get(int(key))!r} "
              f"and {key!r} name the same iteration")
        seen[int(key)] = key
        _need(not isinstance(value, bool) and isinstance(value, (int, float))
              and math.isfinite(value) and value > 0, s,
              f"[train] lr_schedule: iteration {key}'s learning rate must be a number > 0, "
              f"got {value!r}")
    _need(ga.elo1 > ga.elo0, s, "[gating] elo1 must be greater than elo0")
    _need(len(set(an.opponents)) == len(an.opponents), s, "[anchors] opponents must be distinct")
    _need(ws.init == ws.init.strip(), s,
          f"[warm_start] init must be a checkpoint path or \"\" (none), got {ws.init!r}")
    _need(ws.expert == "heuristic" or ws.expert.split(":")[0] == "mcts", s,
          f"[warm_start] expert must be 'heuristic' or an mcts:... spec, got {ws.expert!r}")
    _need(cfg.device == "auto" or cfg.device.split(":")[0] in ("cpu", "cuda", "mps"), s,
          f"device must be auto, cpu or cuda[:N], got {cfg.device!r}")
    _build_parts(cfg, s)


def _build_parts(cfg: RunConfig, s: str) -> None:
    """Make the game, encoder, network size and agent specs once, turning their errors into
    ConfigErrors."""
    from taluva_ai.agents.base import make_agent
    from taluva_ai.protocol import make_game

    _need(not cfg.game.rules.get("solo") or cfg.game.num_players == 1, s,
          f"[game]: the solo variant has one player: num_players = 1, got "
          f"{cfg.game.num_players}")
    try:
        game = make_game(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.rules)
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{s}: [game]: {e}") from None
    try:
        encoder = make_encoder_for(cfg)
    except ValueError as e:
        raise ConfigError(f"{s}: [encoder]: {e}") from None
    try:
        cfg.net.sizes()
    except ValueError as e:
        raise ConfigError(f"{s}: [net]: {e}") from None
    problem = cfg.net.problem_with(encoder, cfg.game.name)
    _need(problem is None, s, str(problem))
    if cfg.train.elimination_weight != TrainSection.elimination_weight:
        import numpy as np

        probe = np.zeros((1, max(cfg.game.num_players, 1), encoder.num_aux), dtype=np.float32)
        _need(encoder.num_aux > 0 and encoder.eliminated(probe) is not None, s,
              f"[train] elimination_weight = {cfg.train.elimination_weight}: the "
              f"{encoder.name} encoding (this game, these options) cannot tell which games "
              "ended with an elimination")
    if cfg.warm_start.games and cfg.warm_start.expert == "heuristic":
        state = game.new_initial_state(seed=0)
        _need(hasattr(state, "heuristic_values"), s, "[warm_start] expert='heuristic' needs a "
              "game with heuristic_values(); give an mcts:... expert")
    if cfg.selfplay.value_rollouts or cfg.selfplay.rollout != "none":
        state = game.new_initial_state(seed=0)
        _need(hasattr(state, "rollout"), s, f"[selfplay]: the {cfg.game.name} game has no "
              "compiled rollout (state.rollout()): rollout and value_rollouts need one")
    if cfg.warm_start.games and cfg.warm_start.expert != "heuristic":
        _refuse_time_budget(cfg.warm_start.expert, f"{s}: [warm_start] expert")
        try:
            agent = make_agent(cfg.warm_start.expert, seed=0)
        except ValueError as e:
            raise ConfigError(f"{s}: [warm_start] expert: {e}") from None
        _need(hasattr(agent, "root_policy"), s, "[warm_start] expert must be an MCTS agent")
    if cfg.selfplay.opponent:
        _need(cfg.game.num_players > 1, s, "[selfplay] opponent: the solo variant has no other "
              "seat for it to play")
        _check_fixed_agent(cfg.selfplay.opponent, "[selfplay] opponent", game, s,
                           "the run's own networks play the other seats")
    for op in cfg.anchors.opponents:
        _check_fixed_agent(op, "[anchors] opponents", game, s,
                           "the run's own networks play the anchors, with [anchors] az")
    for name, params in (("gating", cfg.gating.az), ("anchors", cfg.anchors.az)):
        check_az_params(params, f"{s}: [{name}] az")


def _check_fixed_agent(spec: str, key: str, game: Any, where: str, why: str) -> None:
    """Check an agent spec of a config key that takes fixed agents (``[anchors] opponents``,
    ``[selfplay] opponent``): any agent but ``az``, and ``az:builtin`` (the packaged network,
    a fixed one, for 2-player Taluva only), written without white space (the spec is also the
    player's name in the tournaments and records). A registered agent is made once with
    seed 0; a ``package.module:Class`` spec is checked by its form and parameters only:
    checking it imports, calls and constructs nothing (the run makes it when it plays).

    Raises:
        ConfigError: white space in the spec, a malformed spec, ``az:path=...`` (a run's file,
            which may change), a time budget (``time=...``: the games would not repeat), or
            a spec that does not make an agent for ``game`` (one line, naming ``key``)."""
    from taluva_ai.agents.base import known_agents, make_agent, parse_agent_spec, spec_key

    _need(not any(c.isspace() for c in spec), where,
          f"{key}: {spec!r} has white space in it; write an agent spec without any (e.g. "
          "az:builtin,sims=64)")
    head, _, rest = spec.partition(":")
    if head not in known_agents():
        cls_name = rest.partition(":")[0]
        _need(bool(head) and all(p.isidentifier() for p in head.split("."))
              and cls_name.isidentifier(), where,
              f"{key}: unknown agent {head!r}; known: {', '.join(known_agents())}, or "
              "package.module:Class")
        try:
            spec_key(spec)  # the parameters' form; nothing is imported
        except ValueError as e:
            raise ConfigError(f"{where}: {key}: {e}") from None
        _refuse_time_budget(spec, f"{where}: {key}")
        return
    try:
        name, params = parse_agent_spec(spec)
    except ValueError as e:
        raise ConfigError(f"{where}: {key}: {e}") from None
    _need(name != "az" or str(params.get("path")) == BUILTIN, where,
          f"{key}: fixed agents only: az:builtin is one, {spec} is not ({why})")
    _refuse_time_budget(spec, f"{where}: {key}")
    try:
        agent = make_agent(spec, seed=0)
        check_game = getattr(agent, "check_game", None)
        if check_game is not None:  # az:builtin: 2-player Taluva only
            check_game(game)
    except (ValueError, ImportError, AttributeError) as e:  # CheckpointError is a ValueError
        raise ConfigError(f"{where}: {key}: {e}") from None


def _refuse_time_budget(spec: str, where: str, shown: str | None = None) -> None:
    """Refuse an agent spec with a time budget (``time=S``, however the agent is named):
    a run's games would depend on the machine's speed and load, so they would not repeat.
    ``shown``: what the message quotes (default ``spec``).

    Raises:
        ConfigError: the spec has one (one line, naming ``where``)."""
    from taluva_ai.agents.base import time_budget

    try:
        budget = time_budget(spec)  # the arena's own reading of time=, however it is named
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None
    _need(budget is None, where,
          f"{spec if shown is None else shown} has a time budget, which makes a run's games "
          "depend on the machine's speed and load; drop time=... (a search takes a number "
          "of simulations, sims=..., instead)")


def check_az_params(params: str, where: str) -> None:
    """Check ``az`` agent parameters (``"sims=32,rollout=greedy"``) without a checkpoint.

    Raises:
        ConfigError: a malformed or unknown parameter, ``path`` given (the run sets it), or
            a time budget (the games would not repeat).
    """
    from taluva_ai.agents.base import parse_agent_spec
    from taluva_ai.agents.mcts import MCTSConfig

    try:
        _, p = parse_agent_spec("az:" + params if params else "az")
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None
    if "path" in p or "seed" in p:
        raise ConfigError(f"{where}: path and seed are set by the run, not here")
    _refuse_time_budget("az:" + params if params else "az", where, repr(params))
    own = set(AZ_OWN_PARAMETERS) - {"path"}
    mcts = {f.name for f in dataclasses.fields(MCTSConfig)} - {*AZ_NO_MCTS_PARAMETERS,
                                                               "compiled"}
    bad = sorted(set(p) - own - mcts)
    if bad:
        raise ConfigError(f"{where}: unknown parameter(s) {', '.join(bad)}; known: "
                          f"{', '.join(sorted(own | mcts))}")
    try:  # the values too, before any work (MCTSConfig checks types and ranges)
        MCTSConfig(**{k: v for k, v in p.items() if k in mcts and k not in own})
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None
    lam = p.get("lambda", 0.0)
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
        raise ConfigError(f"{where}: lambda must be a number in [0, 1], got {lam!r}")


def make_encoder_for(cfg: RunConfig) -> Any:
    """The run's network encoder (``[encoder]`` options, 0 meaning the default)."""
    from taluva_ai.agents.alphazero.encoder import make_encoder

    opts = {k: v for k, v in dataclasses.asdict(cfg.encoder).items() if v}
    return make_encoder(cfg.game.name, cfg.game.num_players, **opts)


def config_to_toml(cfg: RunConfig) -> str:
    """The config as TOML text (the run directory's ``config.toml``; written by ``tomli_w``),
    with the rule options among ``[game]``'s keys; reading it back gives the same config."""
    import tomli_w

    d = cfg.to_dict()
    schedule = d.pop("schedule", [])
    game = d["game"]
    game.update({k: v for k, v in game.pop("rules").items() if v is not None})
    text = tomli_w.dumps(d)
    for entry in schedule:  # as written by hand: [[schedule]], at, then section.key = value
        text += f"\n[[schedule]]\nat = {entry['at']}\n"
        for section, keys in entry.items():
            if section != "at":
                text += "".join(f"{section}.{tomli_w.dumps({k: v})}" for k, v in keys.items())
    return text
