"""Masked PPO (CleanRL-style, one file) on the native ``TaluvaVectorEnv`` against a fixed opponent.

The policy is fully convolutional: a small residual CNN over the view's planes ends in 14
channels per pixel, which are exactly the view's action ids (``id = channel * S^2 + pixel``,
docs/encoding.md), so the logits need no dense layer; illegal ids get ``-1e9``. The value head
pools the trunk globally. Rewards are the final returns (+1 win, -1 loss), undiscounted.

With next-step autoreset, the step after a game ended only resets it: its observation has an
empty mask, and such steps are left out of the losses.

Writes ``<out>/config.json``, ``<out>/metrics.jsonl`` (one line per update: steps, seconds, games
finished, win rate of the finished training games, losses; evaluation lines carry
``eval_win_rate``) and ``<out>/model.pt`` (a ``state_dict``; load with
``torch.load(path, weights_only=True)``).

With ``--kickstart beta`` the loss gains a distillation term towards the greedy player's
choices on the visited states (kickstarting, Schmitt et al. 2018); with it the default network
reaches 93% wins against random in 28 minutes on 2 cores (docs/envs.md).

    pip install 'taluva-ai[rl]'   # torch==2.13.0 (CPU build) and sb3-contrib
    python experiments/ppo_masked.py --max-minutes 28 --kickstart 1.0 --out runs/ppo_kickstart
    python experiments/ppo_masked.py --eval-model runs/ppo_kickstart/model.pt --eval-games 1000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from taluva_ai.envs import TaluvaVectorEnv
from taluva_ai.games.taluva.encoding import (
    NUM_ACTION_CHANNELS,
    make_view,
    num_planes,
    plane_names,
)


@dataclass
class Config:
    num_envs: int = 64
    num_steps: int = 32  # rollout length per env and update
    total_steps: int = 1_000_000  # env steps (decisions of the agent), all envs together
    max_minutes: float = 0.0  # stop after this wall-clock time (0: no limit), then evaluate
    opponents: list[str] = field(default_factory=lambda: ["random"])
    seats: str = "all"  # "all": the batch is split evenly over the seats; or one seat, e.g. "0"
    shaping: float = 0.0  # beta of the temple/tower shaping reward (0: the final result only)
    view_radius: int = 13
    channels: int = 16
    blocks: int = 1
    lr: float = 1e-3
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 3
    num_minibatches: int = 4
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    warm_start_games: int = 0  # behaviour cloning of the greedy player on this many games first
    warm_start_epochs: int = 4
    kickstart: float = 0.0  # weight of the distillation loss towards the greedy teacher
    kickstart_steps: int = 0  # env steps over which that weight decays linearly to 0 (0: kept)
    eval_every: int = 20  # updates between evaluations (0: only at the end)
    eval_games: int = 200
    eval_sample: bool = True  # evaluate the trained (sampling) policy; False: its argmax
    threads: int = 2
    seed: int = 0
    out: str = "runs/ppo"
    eval_model: str = ""  # only evaluate this model.pt (eval_games, seed) and print the result

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad setting (before any work starts)."""
        from taluva_ai.envs.core import BUILTIN_OPPONENTS

        if not 1 <= len(self.opponents) <= 3:
            raise ValueError(f"--opponents: 1 to 3 names, got {len(self.opponents)}")
        for o in self.opponents:
            if o not in BUILTIN_OPPONENTS:
                raise ValueError(f"--opponents: unknown opponent {o!r}; known: "
                                 f"{', '.join(BUILTIN_OPPONENTS)}")
        seats = len(self.opponents) + 1
        if self.seats != "all" and self.seats not in [str(k) for k in range(seats)]:
            raise ValueError(f"--seats: 'all' or a seat 0..{seats - 1}, got {self.seats!r}")
        spread = seats if self.seats == "all" else 1
        for name, low in (("num_envs", spread), ("num_steps", 1), ("total_steps", 1),
                          ("channels", 1), ("blocks", 0), ("update_epochs", 1),
                          ("num_minibatches", 1), ("warm_start_games", 0),
                          ("warm_start_epochs", 1), ("kickstart_steps", 0), ("eval_every", 0),
                          ("eval_games", spread), ("threads", 1)):
            value = getattr(self, name)
            if value < low:
                why = " (one game per seat at least)" if low == spread > 1 else ""
                raise ValueError(f"--{name.replace('_', '-')} must be at least {low}{why}, "
                                 f"got {value}")
        for name in ("max_minutes", "kickstart", "lr"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got "
                                 f"{getattr(self, name)}")
        make_view(self.view_radius)  # ValueError naming view_radius and its range


