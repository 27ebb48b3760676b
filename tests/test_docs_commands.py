"""Every shell command in README.md, docs/*.md and the experiment journal
(experiments/journal/*.md) runs as written (issue 19 A.4).

The commands are read from the documents' ``bash`` code blocks (continuation lines joined,
comments dropped, ``a && b`` split) and each must appear in the checked list :data:`CHECKED`,
which says how the default suite checks it:

- ``RUN``: run in-process (``taluva_ai.cli.main``) in a temporary directory, as written except
  for the sizes of :data:`SMALL` (games, simulations, time budgets, worker processes, bench
  repeats), which keep each run to seconds; the exit status must be 0. Those of
  :data:`DEFAULT_RUN` (the README's set-up command, a game and its replay for each game, the
  solo variant, the engine bench) run in the default suite; the others run under
  ``pytest -m slow`` (together half a minute or more once compiled) and are checked as below
  in the default suite.
- ``CHECK``: the command's own argument parsing and checks run as written, and the work is
  stubbed out where it would start (``run_tournament``, ``train_main``, ``play_game``,
  ``run_bench``, the web server's ``listen`` and ``run_server``; a Ray cluster; the
  experiment scripts stop after parsing their arguments):
  for commands that train for minutes, need a trained network from a previous command, a Ray
  cluster, or a long experiment. Reaching the work is a pass; a usage error (exit 2) fails.
- ``SKIP``: not a command of this project (pip, pytest, tensorboard, ``ray start``).

A command added to the documents without an entry here fails :func:`test_every_command_is_checked`.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import socket
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "experiments" / "journal").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)

RUN, CHECK, SKIP = "run", "check", "skip"

_LONG = "trains a network for minutes"
_NET = "needs the network a training command writes"
_RAY = "starts or joins a Ray cluster"
_EXTERNAL = "not a command of this project"
#: The networks of the ownership-head comparison (docs/alphazero.md, strong2).
_OWN55 = "az:path=runs/s2-own/checkpoints/iter_0055.pt,sims=200,rollout=none,lambda=0,root=gumbel"
_BASE55 = ("az:path=runs/s2-base/checkpoints/iter_0055.pt,sims=200,rollout=none,lambda=0,"
           "root=gumbel")
_BASE70 = ("az:path=runs/s2-base/checkpoints/iter_0070.pt,sims=200,rollout=none,lambda=0,"
           "root=gumbel")

#: The fine-tunes of the built-in network on a teacher's games (docs/alphazero.md):
#: (teacher folder, its rounds as the shell's braces, steps, name).
FINE_TUNES = [("teacher800", "{0,1}", "150", "teacher800"),
              ("teacher_roll", "{0,1}", "150", "teacher_roll"),
              ("teacher128", "{0,1}", "150", "teacher128"),
              ("teacher128", "{2,3}", "150", "teacher128b"),
              ("teacher128", "{0..3}", "300", "teacher128all")]
#: Their matches, and the one of the longer fine-tune on the rollout teacher's games:
#: (name, opponent, seed, short name of the opponent).
#: The matches of the s2-rollsp continuation's networks (docs/alphazero.md, strong2):
#: (iteration, opponent, the --out name's end, --concurrency).
_ROLLSP130 = "az:path=runs/rollsp/iter_0130.pt,sims=200,rollout=none,lambda=0,root=gumbel"
ROLLSP_MATCHES = [(60, "greedy", "greedy", 1), (80, "greedy", "greedy", 1),
                  (80, "az:builtin", "vs_builtin", 1), (100, "az:builtin", "vs_builtin", 1),
                  (100, "greedy", "greedy", 1), (130, "greedy", "greedy", 2),
                  (130, "az:builtin", "vs_builtin", 2),
                  (130, "mcts:sims=400,rollout=greedy,root=gumbel", "mcts400", 2),
                  *((it, "greedy", "greedy", 2) for it in (160, 170, 180, 190, 200)),
                  (180, "az:builtin", "vs_builtin", 2), (180, _ROLLSP130, "vs_130", 2)]
#: The matches of the s2-sites run's networks (docs/alphazero.md, "Build sites"):
#: (iteration, opponent, seed, the --out name's end, --concurrency).
SITES_MATCHES = [(20, "greedy", 1, "greedy", 1), (20, "greedy", 2, "greedy_s2", 1),
                 (20, "az:builtin", 1, "vs_builtin", 1), (40, "greedy", 1, "greedy", 1),
                 (40, "az:builtin", 1, "vs_builtin", 1), (50, "greedy", 1, "greedy", 2),
                 (50, "greedy", 2, "greedy_s2", 2), (50, "az:builtin", 1, "vs_builtin", 2),
                 (50, "mcts:sims=1600,rollout=greedy,root=gumbel", 1, "mcts1600", 2),
                 (80, "greedy", 1, "greedy", 1)]
#: The built-in network of 2026-12-05 (s2-rollsp's iteration 180) as a checkpoint.
_ROLLSP180 = ("az:path=packs/strong2-rollsp/evaluated/iter_0180.pt,sims=200,rollout=none,"
              "lambda=0,root=gumbel")
#: The matches of the s2-sites-l0 run's networks (docs/alphazero.md, "Self-play without
#: rollouts"): (iteration, opponent, seed, the --out name's end, --concurrency).
SITES_L0_MATCHES = [(100, "greedy", 1, "greedy", 1), (100, "greedy", 2, "greedy_s2", 1),
                    (100, _ROLLSP180, 1, "vs_builtin", 1), (120, "greedy", 1, "greedy", 2),
                    (120, "greedy", 2, "greedy_s2", 2),
                    *((it, "greedy", 1, "greedy", 2) for it in (90, 95, 105, 110, 115, 125))]
#: The built-in network of the evening of 2026-12-05 (s2-sites-l0's iteration 100) as a
#: checkpoint.
_SITESL0_100 = ("az:path=packs/strong2-sites-l0/evaluated/iter_0100.pt,sims=200,rollout=none,"
                "lambda=0,root=gumbel")
#: The matches of the s2-l1 run's networks (docs/alphazero.md, "Lower learning rate, more
#: simulations in self-play"): (iteration, opponent, the --out name's end).
L1_MATCHES = [(it, opp, short) for it in (105, 110, 120, 125, 130)
              for opp, short in (("greedy", "greedy"), (_SITESL0_100, "vs_builtin"))]
FINE_TUNE_MATCHES = [*((name, "greedy", "1", "greedy")
                       for name in [*(n for *_, n in FINE_TUNES), "teacher_roll3"]),
                     ("teacher128", "az:builtin", "1", "vs_builtin"),
                     ("teacher800", "az:builtin", "1", "vs_builtin"),
                     ("teacher128", "greedy", "2", "greedy_s2")]

#: command -> (how, why, the command it needs run first in the same directory or None)
CHECKED: dict[str, tuple[str, str, str | None]] = {
    "pip install -e .": (SKIP, _EXTERNAL, None),
    "pip install -e '.[test]'": (SKIP, _EXTERNAL, None),
    "pip install -e '.[train]'": (SKIP, _EXTERNAL, None),
    "pip install -e '.[ray]'": (SKIP, _EXTERNAL, None),
    "pip install -e '.[web]'": (SKIP, _EXTERNAL, None),
    "pip install -e '.[web]' pytest selenium httpx": (SKIP, _EXTERNAL, None),
    # docs/web.md: the web tests alone, with the web extra only (tests/conftest.py asks for no
    # more when only tests/test_web*.py are named); the default run runs them
    "pytest tests/test_web.py tests/test_web_security.py tests/test_web_hidden.py "
    "tests/test_web_browser.py": (SKIP, "tests of the suite itself: the default run runs them",
                                  None),
    "pytest": (SKIP, "the test suite itself", None),
    "tensorboard --logdir runs/demo/tb": (SKIP, _EXTERNAL, None),
    "ray start --head --port=6379": (SKIP, _EXTERNAL, None),
    "ray start --address=HEAD_IP:6379": (SKIP, _EXTERNAL, None),
    "ray stop": (SKIP, _EXTERNAL, None),
    # README: set-up and the taluva command
    "taluva tournament --agents random greedy --games 20 --out runs/tournament":
        (RUN, "", None),
    "taluva play --players greedy random --seed 7 --record game.jsonl --show": (RUN, "", None),
    "taluva replay game.jsonl":
        (RUN, "", "taluva play --players greedy random --seed 7 --record game.jsonl --show"),
    "taluva tournament --agents random greedy --games 200 --concurrency 2 --seed 1 --out runs/t1":
        (RUN, "", None),
    "taluva tournament --gauntlet mcts:sims=400,rollout=greedy --agents random greedy "
    "--out runs/gauntlet-mcts400": (RUN, "", None),
    "taluva tournament --agents greedy mcts:time=0.5 --sprt elo0=0 elo1=50 --games 2000 "
    "--out runs/sprt-mcts-time": (RUN, "", None),
    "taluva tournament --resume runs/t1":
        (RUN, "", "taluva tournament --agents random greedy --games 200 --concurrency 2 --seed 1 "
         "--out runs/t1"),
    "taluva bench --json": (RUN, "", None),
    "taluva bench --mcts --env": (RUN, "", None),
    "taluva bench --net --json": (CHECK, "times three network presets with PyTorch (tens of "
                                  "seconds); test_cli checks --net's errors", None),
    "taluva bench --selfplay --json": (CHECK, "plays self-play games with four networks "
                                       "and the 2-player recipe's (minutes)", None),
    "taluva bench --inference --json": (CHECK, "times three network presets with three "
                                        "inference backends (minutes)", None),
    "taluva train --config experiments/journal/configs/strong.toml --out runs/strong":
        (CHECK, _LONG, None),
    "taluva train --resume runs/strong": (CHECK, _LONG, None),
    "taluva train --config experiments/journal/configs/strong2.toml --out runs/strong2":
        (CHECK, _LONG, None),
    "taluva train --resume runs/strong2": (CHECK, _LONG, None),
    "taluva tournament --agents az:path=packs/strong2/checkpoints/iter_0020.pt,sims=200,"
    "rollout=none,lambda=0,root=gumbel az:builtin --games 200 --concurrency 2 --seed 1 "
    "--out runs/s2_20_vs_builtin": (CHECK, "200 games of two networks at 200 simulations "
                                    "(12 minutes on 2 cores)", None),
    "python experiments/value_estimators.py --records runs/builtin_mcts400/games --games 100 "
    "--json experiments/journal/data/value_estimators.json":
        (CHECK, "needs the games of the ladder's MCTS-400 row", None),
    "cp -r packs/strong2 runs/s2-own": (SKIP, _EXTERNAL, None),
    "python experiments/heldout.py --samples runs/s2-league/selfplay/iter_0055 --checkpoints "
    "runs/s2-league/checkpoints/iter_0054.pt runs/s2-base/checkpoints/iter_0054.pt --json "
    "experiments/journal/data/heldout_league_on_league.json":
        (CHECK, "needs the samples of a training run", None),
    "python experiments/losses.py runs/builtin_greedy --agent az:builtin --json "
    "experiments/journal/data/losses_builtin_greedy.json":
        (CHECK, "needs the games of the ladder's greedy row", None),
    "taluva tournament --agents az:path=runs/s2-league/checkpoints/iter_0055.pt,sims=200,"
    "rollout=none,lambda=0,root=gumbel az:path=runs/s2-base/checkpoints/iter_0055.pt,sims=200,"
    "rollout=none,lambda=0,root=gumbel --games 200 --concurrency 2 --seed 1 "
    "--out runs/league55_vs_base55": (CHECK, "200 games of two networks at 200 simulations "
                                      "(10 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/s2-league/checkpoints/iter_0055.pt,sims=200,"
    "rollout=none,lambda=0,root=gumbel greedy --games 200 --concurrency 2 --seed 1 "
    "--out runs/league55_greedy": (CHECK, "200 games of a network at 200 simulations "
                                   "(6 minutes on 2 cores)", None),
    "taluva tournament --gauntlet az:builtin --agents az:path=runs/s2-league/checkpoints/"
    "iter_0055.pt,sims=200,rollout=none,lambda=0,root=gumbel az:path=runs/s2-base/checkpoints/"
    "iter_0055.pt,sims=200,rollout=none,lambda=0,root=gumbel --games 200 --concurrency 2 "
    "--seed 1 --out runs/s2_55_vs_builtin": (CHECK, "400 games of networks at 200 simulations "
                                             "(20 minutes on 2 cores)", None),
    "python experiments/heldout.py --samples runs/s2-own/selfplay/iter_0055 --checkpoints "
    "runs/s2-own/checkpoints/iter_0054.pt runs/s2-base/checkpoints/iter_0054.pt --json "
    "experiments/journal/data/heldout_own_on_own.json":
        (CHECK, "needs the samples of a training run", None),
    "taluva tournament --agents " + _OWN55 + " " + _BASE55 + " --games 200 --concurrency 2 "
    "--seed 1 --out runs/own55_vs_base55": (CHECK, "200 games of two networks at 200 simulations "
                                   "(8 minutes on 2 cores)", None),
    "taluva tournament --agents " + _OWN55 + " greedy --games 200 --concurrency 2 --seed 1 "
    "--out runs/own55_greedy": (CHECK, "200 games of a network at 200 simulations "
                                "(6 minutes on 2 cores)", None),
    "taluva tournament --agents " + _BASE55 + " greedy --games 200 --concurrency 2 --seed 1 "
    "--out runs/base55_greedy": (CHECK, "200 games of a network at 200 simulations "
                                 "(6 minutes on 2 cores)", None),
    "python experiments/losses.py runs/own55_greedy --agent " + _OWN55 + " --json "
    "experiments/journal/data/losses_own55_greedy.json":
        (CHECK, "needs the games of a tournament", None),
    "cp -r packs/strong2-base runs/s2-base": (SKIP, _EXTERNAL, None),
    "taluva tournament --agents " + _BASE70 + " az:builtin --games 200 --concurrency 2 "
    "--seed 1 --out runs/base70_vs_builtin": (CHECK, "200 games of two networks at 200 "
                                              "simulations (10 minutes on 2 cores)", None),
    "taluva tournament --agents " + _BASE70 + " greedy --games 200 --concurrency 2 --seed 1 "
    "--out runs/base70_greedy": (CHECK, "200 games of a network at 200 simulations "
                                 "(6 minutes on 2 cores)", None),
    "cp -r packs/strong2 runs/s2-base": (SKIP, _EXTERNAL, None),
    "cp -r packs/strong2-rt runs/s2-rt": (SKIP, _EXTERNAL, None),
    **{"taluva tournament --agents az:path=runs/s2-more/checkpoints/iter_0" + it + ".pt,sims=200,"
       "rollout=none,lambda=0,root=gumbel " + opp + " --games 200 --concurrency 2 --seed 1 "
       "--out runs/more" + it.lstrip("0") + "_" + out:
       (CHECK, "200 games of a network at 200 simulations (3 minutes on 2 cores against "
        "greedy or az:builtin, 10 against MCTS-400, 41 against MCTS-1600)", None)
       for it, opp, out in [("080", "az:builtin", "vs_builtin"), ("080", "greedy", "greedy"),
                            ("094", "az:builtin", "vs_builtin"), ("094", "greedy", "greedy"),
                            ("094", "mcts:sims=400,rollout=greedy,root=gumbel", "mcts400"),
                            ("094", "mcts:sims=1600,rollout=greedy,root=gumbel", "mcts1600"),
                            ("107", "az:builtin", "vs_builtin"),
                            ("120", "az:builtin", "vs_builtin"), ("120", "greedy", "greedy")]},
    # the larger network on s2-more's games, and the built-in network's search settings
    "python experiments/compare_shapes.py --like packs/strong2-more94/checkpoints/iter_0094.pt "
    "--train runs/s2-more/selfplay/iter_00{81..99} runs/s2-more/selfplay/iter_01{00..17} "
    "--heldout runs/s2-more/selfplay/iter_01{18..20} --shapes small/1x1/aux tiny/1x1/aux "
    "--steps 4000 --lr 2e-3 --final-lr 1e-4 --eval-every 1000 --threads 2 --save runs/offline "
    "--json experiments/journal/data/offline_capacity.json":
        (CHECK, "needs the samples of a training run; trains for 44 minutes", None),
    "python experiments/heldout.py --samples runs/s2-more/selfplay/iter_01{18..20} --checkpoints "
    "runs/s2-more/checkpoints/iter_0117.pt runs/s2-more/checkpoints/iter_0094.pt "
    "packs/strong2/checkpoints/iter_0040.pt --json "
    "experiments/journal/data/offline_capacity_heldout_online.json":
        (CHECK, "needs the samples and checkpoints of a training run", None),
    "taluva tournament --agents az:path=runs/offline/small_1x1_aux.pt,sims=200,rollout=none,"
    "lambda=0,root=gumbel az:path=runs/s2-more/checkpoints/iter_0117.pt,sims=200,rollout=none,"
    "lambda=0,root=gumbel --games 200 --concurrency 2 --seed 1 --out runs/offline/small_vs_117":
        (CHECK, "needs the network compare_shapes.py --save writes; 200 games (9 minutes)", None),
    **{f"taluva tournament --agents az:builtin,{variant} az:builtin --games 200 --concurrency 2 "
       f"--seed {seed} --out runs/tune/{out}":
       (CHECK, "200 games of two networks at 200 simulations (3 minutes on 2 cores)", None)
       for variant, seed, out in [("leaf_batch=1", 11, "leaf_batch_1"),
                                  ("gumbel_m=8", 11, "gumbel_m_8"),
                                  ("gumbel_m=32", 11, "gumbel_m_32"), ("c=2.0", 11, "c_2_0"),
                                  ("gumbel_c_scale=1.0", 11, "gumbel_c_scale_1_0"),
                                  ("chance=sample", 11, "chance_sample"),
                                  ("chance=sample", 12, "chance_sample_s12"),
                                  ("chance=sample", 13, "chance_sample_s13")]},
    # the gated continuation of s2-more from iteration 94
    "cp -r packs/strong2-more94 runs/s2-more94g": (SKIP, _EXTERNAL, None),
    "sed -i 's/^enabled = false$/enabled = true/; s|^ \"mcts:sims=400,rollout=greedy,"
    "root=gumbel\",$|&\\n \"az:builtin\",|' runs/s2-more94g/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-more94g": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-more94g packs/strong2-more94g":
        (CHECK, "needs the run directory a training command writes", None),
    **{"taluva tournament --agents az:path=runs/s2-more94g/checkpoints/iter_0107.pt,sims=200,"
       "rollout=none,lambda=0,root=gumbel " + opp + " --games 200 --concurrency 2 --seed 1 "
       "--out runs/gated107_" + out:
       (CHECK, "200 games of two networks at 200 simulations (3-4 minutes on 2 cores)", None)
       for opp, out in [("az:builtin", "vs_builtin"), ("greedy", "greedy"),
                        ("az:path=packs/strong2-more94/checkpoints/iter_0094.pt,sims=200,"
                         "rollout=none,lambda=0,root=gumbel", "vs_94")]},
    # what the built-in network's search misses against greedy, and the teachers' games
    **{"taluva tournament --agents az:builtin," + az + " greedy --games 200 --concurrency 2 "
       "--seed 1 --out runs/probe/" + out:
       (CHECK, "200 games of a network's search against greedy (5-6 minutes on 2 cores)", None)
       for az, out in [("sims=800", "sims_800"), ("sims=200,rollout=greedy,lambda=0.5",
                                                  "sims_200_rollout_greedy_lambda_0.5")]},
    **{"taluva tournament --agents az:builtin,sims=200,rollout=greedy,lambda=0.5 "
       "mcts:sims=" + sims + ",rollout=greedy,root=gumbel --games 200 --concurrency 2 --seed 1 "
       "--out runs/probe/rollout_mcts" + sims:
       (CHECK, "200 games against MCTS (17 minutes on 2 cores for 400 simulations, 48 for "
        "1600)", None) for sims in ("400", "1600")},
    **{"python experiments/losses.py runs/probe/" + out + " --agent az:builtin," + az +
       " --json experiments/journal/data/losses_builtin_" + name + ".json":
       (CHECK, "needs the games of a tournament", None)
       for az, out, name in [("sims=800", "sims_800", "sims800_greedy"),
                             ("sims=200,rollout=greedy,lambda=0.5",
                              "sims_200_rollout_greedy_lambda_0.5", "rollout_greedy")]},
    **{"python experiments/teacher_games.py --run packs/strong2 --checkpoint "
       "packs/strong2/checkpoints/iter_0040.pt --sims " + search + " --games 100 --rounds " +
       rounds + " --workers 2 --out runs/" + out:
       (CHECK, "hundreds of self-play games at a deep search (6-9 minutes a round)", None)
       for search, rounds, out in [("800", "2", "teacher800"),
                                   ("200 --rollout greedy --lambda 0.5", "4", "teacher_roll"),
                                   ("128", "4", "teacher128")]},
    **{"python experiments/compare_shapes.py --like packs/strong2/checkpoints/iter_0040.pt "
       "--init packs/strong2/checkpoints/iter_0040.pt --shapes tiny/1x1/aux --train runs/" +
       t + "/round_000" + rounds + " --heldout runs/s2-more/selfplay/iter_01{18..20} --steps " +
       steps + " --lr 5e-4 --final-lr 5e-5 --eval-every 50 --threads 2 --save runs/ft/" + out +
       " --json experiments/journal/data/ft_" + out + ".json":
       (CHECK, "needs the samples teacher_games.py writes", None)
       for t, rounds, steps, out in FINE_TUNES},
    **{"taluva tournament --agents az:path=runs/ft/" + out + "/tiny_1x1_aux.pt,sims=200,"
       "rollout=none,lambda=0,root=gumbel " + opp + " --games 200 --concurrency 2 --seed " +
       seed + " --out runs/ft/" + out + "_" + short:
       (CHECK, "needs the network compare_shapes.py --init --save writes; 200 games (2-3 "
        "minutes on 2 cores)", None)
       for out, opp, seed, short in FINE_TUNE_MATCHES},
    "python experiments/compare_shapes.py --like packs/strong2/checkpoints/iter_0040.pt --init "
    "packs/strong2/checkpoints/iter_0040.pt --shapes tiny/1x1/aux --train "
    "runs/teacher_roll/round_000{0..2} --heldout runs/teacher_roll/round_0003 --steps 300 --lr "
    "1e-3 --final-lr 1e-4 --eval-every 100 --threads 2 --save runs/ft/teacher_roll3 --json "
    "experiments/journal/data/ft_teacher_roll3.json":
        (CHECK, "needs the samples teacher_games.py writes", None),
    "python experiments/heldout.py --samples runs/teacher_roll/round_0003 --checkpoints "
    "packs/strong2/checkpoints/iter_0040.pt runs/ft/teacher_roll/tiny_1x1_aux.pt "
    "runs/ft/teacher_roll3/tiny_1x1_aux.pt runs/ft/teacher128/tiny_1x1_aux.pt --json "
    "experiments/journal/data/ft_heldout_roll3.json":
        (CHECK, "needs the samples and networks of the commands above", None),
    "taluva tournament --agents az:builtin greedy --games 200 --concurrency 2 --seed 2 --out "
    "runs/ft/builtin_greedy_s2": (CHECK, "200 games of a network against greedy (1.5 minutes "
                                  "on 2 cores)", None),
    # the continuation whose self-play searches with greedy rollouts (s2-rollsp)
    "cp -r packs/strong2 runs/s2-rollsp": (SKIP, _EXTERNAL, None),
    "taluva tournament --agents az:builtin greedy --games 200 --concurrency 2 --seed 2 --out "
    "runs/rollsp/builtin180_greedy_s2": (CHECK, "200 games of the network against greedy (1.3 "
                                         "minutes on 2 cores)", None),
    "cp runs/s2-rollsp/checkpoints/iter_0{160,170,180,190,200}.pt runs/rollsp/":
        (SKIP, _EXTERNAL, None),
    "sed -i 's/^30 = 0.0005$/30 = 0.0005\\n155 = 0.0002/' runs/s2-rollsp/config.toml":
        (SKIP, _EXTERNAL, None),
    "sed -i 's/^rollout = \"none\"$/rollout = \"greedy\"/; s/^rollout_lambda = 0.0$/"
    "rollout_lambda = 0.5/; /^ \"mcts:sims=400,rollout=greedy,root=gumbel\",$/d' "
    "runs/s2-rollsp/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-rollsp": (CHECK, _LONG, None),
    "python experiments/plot_anchors.py packs/strong2-rollsp --out "
    "experiments/journal/plots/strong2_rollsp_anchors.png":
        (CHECK, "reads the pack of the s2-rollsp run", None),
    "taluva train --pack runs/s2-rollsp packs/strong2-rollsp":
        (CHECK, "needs the run directory a training command writes", None),
    **{f"taluva tournament --agents az:path=runs/rollsp/iter_{it:04d}.pt,sims=200,rollout=none,"
       f"lambda=0,root=gumbel {opp} --games 200 --concurrency {conc} --seed 1 --out "
       f"runs/rollsp/i{it}_{short}":
       (CHECK, "needs a network of the s2-rollsp run; 200 games (3-6 minutes on 2 cores)", None)
       for it, opp, short, conc in ROLLSP_MATCHES},
    **{f"taluva tournament --agents az:path=runs/rollsp/iter_0130.pt,sims=200,rollout=none,"
       f"lambda=0,root=gumbel{variant} greedy --games 200 --concurrency 1 --seed 2 --out "
       f"runs/sweep/{out}":
       (CHECK, "needs a network of the s2-rollsp run; 200 games (3 minutes)", None)
       for variant, out in [("", "base"), (",gumbel_c_scale=1.0", "cs1"),
                            (",gumbel_c_scale=0.3", "cs03"), (",gumbel_m=8", "m8"),
                            (",gumbel_m=32", "m32")]},
    **{f"python experiments/losses.py runs/rollsp/i{it}_greedy --agent az:path=runs/rollsp/"
       f"iter_{it:04d}.pt,sims=200,rollout=none,lambda=0,root=gumbel --json "
       f"experiments/journal/data/losses_rollsp_{it}_greedy.json":
           (CHECK, "needs the games of a tournament", None)
       for it, opp, _, _ in ROLLSP_MATCHES if opp == "greedy"},
    **{f"python experiments/losses.py runs/builtin_{opp} --agent az:builtin --values "
       f"--checkpoint packs/strong2-rollsp/evaluated/iter_0180.pt --json "
       f"experiments/journal/data/losses_builtin180_values_{opp}.json":
       (CHECK, "needs the games of a ladder row", None)
       for opp in ("greedy", "mcts400", "mcts1600")},
    "taluva train --config experiments/journal/configs/strong2-sites.toml --out runs/s2-sites":
        (CHECK, _LONG, None),
    "taluva train --resume runs/s2-sites": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-sites packs/strong2-sites":
        (CHECK, "needs the run directory a training command writes", None),
    "python experiments/plot_anchors.py packs/strong2-sites --out "
    "experiments/journal/plots/strong2_sites_anchors.png":
        (CHECK, "reads the pack of the s2-sites run", None),
    **{f"taluva tournament --agents az:path=runs/sites/iter_{it:04d}.pt,sims=200,rollout=none,"
       f"lambda=0,root=gumbel {opp} --games 200 --concurrency {conc} --seed {seed} --out "
       f"runs/sites/i{it}_{short}":
       (CHECK, "needs a network of the s2-sites run; 200 games (2-6 minutes on 2 cores)", None)
       for it, opp, seed, short, conc in SITES_MATCHES},
    **{f"python experiments/losses.py runs/sites/i{it}_greedy --agent az:path=runs/sites/"
       f"iter_{it:04d}.pt,sims=200,rollout=none,lambda=0,root=gumbel --values --checkpoint "
       f"runs/sites/iter_{it:04d}.pt --json experiments/journal/data/losses_sites{it}_greedy.json":
       (CHECK, "needs the games of a tournament and a network of the s2-sites run", None)
       for it in (20, 40, 50, 80)},
    "python experiments/losses.py runs/sites/i50_mcts1600 --agent az:path=runs/sites/"
    "iter_0050.pt,sims=200,rollout=none,lambda=0,root=gumbel --values --checkpoint "
    "runs/sites/iter_0050.pt --json experiments/journal/data/losses_sites50_mcts1600.json":
        (CHECK, "needs the games of a tournament and a network of the s2-sites run", None),
    **{f"python experiments/losses.py runs/builtin_mcts1600 --agent az:builtin --values "
       f"--checkpoint runs/sites/iter_{it:04d}.pt --json "
       f"experiments/journal/data/values_sites{it}_on_builtin_mcts1600.json":
       (CHECK, "needs the games of a ladder row and a network of the s2-sites run", None)
       for it in (20, 40, 50)},
    "cp -r runs/s2-sites runs/s2-sites-l0": (SKIP, _EXTERNAL, None),
    "sed -i 's/^rollout = \"greedy\"$/rollout = \"none\"/; s/^rollout_lambda = 0.5$/"
    "rollout_lambda = 0.0/' runs/s2-sites-l0/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-sites-l0": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-sites-l0 packs/strong2-sites-l0":
        (CHECK, "needs the run directory a training command writes", None),
    "python experiments/plot_anchors.py packs/strong2-sites-l0 --out "
    "experiments/journal/plots/strong2_sites_l0_anchors.png":
        (CHECK, "reads the pack of the s2-sites-l0 run", None),
    **{f"taluva tournament --agents az:path=runs/sites/l0_iter_{it:04d}.pt,sims=200,"
       f"rollout=none,lambda=0,root=gumbel {opp} --games 200 --concurrency {conc} --seed {seed} "
       f"--out runs/sites/l0_i{it}_{short}":
       (CHECK, "needs a network of the s2-sites-l0 run; 200 games (1-5 minutes on 2 cores)", None)
       for it, opp, seed, short, conc in SITES_L0_MATCHES},
    "python experiments/losses.py runs/sites/l0_i100_greedy --agent az:path=runs/sites/"
    "l0_iter_0100.pt,sims=200,rollout=none,lambda=0,root=gumbel --values --checkpoint "
    "runs/sites/l0_iter_0100.pt --json experiments/journal/data/losses_sitesl0_100_greedy.json":
        (CHECK, "needs the games of a tournament and a network of the s2-sites-l0 run", None),
    "python experiments/losses.py runs/sites/l0_i120_greedy --agent az:path=runs/sites/"
    "l0_iter_0120.pt,sims=200,rollout=none,lambda=0,root=gumbel --json "
    "experiments/journal/data/losses_sitesl0_120_greedy.json":
        (CHECK, "needs the games of a tournament", None),
    "cp -r runs/s2-sites-l0 runs/s2-l1": (SKIP, _EXTERNAL, None),
    "sed -i 's/^sims = 64$/sims = 128/; s/^100 = 0.0002$/100 = 0.0001/' runs/s2-l1/config.toml":
        (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-l1 --redo 101": (CHECK, _LONG, None),
    "sed -i 's/^sims = 128$/sims = 256/' runs/s2-l1/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-l1": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-l1 packs/strong2-l1":
        (CHECK, "needs the run directory a training command writes", None),
    "python experiments/plot_anchors.py packs/strong2-l1 --out "
    "experiments/journal/plots/strong2_l1_anchors.png":
        (CHECK, "reads the pack of the s2-l1 run", None),
    "python experiments/plot_anchors.py packs/strong2-rt --out docs/strong2_rt_anchors.png":
        (CHECK, "reads the pack of the s2-rt run", None),
    "python experiments/plot_anchors.py packs/builtin-2p --out docs/builtin_2p_anchors.png":
        (CHECK, "reads the pack of the builtin-2p run", None),
    **{f"taluva tournament --agents az:path=runs/sites/l1_iter_{it:04d}.pt,sims=200,"
       f"rollout=none,lambda=0,root=gumbel {opp} --games 200 --concurrency 1 --seed 1 "
       f"--out runs/sites/l1_i{it}_{short}":
       (CHECK, "needs a network of the s2-l1 run; 200 games (3-9 minutes on 2 cores)", None)
       for it, opp, short in L1_MATCHES},
    "cp -r runs/s2-l1 runs/s2-lg": (SKIP, _EXTERNAL, None),
    "sed -i 's/^sims = 256$/sims = 128/; s/^opponent = \"\"$/opponent = \"mcts:sims=400,"
    "rollout=greedy,root=gumbel\"/; s/^opponent_share = 0.0$/opponent_share = 0.25/' "
    "runs/s2-lg/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-lg --redo 101": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-lg packs/strong2-lg":
        (CHECK, "needs the run directory a training command writes", None),
    **{f"taluva tournament --agents az:path=runs/sites/lg_iter_{it:04d}.pt,sims=200,"
       f"rollout=none,lambda=0,root=gumbel greedy --games 200 --concurrency 2 --seed 1 "
       f"--out runs/sites/lg_i{it}_greedy":
       (CHECK, "needs a network of the s2-lg run; 200 games (1.4 minutes on 2 cores)", None)
       for it in (110, 111)},
    **{f"taluva tournament --agents az:path=runs/sites/lg_iter_0120.pt,sims=200,"
       f"rollout=none,lambda=0,root=gumbel greedy --games 200 --concurrency 2 --seed {seed} "
       f"--out runs/sites/lg_i120_greedy_s{seed}":
       (CHECK, "needs a network of the s2-lg run; 200 games (1.4 minutes on 2 cores)", None)
       for seed in (1, 2)},
    "cp -r runs/s2-sites-l0 runs/s2-rt": (SKIP, _EXTERNAL, None),
    "sed -i 's/^value_rollouts = 0$/value_rollouts = 16/; s/^rollout_target_mix = 0.0$/"
    "rollout_target_mix = 0.5/' runs/s2-rt/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-rt --redo 101": (CHECK, _LONG, None),
    "taluva train --pack runs/s2-rt packs/strong2-rt":
        (CHECK, "needs the run directory a training command writes", None),
    "python experiments/compare_shapes.py --like packs/strong2-sites-l0/evaluated/iter_0100.pt "
    "--init packs/strong2-sites-l0/evaluated/iter_0100.pt --shapes tiny/1x1/aux --train "
    "runs/s2-sites-l0/selfplay/iter_00{91..99} runs/s2-sites-l0/selfplay/iter_0100 --heldout "
    "runs/s2-sites-l0/selfplay/iter_0101 --steps 160 --lr 2e-4 --elimination-weight 4 --save "
    "runs/ft/elim4 --json experiments/journal/data/ft_elim4.json":
        (CHECK, "needs the samples of a training run", None),
    "python experiments/losses.py runs/builtin100_mcts1600 --agent az:builtin --values "
    "--checkpoint runs/ft/elim4/tiny_1x1_aux.pt --json "
    "experiments/journal/data/losses_elim4_values_mcts1600.json":
        (CHECK, "needs the ladder's games and a fine-tuned network", None),
    "python experiments/losses.py runs/builtin100_mcts1600 --agent az:builtin --values "
    "--checkpoint runs/sites/rt_iter_0110.pt --json "
    "experiments/journal/data/losses_rt110_values_mcts1600.json":
        (CHECK, "needs the ladder's games and a network of the s2-rt run", None),
    "taluva tournament --agents az:path=runs/sites/rt_iter_0110.pt,sims=200,rollout=none,"
    "lambda=0,root=gumbel greedy --games 200 --concurrency 1 --seed 1 --out "
    "runs/sites/rt_i110_greedy":
        (CHECK, "needs a network of the s2-rt run; 200 games (4-6 minutes on 2 cores)", None),
    "taluva train --resume runs/s2-rt": (CHECK, _LONG, None),
    "taluva tournament --agents az:path=runs/sites/rt_iter_0160.pt,sims=200,rollout=none,"
    "lambda=0,root=gumbel greedy --games 200 --concurrency 2 --seed 2 --out "
    "runs/sites/rt_i160_greedy_s2":
        (CHECK, "needs a network of the s2-rt run; 200 games (1.4 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/eft/w4.pt,sims=200,rollout=none,lambda=0,"
    "root=gumbel greedy --games 200 --concurrency 1 --seed 1 --out runs/eft/w4_greedy_s1":
        (CHECK, "needs a fine-tuned network; 200 games (4-6 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/eft/w4.pt,sims=200,rollout=none,lambda=0,"
    "root=gumbel mcts:sims=400,rollout=greedy,root=gumbel --games 200 --concurrency 1 --seed 1 "
    "--out runs/eft/w4_mcts400_s1":
        (CHECK, "needs a fine-tuned network; 200 games (23 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/eft/rt125.pt,sims=200,rollout=none,lambda=0,"
    "root=gumbel mcts:sims=1600,rollout=greedy,root=gumbel --games 200 --concurrency 2 "
    "--seed 1 --out runs/eft/rt125_mcts1600_s1":
        (CHECK, "needs a network of the s2-rt run; 200 games (40 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/eft/rt125.pt,sims=200,rollout=none,lambda=0,"
    "root=gumbel " + _SITESL0_100 + " --games 200 --concurrency 2 --seed 1 --out "
    "runs/eft/rt125_vs_builtin_s1":
        (CHECK, "needs a network of the s2-rt run; 200 games (3 minutes on 2 cores)", None),
    "taluva tournament --agents az:path=runs/eft/rt160.pt,sims=200,rollout=none,lambda=0,"
    "root=gumbel mcts:sims=1600,rollout=greedy,root=gumbel --games 200 --concurrency 2 "
    "--seed 1 --out runs/eft/rt160_mcts1600_s1":
        (CHECK, "needs a network of the s2-rt run; 200 games (35 minutes on 2 cores)", None),
    "python experiments/losses.py runs/eft/rt125_mcts1600_s1 --agent az:path=runs/eft/rt125.pt,"
    "sims=200,rollout=none,lambda=0,root=gumbel --json "
    "experiments/journal/data/losses_rt125_mcts1600.json":
        (CHECK, "needs the games of a match", None),
    "python experiments/losses.py runs/eft/w4_mcts400_s1 --agent az:path=runs/eft/w4.pt,"
    "sims=200,rollout=none,lambda=0,root=gumbel --json "
    "experiments/journal/data/losses_elim4_mcts400_s1.json":
        (CHECK, "needs the games of a match", None),
    "python experiments/ship_builtin.py packs/strong2-l1 --checkpoint evaluated/iter_0125.pt "
    "--out /tmp/cand/agents/alphazero/data":
        (CHECK, "writes into a copy of the repository, /tmp/cand (git worktree add)", None),
    "taluva tournament --agents az:builtin mcts:sims=1600,rollout=greedy,root=gumbel --games "
    "200 --concurrency 2 --seed 1 --out runs/cand/builtin125_mcts1600":
        (CHECK, "plays the candidate network of /tmp/cand; 200 games, 30 minutes", None),
    "python experiments/plot_anchors.py packs/strong2-more --out "
    "experiments/journal/plots/strong2_more_anchors.png":
        (CHECK, "reads the pack of the s2-more run (in the git history)", None),
    "python experiments/average_checkpoints.py runs/s2-base/checkpoints/iter_00{61..70}.pt "
    "--out runs/s2-base/avg_61_70.pt": (CHECK, "needs the checkpoints of a training run", None),
    "python experiments/average_checkpoints.py runs/s2-base/checkpoints/iter_00{66..70}.pt "
    "--out runs/s2-base/avg_66_70.pt": (CHECK, "needs the checkpoints of a training run", None),
    "python experiments/average_checkpoints.py runs/s2-base/checkpoints/iter_00{61..70}.pt "
    "--out runs/s2-base/avg_61_70_bn.pt --bn-samples runs/s2-base/selfplay/iter_00{61..70}":
        (CHECK, "needs the checkpoints and samples of a training run", None),
    "python experiments/replay_priorities.py runs/s2-sites-l0/selfplay/iter_00{91..99} "
    "runs/s2-sites-l0/selfplay/iter_0100 --alpha 0 1 2 --json "
    "experiments/journal/data/replay_priorities.json":
        (CHECK, "needs the samples of a training run", None),
    "python experiments/heldout.py --samples runs/s2-more/selfplay/iter_0071 --checkpoints "
    "runs/s2-base/checkpoints/iter_0068.pt runs/s2-base/checkpoints/iter_0069.pt "
    "runs/s2-base/checkpoints/iter_0070.pt runs/s2-base/avg_66_70.pt runs/s2-base/avg_61_70.pt "
    "runs/s2-base/avg_61_70_bn.pt --json experiments/journal/data/heldout_averaged.json":
        (CHECK, "needs the samples of a training run", None),
    "sed -i 's/^aux_head = true$/aux_head = true\\nownership_head = true/' "
    "runs/s2-own/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-own": (CHECK, _LONG, None),
    "cp -r packs/strong2 runs/s2-league": (SKIP, _EXTERNAL, None),
    "sed -i 's/^\\[selfplay\\]$/[selfplay]\\nopponent = \"greedy\"\\nopponent_share = 0.25/' "
    "runs/s2-league/config.toml": (SKIP, _EXTERNAL, None),
    "taluva train --resume runs/s2-league": (CHECK, _LONG, None),
    "taluva train --resume runs/s2-base": (CHECK, _LONG, None),
    "taluva train --config experiments/configs/demo.toml --out runs/demo": (CHECK, _LONG, None),
    "time taluva train --config experiments/configs/demo.toml --out runs/demo":
        (CHECK, _LONG, None),
    "taluva train --resume runs/demo": (CHECK, _LONG, None),
    "taluva train --resume runs/demo --redo 3": (CHECK, _LONG, None),
    "taluva play --solo --players greedy --show": (RUN, "", None),
    "taluva bench --solo --json": (RUN, "", None),
    "taluva train --config experiments/configs/solo-demo.toml --out runs/solo-demo":
        (CHECK, _LONG, None),
    "taluva train --config experiments/configs/demo.toml --out runs/demo-ray --ray":
        (CHECK, _LONG + "; " + _RAY, None),
    "taluva train --config experiments/configs/tnt-demo.toml --out runs/tnt-demo":
        (CHECK, _LONG, None),
    # docs/agents.md
    "taluva play --players mcts:sims=400,rollout=greedy greedy --seed 1 --show": (RUN, "", None),
    # docs/alphazero.md
    "taluva tournament --agents greedy az:path=runs/demo/best.pt,sims=200,rollout=greedy,"
    "lambda=0.5 --games 200 --concurrency 2 --seed 1 --out runs/demo_vs_greedy":
        (CHECK, _NET, None),
    "taluva tournament --agents random az:path=runs/demo/best.pt,sims=200,rollout=greedy,"
    "lambda=0.5 --games 200 --concurrency 2 --seed 1 --out runs/demo_vs_random":
        (CHECK, _NET, None),
    "taluva play --players az:builtin greedy --show": (RUN, "", None),
    # docs/alphazero.md: train your own network (the recipe of the built-in network)
    "taluva train --config experiments/configs/builtin-2p.toml --out runs/builtin-2p":
        (CHECK, _LONG, None),
    "taluva train --resume runs/builtin-2p": (CHECK, _LONG, None),
    "python experiments/plot_anchors.py runs/builtin-2p --out runs/builtin-2p/anchors.png":
        (CHECK, "needs the run directory a training command writes", None),
    "python experiments/ship_builtin.py runs/builtin-2p --checkpoint checkpoints/iter_0200.pt":
        (CHECK, _NET, None),
    "taluva train --pack runs/builtin-2p packs/builtin-2p":
        (CHECK, "needs the run directory a training command writes", None),
    "cp -r packs/builtin-2p runs/builtin-2p": (SKIP, _EXTERNAL, None),
    # experiments/journal/README.md: a pack of a superseded run, back from the git history
    "git checkout \"$(git log -1 --format=%h --diff-filter=D -- packs/strong2)^\" -- "
    "packs/strong2": (SKIP, _EXTERNAL, None),
    "sed -i 's/^workers = 2$/workers = 15/; s/^device = \"cpu\"$/device = \"cuda\"/' "
    "runs/builtin-2p/config.toml": (SKIP, _EXTERNAL, None),
    "taluva tournament --gauntlet az:builtin --agents greedy mcts:sims=400,rollout=greedy,"
    "root=gumbel mcts:sims=1600,rollout=greedy,root=gumbel --games 200 --concurrency 2 "
    "--seed 1 --out runs/builtin_ladder": (CHECK, "hours of MCTS-1600 games", None),
    "taluva tournament --agents az:builtin greedy --games 200 --concurrency 2 --seed 1 "
    "--out runs/builtin_greedy": (CHECK, "40 minutes of the network's search", None),
    **{"taluva tournament --agents az:path=runs/builtin-2p/checkpoints/iter_0200.pt,sims=200,"
       f"rollout=none,lambda=0,root=gumbel,name=candidate {opp} --games 200 --concurrency 2 "
       f"--seed 1 --out runs/verify2p/{short}":
       (CHECK, "needs the network of a training run", None)
       for opp, short in (("az:builtin", "builtin"), ("greedy", "greedy"),
                          ("mcts:sims=1600,rollout=greedy,root=gumbel", "mcts1600"))},
    "taluva tournament --agents az:builtin mcts:sims=400,rollout=greedy,root=gumbel --games 200 "
    "--concurrency 2 --seed 1 --out runs/builtin_mcts400": (CHECK, "41 minutes on 2 cores",
                                                             None),
    "taluva tournament --agents az:builtin mcts:sims=1600,rollout=greedy,root=gumbel --games "
    "200 --concurrency 2 --seed 1 --out runs/builtin_mcts1600": (CHECK, "hours of MCTS-1600 "
                                                                  "games", None),
    "python experiments/plot_anchors.py packs/strong --out "
    "experiments/journal/plots/strong_anchors.png":
        (CHECK, "reads the pack of the strong run (in the git history)", None),
    "taluva play --solo --players az:path=runs/solo-demo/best.pt,sims=64,rollout=greedy,"
    "lambda=0.5 --show": (CHECK, _NET, None),
    "python experiments/solo_ladder.py --out runs/solo_ladder --games 200 --concurrency 2 "
    "--agents random greedy mcts:sims=100,rollout=greedy,prior_temperature=1 "
    "az:path=runs/solo-demo/best.pt,sims=64,rollout=greedy,lambda=0.5": (CHECK, _NET, None),
    # docs/benchmarks.md
    "taluva tournament --agents random greedy --games 200 --seed 1 --out runs/baseline2p":
        (RUN, "", None),
    "taluva tournament --agents random greedy greedy:epsilon=0.25 --games 60 "
    "--players-per-game 3 --seed 1 --out runs/baseline3p": (RUN, "", None),
    "taluva tournament --agents random greedy greedy:epsilon=0.25 greedy:epsilon=0.5 --games 40 "
    "--players-per-game 4 --seed 1 --out runs/baseline4p": (RUN, "", None),
    "python experiments/ladder.py --out runs/ladder --concurrency 2 --defer random "
    "mcts:sims=1600,rollout=greedy,root=gumbel":
        (CHECK, "the strength ladder: hours (test_experiments runs its smoke size)", None),
    "taluva tournament --agents greedy mcts:sims=400,rollout=greedy,root=gumbel --seed 1 "
    "--games 200 --concurrency 4 --out runs/pair": (RUN, "", None),
    "python experiments/ladder.py --out runs/ladder_prelim --concurrency 2 --games 40 "
    "--players 2 --agents random greedy mcts:sims=100,rollout=greedy mcts:sims=400,"
    "rollout=greedy": (CHECK, "the strength ladder: hours (test_experiments runs its smoke "
                       "size)", None),
    "taluva tournament --agents random greedy mcts:sims=100,rollout=greedy --games 30 "
    "--players-per-game 3 --concurrency 2 --seed 1 --out runs/mcts3p": (RUN, "", None),
    "taluva tournament --agents random greedy mcts:sims=100,rollout=greedy mcts:sims=400,"
    "rollout=greedy --games 16 --players-per-game 4 --concurrency 2 --seed 1 --out runs/mcts4p":
        (RUN, "", None),
    # docs/envs.md
    "python experiments/ppo_masked.py --max-minutes 28 --kickstart 1.0 --eval-every 20 "
    "--eval-games 100 --out runs/ppo_kickstart":
        (CHECK, "trains PPO for 28 minutes (test_envs_ppo runs it small)", None),
    "python experiments/ppo_masked.py --eval-model runs/ppo_kickstart/model.pt --eval-games 1000 "
    "--seed 777": (CHECK, "needs the model the PPO command writes", None),
    "python experiments/sb3_maskable_ppo.py --total-steps 40960 --eval-games 50 --out runs/sb3":
        (CHECK, "trains MaskablePPO for minutes (test_envs_sb3 runs it small)", None),
    # docs/openspiel.md
    "pip install -e '.[openspiel]'": (SKIP, _EXTERNAL, None),
    "python -m taluva_ai.openspiel playthrough":
        (SKIP, "rewrites tests/data/openspiel (test_openspiel_conformance checks those files)",
         None),
    "python -m taluva_ai.openspiel bench --games 30 > docs/data/openspiel_bench_taluva.json":
        (SKIP, "times random play (test_openspiel_interop runs it with one short game)", None),
    "python -m taluva_ai.openspiel bench --game python_thurn_und_taxis --games 10 > "
    "docs/data/openspiel_bench_thurn_und_taxis.json":
        (SKIP, "times random play (test_openspiel_interop runs it with one short game)", None),
    "taluva tournament --agents mcts:sims=50,prior=none openspiel:sims=50 --games 40 "
    "--tiles-per-player 6 --seed 1 --out runs/os50":
        (CHECK, "OpenSpiel's MCTS through Python states: minutes on 2 cores "
         "(test_openspiel_interop plays it small)", None),
    "taluva tournament --agents mcts:sims=400 openspiel:sims=400 --games 200 --out runs/os400":
        (CHECK, "OpenSpiel's MCTS at 400 simulations: days on 2 cores", None),
    "taluva tournament --agents mcts:sims=50,prior=none openspiel:sims=50 --games 200 "
    "--tiles-per-player 6 --seed 1 --concurrency 2 --out runs/os_uct50_200":
        (CHECK, "OpenSpiel's MCTS through Python states: 12 minutes on 2 busy cores "
         "(test_openspiel_interop plays it small)", None),
    "taluva tournament --agents mcts:time=0.5,prior=none openspiel:sims=50 --games 200 "
    "--tiles-per-player 6 --seed 1 --concurrency 2 --time-margin 5 --out runs/os_uct_time_200":
        (CHECK, "OpenSpiel's MCTS through Python states and ours at 0.5 s a move: about "
         "40 minutes on 2 cores", None),
    # docs/ray.md
    "taluva tournament --agents random greedy mcts:sims=200 --games 200 --out runs/t --ray":
        (CHECK, _RAY + " (test_ray runs one)", None),
    "taluva train --config experiments/configs/full.toml --out /shared/runs/full --ray auto":
        (CHECK, _LONG + "; " + _RAY, None),
    "taluva tournament --agents greedy az:path=/shared/runs/full/best.pt,sims=400 --games 400 "
    "--out /shared/runs/full_vs_greedy --ray auto": (CHECK, _NET + "; " + _RAY, None),
    "python experiments/bench_ray.py --config experiments/configs/demo.toml --games 8 "
    "--rounds 3": (CHECK, _RAY + " (test_experiments runs it on the local backend)", None),
    # docs/solo.md
    "taluva play --solo --players mcts:sims=100,rollout=greedy,prior_temperature=1 --seed 3":
        (RUN, "", None),
    "python experiments/solo_ladder.py --games 200":
        (CHECK, "the solo ladder: hours (test_solo_tools runs its smoke size)", None),
    # docs/thurn_und_taxis.md
    "taluva play --game thurn_und_taxis --players greedy random --seed 7 --record g.jsonl --show":
        (RUN, "", None),
    "taluva replay g.jsonl":
        (RUN, "", "taluva play --game thurn_und_taxis --players greedy random --seed 7 --record "
         "g.jsonl --show"),
    "taluva tournament --game thurn_und_taxis --agents random greedy --games 200 --out runs/tnt":
        (RUN, "", None),
    "taluva bench --game thurn_und_taxis --json": (RUN, "", None),
    "taluva tournament --game thurn_und_taxis --agents greedy az:path=runs/tnt-demo/best.pt,"
    "sims=64,leaf_batch=1,rollout=greedy,lambda=1 --games 200 --concurrency 1 --seed 3 "
    "--out runs/tnt-demo_vs_greedy": (CHECK, _NET, None),
    "taluva tournament --game thurn_und_taxis --agents random az:path=runs/tnt-demo/best.pt,"
    "sims=64,leaf_batch=1,rollout=greedy,lambda=1 --games 200 --concurrency 1 --seed 1 "
    "--out runs/tnt-demo_vs_random": (CHECK, _NET, None),
    # docs/alphazero.md, "Train your own network": the 3-player measures need a 3-player
    # network (none ships yet: az:builtin is refused at such a table, tests/test_builtin.py);
    # the same command with two random copies is docs/tournaments.md's runs/field3
    "taluva tournament --gauntlet az:builtin --agents greedy greedy:name=g2 --players-per-game "
    "3 --games 240 --concurrency 2 --seed 1 --out runs/builtin3_greedy":
        (CHECK, "needs a 3-player built-in network (none ships yet)", None),
    "taluva tournament --gauntlet az:builtin --agents mcts:sims=400,rollout=greedy,root=gumbel "
    "mcts:sims=400,rollout=greedy,root=gumbel,name=m2 --players-per-game 3 --games 240 "
    "--concurrency 2 --seed 1 --out runs/builtin3_mcts400":
        (CHECK, "needs a 3-player built-in network (none ships yet); hours of MCTS-400", None),
    # docs/tournaments.md
    "taluva tournament --agents random greedy:epsilon=0.25 --games 20 --deals "
    "runs/tournament/deals.jsonl --out runs/same-deals":
        (RUN, "", "taluva tournament --agents random greedy --games 20 --out runs/tournament"),
    "taluva pgn runs/tournament --out tournament.pgn":
        (RUN, "", "taluva tournament --agents random greedy --games 20 --out runs/tournament"),
    "taluva tournament --gauntlet mcts:sims=400,rollout=greedy --agents random greedy "
    "--games 100 --concurrency 2 --seed 1 --out runs/g1": (RUN, "", None),
    "taluva tournament --agents greedy:epsilon=0.25 greedy --games 1000 --sprt elo0=0 elo1=50 "
    "alpha=0.05 beta=0.05 --seed 1 --out runs/s1": (RUN, "", None),
    "taluva tournament --agents random greedy greedy:epsilon=0.25 mcts:sims=100 "
    "--players-per-game 4 --games 40 --out runs/t4": (RUN, "", None),
    "taluva tournament --agents greedy mcts:time=0.5,rollout=greedy --time-margin 0.5 "
    "--games 50 --out runs/timed": (RUN, "", None),
    "taluva tournament --gauntlet greedy --agents random random:name=r2 --players-per-game 3 "
    "--games 60 --seed 1 --out runs/field3": (RUN, "", None),
    "taluva tournament --config tournament.toml":
        (CHECK, "the file of the document's example (written first): 200 games of MCTS-400 "
         "and a 0.5 s gauntlet", None),
    "taluva tournament --resume runs/g1 --concurrency 2":
        (RUN, "", "taluva tournament --gauntlet mcts:sims=400,rollout=greedy --agents random "
         "greedy --games 100 --concurrency 2 --seed 1 --out runs/g1"),
    "taluva tournament --agents greedy:epsilon=0.25 greedy --games 1000 --sprt elo0=0 elo1=50 "
    "alpha=0.05 beta=0.05 --seed 1 --out runs/sprt": (RUN, "", None),
    "taluva tournament --gauntlet mcts:time=0.1,rollout=greedy --agents random greedy --games 4 "
    "--tiles-per-player 12 --seed 2 --out runs/gauntlet": (RUN, "", None),
    # docs/web.md: the browser board
    "taluva serve runs": (CHECK, "starts a web server that runs until Ctrl-C (test_web runs "
                          "its app); checked on an empty runs/", None),
    "taluva replay game.jsonl --svg out/":
        (RUN, "", "taluva play --players greedy random --seed 7 --record game.jsonl --show"),
    "python experiments/web_screenshots.py --out docs":
        (SKIP, "drives headless chromium for a minute; tests/test_web_browser.py drives the "
         "same views", None),
    # docs/benchmarks.md: compile time
    "taluva bench --compile --json":
        (CHECK, "compiles two commands from nothing, each in a subprocess of its own (minutes); "
         "test_compile runs it on a command that compiles nothing", None),
    # docs/benchmarks.md: the test suite's first run
    "rm -rf /tmp/nbcache /tmp/compile": (SKIP, _EXTERNAL, None),
    "NUMBA_CACHE_DIR=/tmp/nbcache COMPILE_PROFILE_DIR=/tmp/compile python -m pytest "
    "-p experiments.compile_profile":
        (SKIP, "the whole test suite, cold (15 minutes); test_experiments checks the report",
         None),
    "python experiments/compile_profile.py /tmp/compile":
        (SKIP, "reads the run above; test_experiments runs the report on made-up events",
         None),
}

#: The RUN commands the default suite runs (the others: ``-m slow``).
DEFAULT_RUN = {
    "taluva tournament --agents random greedy --games 20 --out runs/tournament",
    "taluva pgn runs/tournament --out tournament.pgn",  # (no work to stub: reads a finished run)
    "taluva replay game.jsonl --svg out/",
    "taluva play --players greedy random --seed 7 --record game.jsonl --show",
    "taluva replay game.jsonl",
    "taluva play --solo --players greedy --show",
    "taluva bench --json",
    "taluva play --game thurn_und_taxis --players greedy random --seed 7 --record g.jsonl --show",
    "taluva replay g.jsonl",
}

#: The sizes a RUN command runs with: (pattern, replacement), applied in order. Search budgets
#: shrink by 100 (time) or to a hundredth (sims, at least 2), so different budgets stay
#: different agents.
SMALL: list[tuple[str, Any]] = [
    (r"--games \d+", "--games 2"),
    (r"\bsims=(\d+)", lambda m: f"sims={max(2, int(m.group(1)) // 100)}"),
    (r"\btime=([0-9.]+)", lambda m: f"time={float(m.group(1)) / 100:g}"),
    (r"--concurrency \d+", "--concurrency 1"),
]
#: Extra flags of RUN commands, by subcommand, where the default sizes are long (and
#: ``--games 2`` for a tournament that gives none).
SMALL_FLAGS: dict[str, list[str]] = {
    "bench": ["--games", "2", "--repeats", "1", "--mcts-sims", "20"],
}


def shell_commands(path: Path) -> list[str]:
    """The commands of the ``bash``/``sh`` code blocks of a Markdown file, in order:
    continuation lines joined, comments dropped, ``a && b`` split, whitespace normalised."""
    out: list[str] = []
    for m in FENCE.finditer(path.read_text(encoding="utf-8")):
        if m.group(1) not in ("bash", "sh", "shell", "console"):
            continue
        joined = re.sub(r"\\\n\s*", " ", m.group(2))
        for line in joined.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line)
            for part in line.split("&&"):
                part = " ".join(part.split())
                if part:
                    out.append(part)
    return out


def _documented() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in DOCUMENTS:
        for cmd in shell_commands(path):
            found.setdefault(cmd, []).append(path.relative_to(ROOT).as_posix())
    return found


def test_every_command_is_checked() -> None:
    documented = _documented()
    missing = sorted(set(documented) - set(CHECKED))
    assert not missing, ("commands of the docs without an entry in CHECKED (add one: RUN, "
                         f"CHECK or SKIP): {missing}")
    stale = sorted(set(CHECKED) - set(documented))
    assert not stale, f"CHECKED entries no document holds any more: {stale}"
    for cmd, (how, why, after) in CHECKED.items():
        assert how in (RUN, CHECK, SKIP)
        assert how == RUN or why, f"{cmd}: a CHECK or SKIP entry says why"
        assert after is None or after in CHECKED, f"{cmd}: runs after an unknown command"


def test_the_readme_commands_are_found() -> None:
    cmds = shell_commands(ROOT / "README.md")
    assert cmds[:4] == [
        "pip install -e .", "taluva tournament --agents random greedy --games 20 --out "
        "runs/tournament", "pip install -e '.[test]'", "pytest"]


def small(cmd: str) -> str:
    """``cmd`` with the sizes of :data:`SMALL`."""
    for pattern, repl in SMALL:
        cmd = re.sub(pattern, repl, cmd)
    return cmd


def _argv(cmd: str) -> list[str]:
    words = shlex.split(cmd)
    if words[0] == "time":
        words = words[1:]
    return words


class _Reached(Exception):
    """Raised by a stub where a CHECK command's work would start."""


