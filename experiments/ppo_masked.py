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

    pip install 'taluva-ai[rl]'   # torch==2.13.0 (CPU build) and sb3-contrib
    python experiments/ppo_masked.py --total-steps 2000000 --out runs/ppo
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
from taluva_ai.games.taluva.encoding import NUM_ACTION_CHANNELS


@dataclass
class Config:
    num_envs: int = 64
    num_steps: int = 64  # rollout length per env and update
    total_steps: int = 1_000_000  # env steps (decisions of the agent), all envs together
    opponents: list[str] = field(default_factory=lambda: ["random"])
    view_radius: int = 13
    channels: int = 32
    blocks: int = 3
    lr: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 3
    num_minibatches: int = 4
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    eval_every: int = 20  # updates between evaluations (0: only at the end)
    eval_games: int = 200
    threads: int = 2
    seed: int = 0
    out: str = "runs/ppo"


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
        self.stem = nn.Sequential(nn.Conv2d(planes, channels, 3, padding=1), nn.ReLU())
        self.trunk = nn.Sequential(*[Block(channels) for _ in range(blocks)])
        self.policy = nn.Conv2d(channels, NUM_ACTION_CHANNELS, 1)
        self.value = nn.Sequential(nn.Linear(channels, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(self.stem(x))
        logits = self.policy(h).flatten(1)  # channel-major, then row, col = view ids
        v = self.value(h.mean(dim=(2, 3))).squeeze(-1)
        return logits, v


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal ids to -1e9; a row with no legal id (a reset step) keeps its logits."""
    empty = ~mask.any(dim=1, keepdim=True)
    return torch.where(mask | empty, logits, torch.full_like(logits, -1e9))


def evaluate(net: PolicyValueNet, cfg: Config, games: int, seed: int) -> float:
    """Win rate of the greedy (argmax) policy in ``games`` games against ``cfg.opponents``
    (one game per env; the first episode of each env counts)."""
    env = TaluvaVectorEnv(games, num_players=len(cfg.opponents) + 1, opponents=cfg.opponents,
                          view_radius=cfg.view_radius)
    obs, _ = env.reset(seed=seed)
    result = np.full(games, np.nan)
    while np.isnan(result).any():
        with torch.no_grad():
            logits, _ = net(torch.from_numpy(obs["observation"]))
            m = torch.from_numpy(obs["action_mask"]).bool()
            act = masked_logits(logits, m).argmax(dim=1).numpy()
        obs, r, term, trunc, _ = env.step(act)
        first = (term | trunc) & np.isnan(result)
        result[first] = r[first] > 0
    return float(result.mean())


def train(cfg: Config) -> dict[str, Any]:
    """Run PPO; return the last metrics line."""
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1))
    env = TaluvaVectorEnv(cfg.num_envs, num_players=len(cfg.opponents) + 1,
                          opponents=cfg.opponents, view_radius=cfg.view_radius)
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
    obs, _ = env.reset(seed=cfg.seed)
    steps = 0
    t0 = time.time()
    updates = max(1, cfg.total_steps // (n * t_len))
    line: dict[str, Any] = {}
    with (out / "metrics.jsonl").open("w") as log:
        for update in range(1, updates + 1):
            games, wins = 0, 0
            for t in range(t_len):
                x = torch.from_numpy(obs["observation"].copy())
                m = torch.from_numpy(obs["action_mask"]).bool()
                with torch.no_grad():
                    logits, v = net(x)
                    dist = torch.distributions.Categorical(logits=masked_logits(logits, m))
                    a = dist.sample()
                obs_buf[t], mask_buf[t], act_buf[t] = x, m, a
                logp_buf[t], val_buf[t] = dist.log_prob(a), v
                obs, r, term, trunc, _ = env.step(a.numpy())
                rew_buf[t] = torch.from_numpy(r.astype(np.float32))
                done_buf[t] = torch.from_numpy((term | trunc).astype(np.float32))
                games += int((term | trunc).sum())
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
            size = b_act.shape[0]
            mb = max(1, size // cfg.num_minibatches)
            stats = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0}
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
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                    opt.step()
                    stats = {"pg_loss": pg.item(), "v_loss": v_loss.item(),
                             "entropy": ent.item()}
            line = {"update": update, "steps": steps, "seconds": round(time.time() - t0, 1),
                    "games": games, "train_win_rate": wins / games if games else None, **stats}
            if (cfg.eval_every and update % cfg.eval_every == 0) or update == updates:
                line["eval_win_rate"] = evaluate(net, cfg, cfg.eval_games, seed=10_000 + update)
            log.write(json.dumps(line) + "\n")
            log.flush()
            print(json.dumps(line), flush=True)
    torch.save(net.state_dict(), out / "model.pt")
    return line


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Config):
        if f.name == "opponents":
            ap.add_argument("--opponents", nargs="+", default=["random"])
            continue
        default = f.default
        ap.add_argument("--" + f.name.replace("_", "-"), type=type(default), default=default)
    args = vars(ap.parse_args(argv))
    train(Config(**args))


if __name__ == "__main__":
    main()