#: ``--help`` texts (the comments above, for the flags that need one).
HELP = {
    "num_envs": "games stepped together (split evenly over the seats)",
    "num_steps": "rollout length per game and update",
    "total_steps": "agent decisions over all games before stopping",
    "max_minutes": "stop after this wall-clock time, then evaluate (0: no limit)",
    "opponents": "built-in opponents (random, greedy), one per other seat",
    "seats": "'all' (split the games over the seats) or one seat number",
    "shaping": "beta of the temple/tower shaping reward (0: the final result only)",
    "view_radius": "radius of the observation's view (docs/encoding.md)",
    "warm_start_games": "behaviour cloning of the greedy player on this many games first",
    "kickstart": "weight of the distillation loss towards the greedy teacher (0: off)",
    "kickstart_steps": "agent steps over which that weight decays linearly to 0, updated "
                       "once per update (0: kept constant)",
    "eval_every": "updates between evaluations (0: only at the end)",
    "eval_games": "games per evaluation, split over the seats",
    "eval_sample": "evaluate the sampling policy (--no-eval-sample: its argmax)",
    "eval_model": "only evaluate this model.pt (its run's config.json gives the network "
                  "and opponents) and print the result as JSON",
}


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1)
        self.c2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.c2(torch.relu(self.c1(x))))


