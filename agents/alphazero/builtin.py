"""The built-in network: a trained 2-player Taluva network shipped inside the package.

``az:builtin`` plays it (:class:`~.agent.AlphaZeroAgent`) without training and without
PyTorch: the network is stored as ONNX (``data/builtin-2p.onnx``) and run by ONNX Runtime
(:class:`~.runtime.OnnxNet`, a base dependency), through the same
:class:`~.evaluator.NetEvaluator` and compiled batched search as a checkpoint's network.

Beside it, ``data/builtin-2p.json`` (:data:`FORMAT`) records what it is and how it was made:

- ``sha256``, ``bytes``: the ONNX file's SHA-256 and size (checked on every load);
- ``game`` (``name``, ``num_players``, ``options``: the rules it was trained under),
  ``encoder`` (the encoder's :meth:`~.encoder.NetEncoder.spec`: encoding name and version,
  players, planes, view radius...) and ``encoder_options`` (``view_radius``);
- ``net`` (preset, sizes, parameters), ``leaf`` (how its self-play valued leaves);
- ``source``: the run's name, the checkpoint, its iteration and SHA-256, the seed;
- ``config``: the run's ``config.toml`` (``config_at_start`` too when the run's first
  ``config.json`` differs: the config was changed during the run);
- ``anchors``: per iteration with anchor games, the win rates and Elo of the run's best
  network against the fixed opponents (``metrics.jsonl``), with the wall-clock so far;
- ``check``: the largest difference between the ONNX Runtime outputs and the network's exact
  outputs (PyTorch in float64) on real positions, and PyTorch's own float32 error beside it.

:func:`ship` (``python experiments/ship_builtin.py RUN``; needs the ``train`` extra) writes
both files from a ``taluva train`` run; :func:`load_builtin` reads them and refuses, in one
line, a file that is missing, damaged (hash), or made for another encoding or view.
docs/alphazero.md, "The built-in network", describes it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.agents.alphazero.config import BUILTIN as BUILTIN  # the az spec's name for it
from taluva_ai.agents.alphazero.runtime import CheckpointError, OnnxNet, encoding_differences
from taluva_ai.runfiles import sha256_bytes

#: Where the packaged network lives (package data, installed with the package).
DATA_DIR = Path(__file__).resolve().parent / "data"
#: Players of the packaged network that ``az:builtin`` loads before it knows the table (the
#: agent then takes the network of the table's player count: :func:`load_builtin`).
PLAYERS = 2
#: The player counts a packaged network may be made for (Taluva: 2-4 players).
TABLES = (2, 3, 4)


def onnx_name(players: int = PLAYERS) -> str:
    """The ONNX file of the packaged network for ``players``-player tables, in
    :data:`DATA_DIR`."""
    return f"builtin-{players}p.onnx"


def json_name(players: int = PLAYERS) -> str:
    """Its description (the JSON), in :data:`DATA_DIR`."""
    return f"builtin-{players}p.json"


#: The 2-player files' names (what older callers import).
ONNX_NAME = onnx_name()
JSON_NAME = json_name()


def shipped_tables(data_dir: str | Path | None = None) -> list[int]:
    """The player counts for which a packaged network is present (its JSON file), sorted."""
    d = Path(DATA_DIR if data_dir is None else data_dir)
    return [n for n in TABLES if (d / json_name(n)).is_file()]
#: The JSON description's ``format`` field.
FORMAT = "taluva-ai-az-builtin/1"
#: What error messages call it, and what to do about a bad file.
WHAT = "the built-in network (az:builtin)"
REMEDY = "reinstall taluva-ai, or rebuild it: python experiments/ship_builtin.py RUN_DIR"

_CACHE: dict[tuple[str, str, int], tuple[OnnxNet, Any]] = {}


def load_builtin(threads: int = 1, data_dir: str | Path | None = None,
                 players: int = PLAYERS) -> tuple[OnnxNet, Any, dict[str, Any]]:
    """The packaged network for ``players``-player tables, its encoder and its description
    (the JSON), checked.

    The ONNX Runtime session and the encoder are cached per process (keyed by the file's
    hash), so the games of a tournament load them once; the files are read and hashed on
    every call, so a file damaged since is still refused.

    Args:
        threads: ONNX Runtime's intra-op threads (0: one per core).
        data_dir: where the files are (default :data:`DATA_DIR`).
        players: the table's player count (2, 3 or 4).

    Returns:
        ``(net, encoder, info)``: an :class:`~.runtime.OnnxNet`, a
        :class:`~.encoder.NetEncoder`, the parsed JSON.

    Raises:
        CheckpointError: (one line) no network for ``players``-player tables (naming those
            that ship), a file missing or unreadable, the ONNX file's SHA-256 not
            the one recorded, a network made for another encoding, version, player count or
            view than the encoder this version of taluva-ai builds from the description, or
            an ONNX model whose input or output shapes do not fit it.
    """
    from taluva_ai.agents.alphazero.encoder import make_encoder

    d = Path(DATA_DIR if data_dir is None else data_dir)
    meta_path = d / json_name(players)
    if not meta_path.is_file():
        tables = shipped_tables(d)
        if players != PLAYERS and tables:
            raise CheckpointError(
                f"az:builtin has no network for {players}-player tables (this installation "
                f"has one for {', '.join(f'{n}' for n in tables)} players); train one: "
                f"taluva train --config experiments/configs/builtin-{players}p.toml")
        raise CheckpointError(f"{WHAT}: {meta_path} is missing; {REMEDY}")
    try:
        text = meta_path.read_text(encoding="utf-8")
        info = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{WHAT}: {meta_path} is unreadable "
                              f"({str(e).splitlines()[0]}); {REMEDY}") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        got = info.get("format") if isinstance(info, dict) else type(info).__name__
        raise CheckpointError(f"{WHAT}: {meta_path} is not a built-in network description "
                              f"(format {got!r}, expected {FORMAT!r}); {REMEDY}")
    onnx_path = d / Path(str(info.get("onnx", onnx_name(players)))).name
    try:
        data = onnx_path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{WHAT}: {onnx_path} is missing; {REMEDY}") from None
    except OSError as e:
        raise CheckpointError(f"{WHAT}: {onnx_path} is unreadable ({e.strerror or e}); "
                              f"{REMEDY}") from None
    digest = sha256_bytes(data)
    want = str(info.get("sha256"))
    if digest != want:
        raise CheckpointError(f"{WHAT}: {onnx_path} is damaged (its SHA-256 is {digest[:12]}..., "
                              f"not the {want[:12]}... recorded in {meta_path.name}); {REMEDY}")
    key = (digest, text, int(threads))
    if key not in _CACHE:
        game = info.get("game") or {}
        try:
            encoder = make_encoder(str(game.get("name")), int(game.get("num_players", 0)),
                                   **(info.get("encoder_options") or {}))
        except (TypeError, ValueError) as e:
            raise CheckpointError(f"{WHAT}: {meta_path}: {e}; {REMEDY}") from None
        diff = encoding_differences(encoder.spec(), info.get("encoder") or {})
        if encoder.num_players != players:
            diff = [f"{encoder.num_players} players, not {players}", *diff]
        if diff:
            raise CheckpointError(f"{WHAT}: made for another encoding than this version of "
                                  f"taluva-ai's: {'; '.join(diff)}; {REMEDY}")
        try:
            net = OnnxNet(data, threads, name=str(onnx_path))
            net.check_fits(encoder)
        except CheckpointError as e:
            raise CheckpointError(f"{WHAT}: {e}; {REMEDY}") from None
        if len(_CACHE) >= len(TABLES):  # at most a network per table in a process
            _CACHE.clear()
        _CACHE[key] = (net, encoder)
    net, encoder = _CACHE[key]
    return net, encoder, info


# -- building it from a training run (needs PyTorch, onnx and onnxruntime) ---------------------

#: Positions whose PyTorch outputs the description keeps (``reference``).
REFERENCE_POSITIONS = 4


def reference_ids(encoder: Any, count: int = 64) -> np.ndarray:
    """``int64[count]``: the network ids whose logits the description's ``reference`` keeps
    (evenly spread over all ids)."""
    return np.unique(np.linspace(0, encoder.num_actions - 1, count).astype(np.int64))


def reference_difference(net: OnnxNet, encoder: Any, info: dict[str, Any]) -> float:
    """The largest absolute difference between ``net``'s outputs and the exact (PyTorch,
    float64) outputs the description ``info`` recorded when it was shipped (``reference``: the
    values and the policy, :func:`policy`, at some action ids, of :func:`check_positions` of
    the network's game), so that ONNX Runtime's equality with the trained network can be
    checked where PyTorch is not installed.

    Raises:
        KeyError: the description has no ``reference`` (or one from before it kept the
            policy).
    """
    from taluva_ai.protocol import make_game

    ref = info["reference"]
    game = make_game(info["game"]["name"], **info["game"]["options"])  # the training rules
    sp, gl = check_positions(game, encoder, int(ref["positions"]), int(ref["seed"]))
    lo, va = net(sp, gl)
    ids = np.asarray(ref["ids"], dtype=np.int64)
    return float(max(np.abs(va.astype(np.float64) - np.asarray(ref["values"], np.float64)).max(),
                     np.abs(policy(lo)[:, ids] - np.asarray(ref["policy"], np.float64)).max()))


def policy(logits: np.ndarray) -> np.ndarray:
    """``float64[B, A]``: the softmax over all action ids of ``logits`` ``[B, A]``, in float64
    (the priors the search takes, before it keeps the legal actions)."""
    x = logits.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_positions(game: Any, encoder: Any, count: int, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(spatial float32[count, Cs, S, S], globals float32[count, G])``: decision positions of
    seeded random games of ``game``, evenly spread over the games (the positions
    :func:`ship` compares the ONNX and PyTorch outputs on)."""
    rng = np.random.default_rng(seed)
    found: list[Any] = []
    g = 0
    while len(found) < 4 * count:
        s = game.new_initial_state(seed=seed + g)
        g += 1
        while not s.is_terminal():
            if s.current_player < 0:
                s.draw()
                continue
            found.append(encoder.encode(s))
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))
    picked = [found[i] for i in np.linspace(0, len(found) - 1, count).astype(int)]
    return (np.stack([e.spatial for e in picked]).astype(np.float32),
            np.stack([e.globals for e in picked]).astype(np.float32))