def _toml_example() -> str:
    text = (ROOT / "docs" / "tournaments.md").read_text(encoding="utf-8")
    blocks = [m.group(2) for m in FENCE.finditer(text) if m.group(1) == "toml"]
    return next(b for b in blocks if b.startswith("# tournament.toml"))


def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh current directory that sees the repository's experiments/ (configs)."""
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    (tmp_path / "tournament.toml").write_text(_toml_example(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(cmd: str) -> int:
    from taluva_ai.cli import main

    argv = _argv(small(cmd))
    assert argv[0] == "taluva", f"RUN is for taluva commands: {cmd}"
    args = argv[1:]
    args += SMALL_FLAGS.get(args[0], [])
    if args[0] == "tournament" and not {"--games", "--resume", "--config"} & set(args):
        args += ["--games", "2"]  # the default is 20 per pair
    try:
        return main(args)
    except SystemExit as e:
        return int(e.code or 0)


def _stub_the_work(monkeypatch: pytest.MonkeyPatch, taluva: bool) -> None:
    import taluva_ai.bench as bench
    import taluva_ai.parallel as parallel
    import taluva_ai.tournament as tournament
    import taluva_ai.web as web
    from taluva_ai.agents import known_agents, parse_agent_spec
    from taluva_ai.agents.simple import RandomAgent

    def reached(*args: Any, **kwargs: Any) -> Any:
        raise _Reached

    def agent(spec: str, seed: int | None = None) -> Any:  # no checkpoint is loaded
        name, _ = parse_agent_spec(spec)
        assert name in known_agents(), spec
        return RandomAgent(seed)

    def backend(address: str | None) -> Any:
        if address is not None:
            parallel.parse_ray_address(address)
        return parallel.LocalBackend()

    for name in ("run_tournament", "resume_tournament", "play_game"):
        monkeypatch.setattr(tournament, name, reached)
    monkeypatch.setattr(tournament, "make_agent", agent)
    monkeypatch.setattr(bench, "run_bench", reached)
    monkeypatch.setattr(web, "run_server", reached)
    monkeypatch.setattr(web, "listen", lambda host, port: socket.socket())  # no real port
    monkeypatch.setattr(parallel, "make_backend", backend)
    monkeypatch.setattr(parallel, "import_ray", lambda: None)
    if taluva:  # the command imports these two at run time: no PyTorch needed to check it
        train = types.ModuleType("taluva_ai.agents.alphazero.train")
        train.train_main = reached  # type: ignore[attr-defined]
        train.pack_run = reached  # type: ignore[attr-defined]
        net = types.ModuleType("taluva_ai.agents.alphazero.net")
        net.CheckpointError = type("CheckpointError", (Exception,), {})  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, train.__name__, train)
        monkeypatch.setitem(sys.modules, net.__name__, net)



def _stop_after_parsing(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """Make the experiment script ``script`` stop (:class:`_Reached`) once its own parser
    (``prog`` is the script's file name) has parsed the command line."""
    real_parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
        ns = real_parse(self, *a, **k)
        if self.prog == Path(script).name:
            raise _Reached
        return ns

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)


def _check(cmd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv(cmd)
    _stub_the_work(monkeypatch, argv[0] == "taluva")
    if argv[0] == "taluva":
        from taluva_ai.cli import main

        if argv[1] == "serve":  # the server's directories (empty), and its app's packages
            pytest.importorskip("starlette")
            for d in argv[2:]:
                if not d.startswith("-"):
                    Path(d).mkdir(parents=True, exist_ok=True)
        with pytest.raises((_Reached, SystemExit)) as info:
            main(argv[1:])
    else:
        assert argv[:2] == ["python", argv[1]] and argv[1].startswith("experiments/"), cmd
        import runpy

        monkeypatch.setattr(sys, "argv", [argv[1], *argv[2:]])
        _stop_after_parsing(monkeypatch, argv[1])
        with pytest.raises((_Reached, SystemExit)) as info:
            runpy.run_path(str(ROOT / argv[1]), run_name="__main__")
    if isinstance(info.value, SystemExit):
        pytest.fail(f"{cmd!r} stopped with exit status {info.value.code} before its work")


_CASES = [(cmd, how) for cmd, (how, _, _) in CHECKED.items() if how != SKIP]


@pytest.mark.parametrize(("cmd", "how"), _CASES, ids=[c for c, _ in _CASES])
def test_documented_command_runs_as_written(cmd: str, how: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The default suite: the RUN commands of :data:`DEFAULT_RUN` run, every other command is
    checked up to its work."""
    _workdir(tmp_path, monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")
    if how == RUN and cmd in DEFAULT_RUN:
        _run_after(cmd, capsys)
    else:
        _check(cmd, monkeypatch)
    assert os.getcwd() == str(tmp_path)


_SLOW = [cmd for cmd, (how, _, _) in CHECKED.items() if how == RUN and cmd not in DEFAULT_RUN]


@pytest.mark.slow
@pytest.mark.parametrize("cmd", _SLOW, ids=_SLOW)
def test_documented_command_runs_small(cmd: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``-m slow``: the other RUN commands run, with the sizes of :data:`SMALL`."""
    _workdir(tmp_path, monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")
    _run_after(cmd, capsys)


def _run_after(cmd: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Run the command ``cmd`` needs first (if any), then ``cmd``; both must succeed."""
    after = CHECKED[cmd][2]
    if after is not None:
        assert _run(after) == 0, f"{after!r} (run before {cmd!r}) failed"
    status = _run(cmd)
    err = capsys.readouterr().err
    assert status == 0, f"{small(cmd)!r} exited with {status}: {err[-2000:]}"