class PolicyValueNet(nn.Module):
    """Planes ``[B, C, S, S]`` -> (logits ``[B, 14 S^2]`` in view id order, value ``[B]``)."""

    def __init__(self, planes: int, channels: int, blocks: int) -> None:
        super().__init__()
        # a 1x1 stem mixes the planes per hex (a 3x3 stem over 49 planes costs 9x more and
        # dominated the time); the blocks and the 3x3 policy head see 3 hexes around
        self.stem = nn.Sequential(nn.Conv2d(planes, channels, 1), nn.ReLU())
        self.trunk = nn.Sequential(*[Block(channels) for _ in range(blocks)])
        self.policy = nn.Conv2d(channels, NUM_ACTION_CHANNELS, 3, padding=1)
        self.value = nn.Sequential(nn.Linear(channels, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.contiguous(memory_format=torch.channels_last)  # 2-3x faster convs on CPU
        h = self.trunk(self.stem(x))
        logits = self.policy(h).contiguous().flatten(1)  # channel-major, then row, col = view ids
        v = self.value(h.mean(dim=(2, 3))).squeeze(-1)
        return logits, v


class SeatedVectorEnv:
    """``num_envs`` games split evenly over the agent's seats: one :class:`TaluvaVectorEnv`
    per seat (its ``agent_seat``), observations, masks and rewards concatenated in seat order.
    Seat 0 moves first, and in random play the first seat wins only about 36% of 2-player
    games, so training and evaluation use every seat unless ``seats`` names one."""

    def __init__(self, num_envs: int, cfg: Config) -> None:
        n = len(cfg.opponents) + 1
        seats = list(range(n)) if cfg.seats == "all" else [int(cfg.seats)]
        parts = np.array_split(np.arange(num_envs), min(len(seats), num_envs))
        self.seats = seats[:len(parts)]
        self.envs = [TaluvaVectorEnv(len(ix), num_players=n, opponents=cfg.opponents,
                                     agent_seat=seat, view_radius=cfg.view_radius)
                     for seat, ix in zip(self.seats, parts, strict=True)]
        self.seat_of = np.concatenate([np.full(len(ix), seat) for seat, ix in
                                       zip(self.seats, parts, strict=True)])
        self.splits = np.cumsum([len(ix) for ix in parts])[:-1]
        self.single_observation_space = self.envs[0].single_observation_space
        self.single_action_space = self.envs[0].single_action_space
        names = plane_names(n)
        self._temples = names.index("supply_temples/0")
        self._towers = names.index("supply_towers/0")
        self._n = n
        self.view_radius = cfg.view_radius

    @staticmethod
    def _cat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def reset(self, seed: int) -> dict[str, np.ndarray]:
        obs = self._cat([env.reset(seed=seed + 1_000_003 * k)[0]
                         for k, env in enumerate(self.envs)])
        self.check_movable(obs, np.zeros(len(self.seat_of), dtype=bool))
        return obs

    def step(self, actions: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """Step every game; return (observations, agent rewards float[N], done bool[N])."""
        parts = np.split(actions, self.splits)
        out = [env.step(a) for env, a in zip(self.envs, parts, strict=True)]
        obs = self._cat([o[0] for o in out])
        reward = np.concatenate([o[1] for o in out])
        done = np.concatenate([o[2] | o[3] for o in out])
        self.check_movable(obs, done)
        return obs, reward, done

    def check_movable(self, obs: dict[str, np.ndarray], done: np.ndarray) -> None:
        """Raise ``RuntimeError`` if a game goes on but has no legal id in the view (every
        legal action lies outside it: a view radius too small for the island)."""
        stuck = np.flatnonzero(~obs["action_mask"].any(axis=1) & ~done)
        if stuck.size:
            raise RuntimeError(f"game {int(stuck[0])} goes on but every legal action lies "
                               f"outside the view of radius {self.view_radius}; use a larger "
                               "--view-radius (docs/encoding.md)")

    def teacher_targets(self) -> np.ndarray:
        """``bool[N, A]``: the legal view ids of the greedy player's best heuristic value in
        each game's current decision (all of them: it breaks ties at random); a row with no
        legal id (a reset step) is all False."""
        h = np.concatenate([env.heuristic_action_values() for env in self.envs])
        best = h.max(axis=1, keepdims=True)
        return np.isfinite(h) & (h == best)

    def potential(self, planes: np.ndarray) -> np.ndarray:
        """Shaping potential per game from the supply planes: temples and towers the agent
        (slot 0) has built minus the most any opponent has built (``float32[N]``)."""
        c = planes.shape[-1] // 2  # the view centre is always a valid hex
        built = []
        for j in range(self._n):
            t = 3.0 * (1.0 - planes[:, self._temples + j, c, c])
            w = 2.0 * (1.0 - planes[:, self._towers + j, c, c])
            built.append(np.rint(t + w))
        others = np.max(built[1:], axis=0)
        return (built[0] - others).astype(np.float32)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal ids to -1e9; a row with no legal id (a reset step) keeps its logits."""
    empty = ~mask.any(dim=1, keepdim=True)
    return torch.where(mask | empty, logits, torch.full_like(logits, -1e9))


def kickstart_weight(cfg: Config, steps: int) -> float:
    """Weight of the distillation loss after ``steps`` env steps: ``cfg.kickstart``, decaying
    linearly to 0 at ``cfg.kickstart_steps`` (kept constant when that is 0)."""
    if cfg.kickstart <= 0:
        return 0.0
    if cfg.kickstart_steps <= 0:
        return cfg.kickstart
    return cfg.kickstart * max(0.0, 1.0 - steps / cfg.kickstart_steps)


def distillation_loss(logits: torch.Tensor, best: torch.Tensor) -> torch.Tensor:
    """Cross-entropy from the teacher's distribution (uniform over its best ids, ``best
    bool[B, A]``) to the masked policy ``logits [B, A]``, averaged over the rows that have a
    best id (kickstarting, Schmitt et al. 2018, arXiv:1803.03835; here the teacher is the
    greedy player, on the states the student visits, as in DAgger)."""
    rows = best.any(dim=1)
    if not bool(rows.any()):
        return logits.sum() * 0.0
    target = best[rows].float()
    target = target / target.sum(dim=1, keepdim=True)
    logp = torch.log_softmax(logits[rows], dim=1)
    return -(target * logp).sum(dim=1).mean()


def evaluate(net: PolicyValueNet, cfg: Config, games: int, seed: int) -> dict[str, float]:
    """Win rate of the policy (sampled, or its argmax with ``cfg.eval_sample=False``) in
    ``games`` games against ``cfg.opponents``,
    the games split evenly over the seats (one game per env; the first episode counts).
    Returns ``{"eval_win_rate": ..., "eval_win_rate/seat<k>": ...}``."""
    env = SeatedVectorEnv(games, cfg)
    obs = env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed)
    result = np.full(games, np.nan)
    while np.isnan(result).any():
        with torch.no_grad():
            logits, _ = net(torch.from_numpy(obs["observation"]))
            m = torch.from_numpy(obs["action_mask"]).bool()
            logits = masked_logits(logits, m)
            if cfg.eval_sample:
                act = torch.multinomial(logits.softmax(dim=1), 1, generator=gen)[:, 0].numpy()
            else:
                act = logits.argmax(dim=1).numpy()
        obs, r, done = env.step(act)
        first = done & np.isnan(result)
        result[first] = r[first] > 0
    out = {"eval_win_rate": float(result.mean())}
    for seat in env.seats:
        out[f"eval_win_rate/seat{seat}"] = float(result[env.seat_of == seat].mean())
    return out


def greedy_demonstrations(cfg: Config, games: int, seed: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The greedy player's decisions in ``games`` games against ``cfg.opponents`` (its seats
    split as in training), played on the vector env with the teacher's best ids
    (:meth:`SeatedVectorEnv.teacher_targets`, one of them at random): ``(planes
    float16[N, C, S, S], mask bool[N, A], best bool[N, A])``, where ``best`` marks every legal
    id of the greedy score's maximum over the view (the view hides the rare legal actions
    outside it, docs/encoding.md); only the first game of each env counts."""
    env = SeatedVectorEnv(games, cfg)
    obs = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    live = np.ones(games, dtype=bool)
    planes, masks, bests = [], [], []
    while live.any():
        best = env.teacher_targets()
        keep = live & best.any(axis=1)
        planes.append(obs["observation"][keep].astype(np.float16))
        masks.append(obs["action_mask"][keep].astype(bool))
        bests.append(best[keep])
        # one best id at random (the teacher has one wherever the mask has a legal id); a reset
        # step's row has none and takes id 0, which the env ignores
        score = np.where(best, rng.random(best.shape), -1.0)
        obs, _, done = env.step(score.argmax(axis=1))
        live &= ~done
    return np.concatenate(planes), np.concatenate(masks), np.concatenate(bests)


def warm_start(net: nn.Module, opt: torch.optim.Optimizer, cfg: Config) -> dict[str, float]:
    """Behaviour cloning: fit the policy to the greedy player's choices (cross-entropy to the
    uniform distribution over its best-scored legal ids), as AlphaGo's supervised policy
    preceded its RL stage (Silver et al. 2016). Returns the number of samples and, for the
    last epoch, the mean loss and the share of samples whose argmax is one of the best ids."""
    x, m, best = greedy_demonstrations(cfg, cfg.warm_start_games, seed=cfg.seed + 500_000)
    size, mb = len(x), 256
    stats: dict[str, float] = {"warm_start_samples": size}
    for _ in range(cfg.warm_start_epochs):
        perm = torch.randperm(size)
        losses, hits = [], 0
        for i in range(0, size, mb):
            idx = perm[i:i + mb].numpy()
            logits, _ = net(torch.from_numpy(x[idx].astype(np.float32)))
            logits = masked_logits(logits, torch.from_numpy(m[idx]))
            target = torch.from_numpy(best[idx])
            loss = distillation_loss(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            hits += int(target.gather(1, logits.argmax(dim=1, keepdim=True)).sum())
        stats["warm_start_loss"] = float(np.mean(losses))
        stats["warm_start_accuracy"] = hits / size
    return stats


def train(cfg: Config) -> dict[str, Any]:
    """Run PPO; return the last metrics line.

    Raises:
        ValueError: a bad setting (:meth:`Config.validate`), before any work.
        RuntimeError: a game left with no legal id in the view (a too small ``view_radius``).
    """
    cfg.validate()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1))
    env = SeatedVectorEnv(cfg.num_envs, cfg)
    c, s = env.single_observation_space["observation"].shape[:2]
    a_n = env.single_action_space.n
    net = PolicyValueNet(c, cfg.channels, cfg.blocks)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)
    n, t_len = cfg.num_envs, cfg.num_steps
    obs_buf = torch.zeros((t_len, n, c, s, s))
    mask_buf = torch.zeros((t_len, n, a_n), dtype=torch.bool)
    act_buf = torch.zeros((t_len, n), dtype=torch.long)
    logp_buf = torch.zeros((t_len, n))
    rew_buf = torch.zeros((t_len, n))
    done_buf = torch.zeros((t_len, n))
    val_buf = torch.zeros((t_len, n))
    teach_buf = torch.zeros((t_len, n, a_n), dtype=torch.bool) if cfg.kickstart else None
    obs = env.reset(seed=cfg.seed)
    phi = env.potential(obs["observation"])
    steps = 0
    t0 = time.time()
    updates = max(1, cfg.total_steps // (n * t_len))
    line: dict[str, Any] = {}
    with (out / "metrics.jsonl").open("w") as log:
        if cfg.warm_start_games:
            line = {"update": 0, "steps": 0, **warm_start(net, opt, cfg)}
            line["seconds"] = round(time.time() - t0, 1)
            line.update(evaluate(net, cfg, cfg.eval_games, seed=10_000))
            log.write(json.dumps(line) + "\n")
            print(json.dumps(line), flush=True)
        for update in range(1, updates + 1):
            games, wins = 0, 0
            beta = kickstart_weight(cfg, steps)
            for t in range(t_len):
                if teach_buf is not None and beta > 0:
                    teach_buf[t] = torch.from_numpy(env.teacher_targets())
                x = torch.from_numpy(obs["observation"].copy())
                m = torch.from_numpy(obs["action_mask"]).bool()
                with torch.no_grad():
                    logits, v = net(x)
                    dist = torch.distributions.Categorical(logits=masked_logits(logits, m))
                    a = dist.sample()
                obs_buf[t], mask_buf[t], act_buf[t] = x, m, a
                logp_buf[t], val_buf[t] = dist.log_prob(a), v
                obs, r, done = env.step(a.numpy())
                new_phi = env.potential(obs["observation"])
                # shaping r + beta (phi' - phi); none on the reset step after a game
                shaped = r + cfg.shaping * (new_phi - phi) * m.any(dim=1).numpy()
                phi = new_phi
                rew_buf[t] = torch.from_numpy(shaped.astype(np.float32))
                done_buf[t] = torch.from_numpy(done.astype(np.float32))
                games += int(done.sum())
                wins += int((r > 0).sum())
                steps += n
            with torch.no_grad():
                _, next_v = net(torch.from_numpy(obs["observation"].copy()))
                adv = torch.zeros((t_len, n))
                last = torch.zeros(n)
                for t in reversed(range(t_len)):
                    nv = next_v if t == t_len - 1 else val_buf[t + 1]
                    nonterm = 1.0 - done_buf[t]
                    delta = rew_buf[t] + cfg.gamma * nv * nonterm - val_buf[t]
                    last = delta + cfg.gamma * cfg.gae_lambda * nonterm * last
                    adv[t] = last
                ret = adv + val_buf
            valid = mask_buf.any(dim=2).reshape(-1)
            b_obs = obs_buf.reshape(-1, c, s, s)[valid]
            b_mask = mask_buf.reshape(-1, a_n)[valid]
            b_act, b_logp = act_buf.reshape(-1)[valid], logp_buf.reshape(-1)[valid]
            b_adv, b_ret = adv.reshape(-1)[valid], ret.reshape(-1)[valid]
            b_teach = teach_buf.reshape(-1, a_n)[valid] if teach_buf is not None else None
            size = b_act.shape[0]
            mb = max(1, size // cfg.num_minibatches)
            stats = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "kickstart_weight": beta}
            for _ in range(cfg.update_epochs):
                perm = torch.randperm(size)
                for i in range(0, size, mb):
                    idx = perm[i:i + mb]
                    logits, v = net(b_obs[idx])
                    dist = torch.distributions.Categorical(
                        logits=masked_logits(logits, b_mask[idx]))
                    logp = dist.log_prob(b_act[idx])
                    ratio = (logp - b_logp[idx]).exp()
                    a_ = b_adv[idx]
                    a_ = (a_ - a_.mean()) / (a_.std() + 1e-8) if a_.numel() > 1 else a_
                    pg = torch.max(-a_ * ratio,
                                   -a_ * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
                    v_loss = 0.5 * ((v - b_ret[idx]) ** 2).mean()
                    ent = dist.entropy().mean()
                    loss = pg + cfg.vf_coef * v_loss - cfg.ent_coef * ent
                    if b_teach is not None and beta > 0:
                        ks = distillation_loss(dist.logits, b_teach[idx])
                        loss = loss + beta * ks
                        stats["kickstart_loss"] = ks.item()
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                    opt.step()
                    stats.update(pg_loss=pg.item(), v_loss=v_loss.item(),
                                 entropy=ent.item())
            line = {"update": update, "steps": steps, "seconds": round(time.time() - t0, 1),
                    "games": games, "train_win_rate": wins / games if games else None, **stats}
            out_of_time = cfg.max_minutes > 0 and time.time() - t0 > 60 * cfg.max_minutes
            if out_of_time or (cfg.eval_every and update % cfg.eval_every == 0) or \
                    update == updates:
                line.update(evaluate(net, cfg, cfg.eval_games, seed=10_000 + update))
            log.write(json.dumps(line) + "\n")
            log.flush()
            print(json.dumps(line), flush=True)
            if out_of_time:
                break
    torch.save(net.state_dict(), out / "model.pt")
    plot_curve(out / "metrics.jsonl", out / "curve.png")
    return line


def plot_curve(metrics: Path, path: Path) -> None:
    """Plot the training win rate (finished training games, per update) and the evaluation
    win rates against wall-clock minutes from a ``metrics.jsonl``; write a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [json.loads(x) for x in metrics.read_text().splitlines() if x.strip()]
    fig, ax = plt.subplots(figsize=(7, 4))
    tr = [(x["seconds"] / 60, x["train_win_rate"]) for x in lines
          if x.get("train_win_rate") is not None]
    if tr:
        ax.plot(*zip(*tr, strict=True), color="0.7", lw=1, label="training games (sampled)")
    ev = [(x["seconds"] / 60, x["eval_win_rate"]) for x in lines if "eval_win_rate" in x]
    if ev:
        ax.plot(*zip(*ev, strict=True), "o-", color="C0", label="evaluation (all seats)")
    ax.axhline(0.9, color="C3", ls="--", lw=1, label="90%")
    ax.set_xlabel("wall-clock minutes")
    ax.set_ylabel("win rate against random")
    ax.set_ylim(0, 1)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Config):
        if f.name == "opponents":
            ap.add_argument("--opponents", nargs="+", default=["random"],
                            help=HELP["opponents"] + " (default: random)")
            continue
        default = f.default
        flag = "--" + f.name.replace("_", "-")
        text = HELP.get(f.name, "") + (" " if f.name in HELP else "") + "(default: %(default)s)"
        if isinstance(default, bool):
            ap.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                            help=HELP.get(f.name))
        else:
            ap.add_argument(flag, type=type(default), default=default, help=text)
    args = vars(ap.parse_args(argv))
    cfg = Config(**args)
    try:
        if cfg.eval_model:
            cfg = model_config(cfg)
        cfg.validate()
    except ValueError as e:
        ap.error(str(e))
    if cfg.eval_model:
        print(json.dumps(evaluate_model(cfg)), flush=True)
        return
    train(cfg)


def model_config(cfg: Config) -> Config:
    """``cfg`` with the network and game settings (``channels``, ``blocks``, ``view_radius``,
    ``opponents``) of the run that wrote ``cfg.eval_model``, read from the ``config.json``
    beside it; ``cfg`` unchanged when there is none."""
    saved = Path(cfg.eval_model).parent / "config.json"
    if not saved.is_file():
        return cfg
    try:
        run = json.loads(saved.read_text())
        keep = {k: run[k] for k in ("channels", "blocks", "view_radius", "opponents")}
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{saved}: not a config.json of this script ({e})") from None
    return dataclasses.replace(cfg, **keep)


def evaluate_model(cfg: Config) -> dict[str, Any]:
    """Load ``cfg.eval_model`` (a ``model.pt`` written by :func:`train` with
    ``cfg.channels``, ``cfg.blocks`` and ``cfg.opponents``; :func:`main` reads them from the
    run's ``config.json``) and return :func:`evaluate`'s win rates over ``cfg.eval_games``
    games (seed ``cfg.seed``). A shared win (3-4 players) counts as a win.

    Raises:
        SystemExit: a missing, unreadable or foreign model file (one line naming it).
    """
    cfg.validate()
    torch.set_num_threads(cfg.threads)
    net = PolicyValueNet(num_planes(len(cfg.opponents) + 1), cfg.channels, cfg.blocks)
    path = Path(cfg.eval_model)
    if not path.is_file():
        raise SystemExit(f"--eval-model {path}: no such file" if not path.exists() else
                         f"--eval-model {path}: not a file")
    try:
        state = torch.load(path, weights_only=True)
    except Exception as e:  # torch raises many kinds for a corrupt or foreign file
        raise SystemExit(f"--eval-model {path}: cannot be read as a saved state_dict "
                         f"({type(e).__name__})") from None
    try:
        net.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as e:
        first = next((ln.strip() for ln in str(e).splitlines()[1:] if ln.strip()), str(e))
        raise SystemExit(f"--eval-model {path}: its shapes do not fit a network with "
                         f"--channels {cfg.channels} --blocks {cfg.blocks} over "
                         f"{net.stem[0].in_channels} planes ({len(cfg.opponents) + 1} players); "
                         f"{first[:160]}") from None
    out = {"model": cfg.eval_model, "eval_games": cfg.eval_games, "seed": cfg.seed,
           "eval_sample": cfg.eval_sample}
    out.update(evaluate(net, cfg, cfg.eval_games, seed=cfg.seed))
    return out


if __name__ == "__main__":
    main()