def ship(run: str | Path, checkpoint: str | Path | None = None,
         out_dir: str | Path | None = None, positions: int = 64,
         tolerance: float = 1e-5) -> dict[str, Any]:
    """Build the packaged network of the run's table from a ``taluva train`` run directory:
    export the checkpoint to ONNX, check that ONNX Runtime's outputs equal PyTorch's, and
    write ``builtin-<n>p.onnx`` and ``builtin-<n>p.json`` (:func:`onnx_name`,
    :func:`json_name`; module docstring) into ``out_dir`` (atomically:
    the ONNX file first, then its description), then load them back with
    :func:`load_builtin`.

    Args:
        run: the run directory (its ``config.toml``, ``metrics.jsonl``; ``config.json``).
        checkpoint: the network (default ``RUN/best.pt``; a relative path that is not a file
            is looked up in ``run``).
        out_dir: where to write (default :data:`DATA_DIR`, the package's data).
        positions: positions of the equality check (random games of the run's game).
        tolerance: the largest absolute difference allowed between the ONNX Runtime
            outputs and the network's exact ones, computed by PyTorch in float64, on the
            values and on the policy (:func:`policy`: the softmax of the logits, which is
            what the search takes). (Not PyTorch's float32 outputs: two float32 evaluations
            of one network each carry their own rounding error. Not the logits: a float32
            logit of 4 to 20 carries a rounding error near 1e-5 by itself, 1.16e-5 for
            PyTorch's own float32 forward of s2-sites-l0's iteration 100, and the softmax
            does not see a shift shared by all logits; their gap is recorded,
            ``check.max_abs_diff.logits``, not checked.)

    Returns:
        The description written (the JSON).

    Raises:
        ImportError: PyTorch or ``onnx`` is not installed (the ``train`` extra).
        CheckpointError: the checkpoint is unreadable or damaged, not a Taluva network for 2-4
            players, not of this run's encoding, or its ONNX export differs from it by more than
            ``tolerance``.
        taluva_ai.agents.alphazero.config.ConfigError: the run's ``config.toml`` is missing
            or bad.
        OSError: a file cannot be read or written (naming it).
    """
    import torch

    from taluva_ai.agents.alphazero.config import load_config, make_encoder_for
    from taluva_ai.agents.alphazero.net import (
        ONNX_OPSET,
        check_compatible,
        export_onnx,
        load_checkpoint,
        net_from_checkpoint,
        parameter_count,
    )
    from taluva_ai.protocol import make_game
    from taluva_ai.runfiles import sha256_file, write_atomic

    run = Path(run)
    if not run.is_dir():
        raise CheckpointError(f"{run}: no such run directory")
    cfg = load_config(run / "config.toml")
    ckpt = run / "best.pt" if checkpoint is None else Path(checkpoint)
    if checkpoint is not None and not ckpt.is_absolute() and not ckpt.is_file():
        ckpt = run / ckpt
    before = sha256_file(ckpt) if ckpt.is_file() else None
    payload = load_checkpoint(ckpt)
    if sha256_file(ckpt) != before:  # a training run replaced it while it was read
        raise CheckpointError(f"checkpoint {ckpt}: changed while it was read; run again")
    encoder = make_encoder_for(cfg)
    check_compatible(payload, ckpt, encoder)  # the run's encoding (and so its view, players)
    players = encoder.num_players
    if players not in TABLES or cfg.game.name != "taluva" or cfg.game.rules.get("solo"):
        raise CheckpointError(f"checkpoint {ckpt}: a built-in network is a taluva network for "
                              f"{', '.join(map(str, TABLES))} players; this one is for "
                              f"{players}-player {cfg.game.name}")
    net, net_config = net_from_checkpoint(payload, ckpt, encoder)
    net.eval()
    model = export_onnx(net, encoder)
    onnx_net = OnnxNet(model, threads=1, name=f"ONNX export of {ckpt}")
    onnx_net.check_fits(encoder)
    game = make_game(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.rules)
    sp, gl = check_positions(game, encoder, positions)
    exact = copy.deepcopy(net).double()

    def outputs(model: Any, dtype: Any, spatial: np.ndarray, globs: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            lo, va = model(torch.from_numpy(spatial).to(dtype), torch.from_numpy(globs).to(dtype))
        return lo.double().numpy(), va.double().numpy()

    e_lo, e_va = outputs(exact, torch.float64, sp, gl)

    e_po = policy(e_lo)

    def gap(lo: np.ndarray, va: np.ndarray) -> dict[str, float]:
        """The largest absolute differences from the exact outputs."""
        return {"policy": float(np.abs(policy(lo) - e_po).max()),
                "values": float(np.abs(va - e_va).max()),
                "logits": float(np.abs(lo - e_lo).max())}

    diff = gap(*(x.astype(np.float64) for x in onnx_net(sp, gl)))
    torch_diff = gap(*outputs(net, torch.float32, sp, gl))
    worst = max(diff["policy"], diff["values"])
    if worst > tolerance:
        raise CheckpointError(f"checkpoint {ckpt}: its ONNX export differs from its exact "
                              f"(float64) outputs by {worst:.3g} (> {tolerance:g}) "
                              f"on {positions} positions; nothing written")
    ref_sp, ref_gl = check_positions(game, encoder, REFERENCE_POSITIONS)
    r_lo, r_va = outputs(exact, torch.float64, ref_sp, ref_gl)
    ids = reference_ids(encoder)
    meta = dict(payload.get("meta") or {})
    iteration = int(meta.get("iteration", -1))
    anchors, elapsed = _anchor_metrics(run / "metrics.jsonl", iteration)
    info: dict[str, Any] = {
        "format": FORMAT,
        "onnx": onnx_name(players),
        "sha256": sha256_bytes(model),
        "bytes": len(model),
        "game": {"name": cfg.game.name, "num_players": cfg.game.num_players,
                 "options": dict((payload.get("game") or {}).get("options") or {})},
        "encoder": encoder.spec(),
        "encoder_options": encoder.options(),
        "net": {"preset": net_config.preset, "sizes": net_config.sizes(),
                "parameters": parameter_count(net)},
        "leaf": dict(meta.get("leaf") or {"rollout": "none", "lambda": 0.0, "samples": 8}),
        "source": {"run": run.resolve().name, "checkpoint": ckpt.name, "iteration": iteration,
                   "checkpoint_sha256": before, "seed": meta.get("seed"),
                   "elapsed_s": elapsed},
        "config": cfg.to_dict(),
    }
    start = run / "config.json"
    if start.is_file():
        first = json.loads(start.read_text(encoding="utf-8"))
        if first != info["config"]:
            info["config_at_start"] = first
    info["anchors"] = anchors
    info["check"] = {"positions": positions, "tolerance": tolerance, "max_abs_diff": diff,
                     "torch_float32_max_abs_diff": torch_diff,
                     "onnx_opset": ONNX_OPSET, "torch": torch.__version__,
                     "onnxruntime": _version("onnxruntime")}
    info["reference"] = {"positions": REFERENCE_POSITIONS, "seed": 0, "ids": ids.tolist(),
                         "values": r_va.tolist(), "logits": r_lo[:, ids].tolist(),
                         "policy": policy(r_lo)[:, ids].tolist()}
    out = Path(DATA_DIR if out_dir is None else out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / onnx_name(players), model)
    write_atomic(out / json_name(players), json.dumps(info, indent=2) + "\n")
    load_builtin(data_dir=out, players=players)  # what was written loads and passes every check
    return info


def _anchor_metrics(path: Path, iteration: int) -> tuple[list[dict[str, Any]], float | None]:
    """The anchor results of ``metrics.jsonl`` by iteration (``iteration``, ``best_iteration``,
    ``elapsed_s``, ``anchors``), and the run's wall-clock at the end of ``iteration``.

    Raises:
        OSError: the file cannot be read.
    """
    out: list[dict[str, Any]] = []
    elapsed = None
    if not path.is_file():
        return out, elapsed
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        m = json.loads(line)
        if m.get("iteration") == iteration:
            elapsed = m.get("elapsed_s")
        if m.get("anchors"):
            out.append({"iteration": m.get("iteration"), "best_iteration": m.get("best_iteration"),
                        "elapsed_s": m.get("elapsed_s"), "anchors": m["anchors"]})
    return out, elapsed


def _version(module: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return None
