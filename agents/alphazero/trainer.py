"""The AlphaZero trainer (:class:`Trainer`): optimiser steps of the policy, value, auxiliary and
ownership losses on replay batches (Silver et al. 2017; KataGo, Wu 2019), for the training
loop of :mod:`taluva_ai.agents.alphazero.train` (which re-exports it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from taluva_ai.agents.alphazero.net import (
    TRAINING_HEADS,
    PolicyValueNet,
    masked_log_softmax,
)
from taluva_ai.agents.alphazero.replay import Batch, ReplayBuffer


class Trainer:
    """Optimiser steps on replay batches: cross-entropy of the masked policy with the search
    policy plus ``value_weight`` x the mean squared error of the value per player slot
    (Silver et al. 2017), plus, for a network with an auxiliary head, ``aux_weight`` x the
    mean squared error of its predictions over the known auxiliary targets, and for one with
    an ownership head, ``ownership_weight`` x the binary cross-entropy of its logits per board
    pixel and player slot over the samples with ownership targets (KataGo, Wu 2019); weight
    decay on convolution and linear weights only. A batch's ``weight`` (prioritized replay,
    ``[train] elimination_weight``) multiplies each sample's terms of every loss.

    The optimiser's parameter groups are the trunk's and heads' weights (decayed) and the
    rest, then the same two for each training-only head the network has (auxiliary, then
    ownership; :data:`~.net.TRAINING_HEADS`), so a run that adds or drops the last of them
    keeps the optimiser state of everything else (:meth:`load_optimizer_state`).

    Args:
        net: the network (trained in place).
        cfg: the ``[train]`` settings.
        device: where it trains.
    """

    def __init__(self, net: PolicyValueNet, cfg: Any, device: torch.device) -> None:
        self.net = net
        self.cfg = cfg
        self.device = device
        # the training-only heads this network has, by parameter prefix
        self.heads = [prefix for prefix in TRAINING_HEADS.values()
                      if getattr(net, prefix[:-1], None) is not None]
        params: list[list[torch.nn.Parameter]] = [[] for _ in range(2 + 2 * len(self.heads))]
        for name, p in net.named_parameters():
            head = next((1 + j for j, prefix in enumerate(self.heads)
                         if name.startswith(prefix)), 0)
            params[2 * head + (p.ndim <= 1 or "bn" in name)].append(p)
        self._groups = [{"params": ps, "weight_decay": cfg.weight_decay if i % 2 == 0 else 0.0}
                        for i, ps in enumerate(params)]
        self.optimizer = self._optimizer(self._groups)

    def _optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        cfg = self.cfg
        if cfg.optimizer == "adamw":
            return torch.optim.AdamW(groups, lr=cfg.lr)
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum,
                               nesterov=cfg.momentum > 0)

    def load_optimizer_state(self, saved: dict[str, Any]) -> None:
        """Load a saved ``optimizer.state_dict()``. A state saved with the auxiliary head's
        groups loads into a network without one (their state is dropped), and one saved
        without them into a network with one (its parameters start with fresh moments).

        Raises:
            ValueError, KeyError, TypeError: not an optimiser state of this network.
        """
        have, got = len(self._groups), len(saved["param_groups"])
        if got > have:
            keep = saved["param_groups"][:have]
            ids = {i for g in keep for i in g["params"]}
            saved = {"state": {k: v for k, v in saved["state"].items() if k in ids},
                     "param_groups": keep}
        elif got < have:
            self.optimizer = self._optimizer(self._groups[:got])
            self.optimizer.load_state_dict(saved)
            for g in self._groups[got:]:
                self.optimizer.add_param_group(dict(g))
            return
        self.optimizer.load_state_dict(saved)

    def set_lr(self, lr: float) -> None:
        """Set the learning rate (and the config's weight decay) of every parameter group; a
        loaded optimiser state carries the rates it was saved with."""
        for i, group in enumerate(self.optimizer.param_groups):
            group["lr"] = lr
            if i % 2 == 0:
                group["weight_decay"] = self.cfg.weight_decay

    def _losses(self, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The weighted loss of a batch (with its graph, in the network's current mode) and
        its parts (:meth:`step`)."""
        dev = self.device
        net = self.net
        sp = torch.from_numpy(batch.spatial).to(dev)
        gl = torch.from_numpy(batch.globals).to(dev)
        mask = torch.from_numpy(batch.mask).to(dev)
        target = torch.from_numpy(batch.target).to(dev)
        z = torch.from_numpy(batch.value).to(dev)
        w = None if batch.weight is None else torch.from_numpy(batch.weight).to(dev)
        parts: dict[str, torch.Tensor] = {}
        if self.heads:
            logits, v, aux, own = net.forward_train(sp, gl)
        else:
            (logits, v), aux, own = net(sp, gl), None, None
        if aux is not None:
            want = torch.from_numpy(batch.aux).to(dev)
            known = ~torch.isnan(want)
            diff = torch.where(known, aux - torch.nan_to_num(want), torch.zeros_like(aux))
            sq = diff ** 2 if w is None else diff ** 2 * w[:, None, None]
            parts["aux_loss"] = sq.sum() / known.sum().clamp_min(1)
        if own is not None:
            parts["ownership_loss"] = self._ownership_loss(own, batch, w)
        logp = masked_log_softmax(logits, mask)
        cross = -(target * logp).sum(dim=1)
        sq_v = (v - z) ** 2
        if w is not None:  # per sample: prioritized replay's correction, elimination weight
            cross, sq_v = cross * w, sq_v * w[:, None]
        parts["policy_loss"] = cross.mean()
        parts["value_loss"] = sq_v.mean()
        loss = parts["policy_loss"] + self.cfg.value_weight * parts["value_loss"]
        if "aux_loss" in parts:
            loss = loss + self.cfg.aux_weight * parts["aux_loss"]
        if "ownership_loss" in parts:
            loss = loss + self.cfg.ownership_weight * parts["ownership_loss"]
        with torch.no_grad():
            p = logp.exp() * mask
            parts["policy_entropy"] = -(p * logp).sum(dim=1).mean()
            parts["target_entropy"] = -(target * torch.log(target.clamp_min(1e-12))) \
                .sum(dim=1).mean()
        return loss, parts

    def _ownership_loss(self, logits: torch.Tensor, batch: Batch,
                        sample_weight: torch.Tensor | None = None) -> torch.Tensor:
        """Binary cross-entropy of ownership logits ``[B, O, S, S]`` against the batch's
        targets, mean over the board pixels and slots of the samples that have targets (0
        when none has); each sample's terms times ``sample_weight[B]`` when given."""
        valid: torch.Tensor = self.net.valid
        assert batch.ownership is not None and batch.ownership_known is not None
        want = torch.from_numpy(batch.ownership).to(self.device)
        known = torch.from_numpy(batch.ownership_known).to(self.device)
        weight = valid * known[:, None, None, None].to(logits.dtype)
        denom = weight.sum() * logits.shape[1]
        if sample_weight is not None:
            weight = weight * sample_weight[:, None, None, None]
        bce = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, want, weight=weight.expand_as(logits), reduction="sum")
        return bce / denom.clamp_min(1)

    def step(self, batch: Batch) -> dict[str, float]:
        """One optimiser step; returns ``{"loss", "policy_loss", "value_loss",
        "policy_entropy", "target_entropy"}`` (nats; the value loss per slot) and, for a
        network with an auxiliary head, ``"aux_loss"`` (per known target), and with an
        ownership head, ``"ownership_loss"`` (nats per board pixel and slot)."""
        self.net.train()
        loss, parts = self._losses(batch)
        if not torch.isfinite(loss):
            lr = self.optimizer.param_groups[0]["lr"]
            if all(torch.isfinite(v) for v in parts.values()):  # the weights overflow the sum
                cfg = self.cfg
                raise FloatingPointError(
                    f"the training loss is not finite ({loss.item()}) while each part is: "
                    f"value_weight {cfg.value_weight:g}, aux_weight {cfg.aux_weight:g} or "
                    f"ownership_weight {cfg.ownership_weight:g} in [train] is too large; "
                    "nothing of this iteration is kept; lower it in the run's config.toml and "
                    "resume")
            raise FloatingPointError(
                f"the training loss is not finite ({loss.item()}) at learning rate {lr:g}: the "
                "network diverged, so nothing of this iteration is kept; lower [train] lr (or "
                "the lr_schedule) in the run's config.toml and resume")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        return {"loss": loss.item(), **{k: v.item() for k, v in parts.items()}}

    def evaluate(self, batch: Batch) -> dict[str, float]:
        """:meth:`step`'s figures for a batch without training on it (the network in eval
        mode: batch norm from its running statistics), e.g. on held-out games."""
        self.net.eval()
        with torch.no_grad():
            loss, parts = self._losses(batch)
        return {"loss": loss.item(), **{k: v.item() for k, v in parts.items()}}

    def train(self, buffer: ReplayBuffer, steps: int, rng: np.random.Generator,
              bar: Any = None) -> dict[str, float]:
        """``steps`` steps on batches from ``buffer``; returns the mean of each figure."""
        sums: dict[str, float] = {}
        for _ in range(steps):
            batch = buffer.sample(self.cfg.batch_size, rng, self.cfg.value_target_mix,
                                  self.cfg.rollout_target_mix, self.cfg.priority_alpha,
                                  self.cfg.priority_beta, self.cfg.elimination_weight)
            for k, v in self.step(batch).items():
                sums[k] = sums.get(k, 0.0) + v
            if bar is not None:
                bar.update(1)
        self.net.eval()
        return {k: v / max(steps, 1) for k, v in sums.items()}
