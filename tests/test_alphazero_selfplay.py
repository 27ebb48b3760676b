"""Batched self-play, expert games, samples and the replay buffer: targets, values by player
slot, augmentation that turns planes and policy together, records, determinism."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import taluva_ai.games.taluva.encoding as E  # noqa: E402
from taluva_ai.agents.alphazero.config import SelfPlaySection  # noqa: E402
from taluva_ai.agents.alphazero.encoder import make_encoder  # noqa: E402
from taluva_ai.agents.alphazero.evaluator import NetEvaluator, value_targets  # noqa: E402
from taluva_ai.agents.alphazero.net import NetConfig, build_net  # noqa: E402
from taluva_ai.agents.alphazero.replay import (  # noqa: E402
    PRIORITY_EPS,
    ReplayBuffer,
    SampleBuilder,
    SampleSet,
    replay_priority,
)
from taluva_ai.agents.alphazero.selfplay import (  # noqa: E402
    SelfPlay,
    game_seeds,
    play_expert_games,
    record_sample,
    rollout_values,
    root_values,
    write_record,
)
from taluva_ai.games.taluva import TaluvaGame  # noqa: E402
from taluva_ai.games.taluva.hexgrid import rotate_hex  # noqa: E402
from taluva_ai.protocol import CHANCE  # noqa: E402
from taluva_ai.records import replay_record  # noqa: E402

SMALL = NetConfig("tiny", channels=8, blocks=1, global_hidden=8, value_hidden=8)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small batches: one torch thread


def selfplay(num_players: int = 2, games: int = 2, seed: int = 0, **cfg):
    """Self-play of a small random network (cached per arguments)."""
    key = (num_players, games, seed, tuple(sorted(cfg.items())))
    if key not in _PLAYED:
        _PLAYED[key] = _selfplay(num_players, games, seed, **cfg)
    return _PLAYED[key]


_PLAYED: dict = {}


def _selfplay(num_players: int, games: int, seed: int, **cfg):
    torch.manual_seed(0)
    enc = make_encoder("taluva", num_players)
    net = build_net(enc, SMALL)
    game = TaluvaGame(num_players=num_players)
    settings = SelfPlaySection(**{"games": games, "parallel_games": 2, "sims": 6,
                                  "fast_sims": 3, "full_search_prob": 0.5, "leaf_batch": 2,
                                  **cfg})
    ev = NetEvaluator(net, enc, seed=seed)
    builder = SampleBuilder(enc)
    ended = []
    summaries = SelfPlay(game, enc, ev, settings).play(
        [(g, *game_seeds(seed, 1, g)) for g in range(games)], builder,
        lambda summary, slot: ended.append((summary, list(slot.history))))
    return game, enc, builder.build(), summaries, ended


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_selfplay_games_make_consistent_samples(root: str) -> None:
    games = 2 if root == "puct" else 1
    game, enc, samples, summaries, ended = selfplay(root=root, games=games)
    assert sorted(s.game for s in summaries) == list(range(games))
    assert len(samples) == sum(s.samples for s in summaries) > 0
    assert samples.games == games
    # playout cap randomisation: about half the searched decisions are recorded
    searched = sum(s.simulations for s in summaries)
    assert 0 < len(samples) < sum(s.decisions for s in summaries)
    assert searched > 0
    returns = {s.game: np.array(s.returns) for s in summaries}
    for i in range(len(samples)):
        lo, hi = samples.offsets[i], samples.offsets[i + 1]
        t = samples.target[lo:hi]
        assert t.sum() == pytest.approx(1.0, abs=1e-5) and (t >= 0).all()
        ids = samples.ids[:, lo:hi]
        assert (ids >= 0).all() and (ids < enc.num_actions).all()
        assert len(set(ids[0].tolist())) == ids.shape[1]
        p = int(samples.player[i])
        np.testing.assert_allclose(samples.value[i], np.roll(returns[samples.game[i]], -p))
    # every self-play sample carries its search's root value, on the value targets' scale
    assert samples.root_value.shape == samples.value.shape
    assert np.isfinite(samples.root_value).all() and (np.abs(samples.root_value) <= 1).all()
    # the records replay to the games' ends
    for summary, history in ended:
        s = game.new_initial_state(seed=summary.seed)
        for a in history:
            s.apply(a)
        assert s.is_terminal() and s.returns().tolist() == summary.returns
        assert len(history) == summary.plies


def test_selfplay_is_deterministic() -> None:
    _, _, a, sa, _ = selfplay(root="puct", games=2)
    _, _, b, sb, _ = _selfplay(2, 2, 0, root="puct")
    assert [s.__dict__ for s in sa] == [s.__dict__ for s in sb]
    for name in ("bits", "ints", "globals", "value", "offsets", "ids", "target"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_records_of_selfplay_games_replay(tmp_path) -> None:
    game, _, _, _, ended = selfplay(root="puct", games=2)
    summary, history = ended[0]
    path = tmp_path / "g.jsonl"
    write_record(path, game, summary.seed, history, ["az", "az"], {"game": 0})
    state = replay_record(path)
    assert state.is_terminal() and state.returns().tolist() == summary.returns


def test_augmentation_turns_planes_and_policy_together() -> None:
    """A sample under rotation k is the encoding of the turned position: its planes, and its
    legal ids are the turned position's legal ids with the same target mass."""
    game = TaluvaGame()
    enc = make_encoder("taluva", 2)
    builder = SampleBuilder(enc)
    states = []
    rng = np.random.default_rng(3)
    s = game.new_initial_state(seed=21)
    while not s.is_terminal() and len(states) < 14:
        if s.current_player < 0:
            s.draw()
            continue
        legal = s.legal_actions()
        if s.tiles_placed >= 8 and legal.size > 1:
            probs = rng.random(legal.size)
            record_sample(builder, enc, s, legal, probs / probs.sum(), 0)
            states.append((s.clone(), dict(zip(legal.tolist(), probs / probs.sum(),
                                                strict=True))))
        s.apply(int(legal[rng.integers(legal.size)]))
    builder.finish_game(0, np.zeros(2))
    samples = builder.build()
    assert len(samples) == len(states)
    expansions = 0
    for i, (st, target_by_action) in enumerate(states):
        _, _, center, _ = E.encode(st)
        _, ids0, t0 = samples.example(i, 0, enc)
        expansions += int((ids0 >= E.CH_EXPAND * 729).any())
        for k in range(6):
            rot = E.rotated_state(st, k)
            c2 = rotate_hex(center[0], center[1], k)
            planes, mask, _, _ = E.encode(rot, center=c2)
            sp, ids, t = samples.example(i, k, enc)
            np.testing.assert_array_equal(sp, planes[:enc.spatial_planes])
            assert sorted(ids.tolist()) == np.flatnonzero(mask).tolist()
            np.testing.assert_allclose(t, t0)  # the same actions, in the same order
            if st.step.name == "BUILD":  # the mass sits on the same actions, turned
                outcome = {_outcome(E.rotated_state(_after(st, a), k)): p
                           for a, p in target_by_action.items()}
                for a, vid in zip(rot.legal_actions().tolist(), _view_ids(rot, c2),
                                  strict=True):
                    j = ids.tolist().index(vid)
                    assert t[j] == pytest.approx(outcome[_outcome(_after(rot, a))], rel=1e-5)
    assert expansions >= 2


def _after(state, action):
    s = state.clone()
    s.apply(action)
    return s


def _outcome(state):
    return state.cells.tobytes() + state.players.tobytes()


def _view_ids(state, center):
    from taluva_ai.agents.alphazero.encoder import _engine_to_view_ids

    legal = state.legal_actions()
    out = np.empty(legal.size, dtype=np.int64)
    _engine_to_view_ids(legal, state.game.num_cells, state.game.hexqr, center[0], center[1],
                        13, out)
    return out


def test_expert_heuristic_targets_are_the_softmax_of_the_heuristic() -> None:
    game = TaluvaGame()
    enc = make_encoder("taluva", 2)
    builder = SampleBuilder(enc)
    summaries = play_expert_games(game, enc, [(0, 5, 6)], builder, "heuristic", 10.0, 0.0)
    samples = builder.build()
    assert summaries[0].samples == len(samples) > 20
    # replay the game to its 3rd recorded decision and check the target
    s = game.new_initial_state(seed=5)
    rng = np.random.default_rng(6)
    recorded = 0
    while True:
        while s.current_player < 0:
            s.draw()
        ids, vals = s.heuristic_values()
        if ids.size > 1:
            if recorded == 2:
                break
            recorded += 1
        best = np.flatnonzero(vals == vals.max())
        rng.random()  # the epsilon draw
        s.apply(int(ids[best[rng.integers(best.size)]]))
    w = np.exp((vals - vals.max()) / 10.0)
    lo, hi = samples.offsets[2], samples.offsets[3]
    np.testing.assert_allclose(np.sort(samples.target[lo:hi]), np.sort(w / w.sum()), rtol=1e-5)


def test_sample_files_round_trip_and_bad_files_are_named(tmp_path) -> None:
    samples = selfplay(root="puct", games=2)[2]
    samples.save(tmp_path / "s.npz")
    back = SampleSet.load(tmp_path / "s.npz")
    for name in ("bits", "ints", "globals", "value", "offsets", "ids", "target", "game"):
        np.testing.assert_array_equal(getattr(back, name), getattr(samples, name))
    np.savez(tmp_path / "bad.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match="not a sample file"):
        SampleSet.load(tmp_path / "bad.npz")


def test_replay_buffer_window_and_batches() -> None:
    _, enc, samples, _, _ = selfplay(root="puct", games=2)
    buf = ReplayBuffer(enc, window_games=3)
    for i in range(3):
        buf.add(f"iter_{i}", samples)  # 2 games each
    assert buf.names() == ["iter_1", "iter_2"] and buf.games == 4
    batch = buf.sample(32, np.random.default_rng(0))
    assert batch.spatial.shape == (32, enc.spatial_planes, 27, 27)
    assert batch.mask.shape == batch.target.shape == (32, enc.num_actions)
    assert (batch.target[~batch.mask] == 0).all()
    np.testing.assert_allclose(batch.target.sum(axis=1), 1.0, rtol=1e-5)
    assert batch.value.shape == (32, 2)
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(enc, 1).sample(4, np.random.default_rng(0))


def test_root_values_are_the_mean_backed_up_value_clipped() -> None:
    from taluva_ai.agents.search.tree import Tree

    tree = Tree(2)
    assert root_values(tree) is None  # never visited
    tree.N[0] = 4.0
    tree.W[0] = [2.0, -6.0]
    np.testing.assert_array_equal(root_values(tree), [0.5, -1.0])  # -1.5 clipped


def _first_decision() -> tuple:
    """``(encoder, state, builder, legal actions, uniform target)`` at the first decision of a
    seeded 2-player Taluva game, for recording samples by hand."""
    enc = make_encoder("taluva", 2)
    state = TaluvaGame(num_players=2).new_initial_state(seed=3)
    while state.current_player < 0:
        state.draw()
    builder = SampleBuilder(enc)
    legal = state.legal_actions()
    probs = np.full(legal.size, 1.0 / legal.size)
    return enc, state, builder, legal, probs


def _two_samples() -> tuple:
    """A SampleSet of two 2-player samples: one with a root value (seat 1 to move), one
    without (an expert's)."""
    enc, state, builder, legal, probs = _first_decision()
    record_sample(builder, enc, state, legal, probs, 0, np.array([0.25, -0.75]))
    record_sample(builder, enc, state, legal, probs, 1, None)
    builder.finish_game(0, np.array([1.0, -1.0]))
    builder.finish_game(1, np.array([-1.0, 1.0]))
    return enc, builder.build()


def test_root_values_are_stored_by_player_slot_and_mixed_into_the_value_target(
        tmp_path) -> None:
    enc, samples = _two_samples()
    p = int(samples.player[0])
    np.testing.assert_array_equal(samples.root_value[0], np.roll([0.25, -0.75], -p))
    assert np.isnan(samples.root_value[1]).all()  # no search made it
    # files keep them; a file written before they were recorded loads as "none"
    samples.save(tmp_path / "s.npz")
    back = SampleSet.load(tmp_path / "s.npz")
    np.testing.assert_array_equal(back.root_value, samples.root_value)
    with np.load(tmp_path / "s.npz") as z:
        old = {k: z[k] for k in z.files if k != "root_value"}
    np.savez(tmp_path / "old.npz", **old)
    assert np.isnan(SampleSet.load(tmp_path / "old.npz").root_value).all()
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("s", samples)
    rng = np.random.default_rng(0)
    picks = np.random.default_rng(0).integers(2, size=64)
    mixed = buf.sample(64, rng, value_mix=0.25).value
    z = samples.value[picks]
    q = samples.root_value[picks]
    want = np.where(np.isnan(q), z, 0.75 * z + 0.25 * np.nan_to_num(q))
    np.testing.assert_allclose(mixed, want, rtol=0, atol=1e-7)
    assert set(picks.tolist()) == {0, 1}
    plain = buf.sample(64, np.random.default_rng(0)).value
    np.testing.assert_array_equal(plain, z)


def test_prioritized_replay_draws_by_the_search_s_error_and_weights_the_draws() -> None:
    enc, samples = _two_samples()
    # sample 0: |z - q| = |(1, -1) - (0.25, -0.75)| by slot, mean 0.5; sample 1: q unknown, 0
    np.testing.assert_allclose(replay_priority(samples), [0.5 + PRIORITY_EPS, 1.0 + PRIORITY_EPS],
                               rtol=0, atol=1e-12)
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("s", samples)
    for alpha, beta in ((1.0, 1.0), (2.0, 0.0), (0.5, 0.4)):
        p = np.array([0.51, 1.01]) ** alpha
        p /= p.sum()
        picks = np.random.default_rng(7).choice(2, size=200, p=p)
        assert set(picks.tolist()) == {0, 1}
        batch = buf.sample(200, np.random.default_rng(7), priority_alpha=alpha,
                           priority_beta=beta)
        np.testing.assert_array_equal(batch.value, samples.value[picks])
        each = (2 * p) ** -beta  # over its mean under the sampling: the weights average 1
        np.testing.assert_allclose(batch.weight, each[picks] / (p * each).sum(), rtol=1e-6)
    # the drawn share follows P(i): sample 1 drawn about (1.01 / 0.51) ** 2 = 3.9 times as often
    drawn = buf.sample(4000, np.random.default_rng(1), priority_alpha=2.0).value
    share = float((drawn == samples.value[1]).all(axis=1).mean())
    assert abs(share - 1.01 ** 2 / (1.01 ** 2 + 0.51 ** 2)) < 0.03
    assert buf.sample(8, np.random.default_rng(0)).weight is None  # uniform: no weights


def test_taluva_tells_an_elimination_from_a_finish_by_the_auxiliary_targets() -> None:
    aux = np.zeros((4, 2, 4), dtype=np.float32)
    aux[0, 0] = [0, 0.5, 0.5, 1]   # out of huts, temples and towers left: eliminated
    aux[1, 0] = [0, 0, 0.5, 1]     # huts and temples all built: early victory
    aux[2, 1] = [0.5, 0, 0, 1]     # temples and towers all built: early victory
    aux[3] = np.nan                # unknown (a file from before the targets): not counted
    enc = make_encoder("taluva", 2)
    np.testing.assert_array_equal(enc.eliminated(aux), [True, False, False, False])
    with pytest.raises(ValueError, match=r"auxiliary targets of shape \[4, 2, 3\], this "
                       r"encoder's are \[samples, 2, 4\]"):
        enc.eliminated(aux[:, :, :3])
    assert make_encoder("taluva", 1).eliminated(aux[:, :1]) is None  # solo: no one to lose to


def test_elimination_weight_weighs_the_samples_of_games_that_ended_with_an_elimination(
        ) -> None:
    enc, samples = _two_samples()
    aux = np.zeros((2, 2, 4), dtype=np.float32)
    aux[1, 1] = [0, 1 / 3, 0.5, 1]  # sample 1's game: seat 1 eliminated
    samples.aux = aux
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("s", samples)
    np.testing.assert_array_equal(buf.eliminated(), [False, True])
    picks = np.random.default_rng(3).integers(2, size=64)
    assert set(picks.tolist()) == {0, 1}
    batch = buf.sample(64, np.random.default_rng(3), elimination_weight=4.0)
    np.testing.assert_array_equal(batch.value, samples.value[picks])
    # 4 and 1 over their mean on the buffer, (4 + 1) / 2
    np.testing.assert_allclose(batch.weight, np.where(picks == 1, 1.6, 0.4), rtol=1e-6)
    # with prioritized replay, the two weights multiply
    p = np.array([0.51, 1.01]) / 1.52
    picks = np.random.default_rng(3).choice(2, size=64, p=p)
    both = buf.sample(64, np.random.default_rng(3), priority_alpha=1.0, priority_beta=1.0,
                      elimination_weight=4.0)
    w = 1 / (2 * p[picks])  # beta 1: the unbiased weight 1 / (N P(i)), mean 1 already
    np.testing.assert_allclose(both.weight, w * np.where(picks == 1, 1.6, 0.4), rtol=1e-6)
    assert buf.sample(8, np.random.default_rng(0), elimination_weight=1.0).weight is None
    # samples from files written before the auxiliary targets count as no elimination
    old = ReplayBuffer(enc, window_games=10)
    samples.aux = np.zeros((2, 2, 0), dtype=np.float32)
    old.add("old", samples)
    np.testing.assert_array_equal(old.eliminated(), [False, False])
    assert (old.sample(8, np.random.default_rng(0), elimination_weight=4.0).weight == 1).all()


# -- rollout values ([selfplay] value_rollouts, [train] rollout_target_mix) -------------------


def test_rollout_values_are_the_mean_target_of_seeded_greedy_rollouts() -> None:
    state = TaluvaGame(num_players=2).new_initial_state(seed=3)
    for _ in range(30):  # into the game, at a decision
        while state.current_player < 0:
            state.draw()
        state.apply(int(state.legal_actions()[0]))
    while state.current_player < 0:
        state.draw()
    before = state.to_position_string()
    seeds = np.random.default_rng([3, 5, 30]).integers(2**31 - 1, size=6).tolist()
    each = [value_targets(state, state.rollout("greedy", s, 8)) for s in seeds]
    got = rollout_values(state, 6, 8, (3, 5, 30))
    np.testing.assert_array_equal(got, np.mean(each, axis=0))
    assert state.to_position_string() == before  # the rollouts play copies
    assert set(np.round(got * 6).tolist()) <= set(range(-6, 7))  # six results of +-1 or 0
    np.testing.assert_array_equal(rollout_values(state, 1, 8, (3, 5, 30)), each[0])
    with pytest.raises(ValueError, match="count must be >= 1, got 0"):
        rollout_values(state, 0, 8, (3, 5, 30))


def test_rollout_values_are_stored_saved_and_mixed_with_the_root_value(tmp_path) -> None:
    enc, state, builder, legal, probs = _first_decision()
    record_sample(builder, enc, state, legal, probs, 0, np.array([0.25, -0.75]),
                  np.array([0.5, -0.5]))
    record_sample(builder, enc, state, legal, probs, 1, None, None)
    builder.finish_game(0, np.array([1.0, -1.0]))
    builder.finish_game(1, np.array([-1.0, 1.0]))
    samples = builder.build()
    p = int(samples.player[0])
    np.testing.assert_array_equal(samples.rollout_value[0], np.roll([0.5, -0.5], -p))
    assert np.isnan(samples.rollout_value[1]).all()
    samples.save(tmp_path / "s.npz")
    np.testing.assert_array_equal(SampleSet.load(tmp_path / "s.npz").rollout_value,
                                  samples.rollout_value)
    with np.load(tmp_path / "s.npz") as z:  # a file from before: no rollout values
        np.savez(tmp_path / "old.npz", **{k: z[k] for k in z.files if k != "rollout_value"})
    assert np.isnan(SampleSet.load(tmp_path / "old.npz").rollout_value).all()
    with np.load(tmp_path / "s.npz") as z:  # a damaged one: named
        np.savez(tmp_path / "bad.npz", **{**{k: z[k] for k in z.files},
                                          "rollout_value": np.zeros(3, dtype=np.float32)})
    with pytest.raises(ValueError, match=r"bad.npz: inconsistent sample arrays \(rollout_value\)"):
        SampleSet.load(tmp_path / "bad.npz")
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("s", samples)
    picks = np.random.default_rng(0).integers(2, size=64)
    assert set(picks.tolist()) == {0, 1}
    mixed = buf.sample(64, np.random.default_rng(0), value_mix=0.25, rollout_mix=0.5).value
    z, q, r = samples.value, samples.root_value, samples.rollout_value
    want = np.stack([0.25 * z[0] + 0.25 * q[0] + 0.5 * r[0], z[1]])[picks]
    np.testing.assert_allclose(mixed, want, rtol=0, atol=1e-7)
    only_r = buf.sample(64, np.random.default_rng(0), rollout_mix=1.0).value
    np.testing.assert_array_equal(only_r, np.stack([r[0], z[1]])[picks])


def test_selfplay_records_rollout_values_without_changing_its_games() -> None:
    _, _, plain, summaries, ended = selfplay(games=1)
    _, _, with_r, summaries_r, ended_r = selfplay(games=1, value_rollouts=2)
    assert [h for _, h in ended_r] == [h for _, h in ended]  # the same game, move for move
    assert summaries_r == summaries
    np.testing.assert_array_equal(with_r.value, plain.value)
    np.testing.assert_array_equal(with_r.target, plain.target)
    assert np.isnan(plain.rollout_value).all()
    r = with_r.rollout_value
    assert r.shape == with_r.value.shape and np.isfinite(r).all()
    assert set(np.unique(r).tolist()) <= {-1.0, -0.5, 0.0, 0.5, 1.0}  # means of two results
    np.testing.assert_array_equal(r.sum(axis=1), 0.0)  # zero-sum by player slot
    assert len(np.unique(r)) > 1


# -- auxiliary targets (KataGo's; [net] aux_head) ----------------------------------------------


def _finished(seed: int, num_players: int = 2):
    """A seeded random game of Taluva played to its end."""
    rng = np.random.default_rng(seed)
    state = TaluvaGame(num_players=num_players).new_initial_state(seed=seed)
    while not state.is_terminal():
        if state.current_player < 0:
            state.draw()
        else:
            state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_aux_targets_are_each_seat_s_final_supply_and_whether_it_is_out(num_players) -> None:
    from taluva_ai.games.taluva import Status

    enc = make_encoder("taluva", num_players)
    assert enc.num_aux == 4 and make_encoder("taluva", 1).num_aux == 0
    state = _finished(num_players, num_players)
    want = [[state.supply(s)["huts"] / 20, state.supply(s)["temples"] / 3,
             state.supply(s)["towers"] / 2, float(state.status(s) != Status.ACTIVE)]
            for s in range(num_players)]
    got = enc.aux_targets(state)
    assert got.dtype == np.float32 and got.shape == (num_players, 4)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    with pytest.raises(ValueError, match="needs a finished game"):
        enc.aux_targets(TaluvaGame(num_players=num_players).new_initial_state(seed=1))
    assert make_encoder("taluva", 1).aux_targets(state) is None
    assert make_encoder("thurn_und_taxis", 2).num_aux == 0


def test_aux_targets_are_stored_by_player_slot_and_batched(tmp_path) -> None:
    enc, state, builder, legal, probs = _first_decision()
    record_sample(builder, enc, state, legal, probs, 0, None)
    record_sample(builder, enc, state, legal, probs, 1, None)
    aux = np.array([[0.5, 1.0, 0.0, 0.0], [0.25, 0.0, 0.5, 1.0]], dtype=np.float32)  # by seat
    builder.finish_game(0, np.array([1.0, -1.0]), aux)
    builder.finish_game(1, np.array([-1.0, 1.0]))  # unknown: NaN
    samples = builder.build()
    p = int(samples.player[0])
    np.testing.assert_array_equal(samples.aux[0], np.roll(aux, -p, axis=0))
    assert samples.aux.shape == (2, 2, 4) and np.isnan(samples.aux[1]).all()
    samples.save(tmp_path / "s.npz")
    np.testing.assert_array_equal(SampleSet.load(tmp_path / "s.npz").aux, samples.aux)
    with np.load(tmp_path / "s.npz") as z:  # a file from before: no aux array
        np.savez(tmp_path / "old.npz", **{k: z[k] for k in z.files if k != "aux"})
    old = SampleSet.load(tmp_path / "old.npz")
    assert old.aux.shape == (2, 2, 0)
    both = SampleSet.concatenate([old, samples])
    assert both.aux.shape == (4, 2, 4) and np.isnan(both.aux[:2]).all()
    np.testing.assert_array_equal(both.aux[2:], samples.aux)
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("both", both)
    picks = np.random.default_rng(0).integers(4, size=32)
    batch = buf.sample(32, np.random.default_rng(0))
    np.testing.assert_array_equal(batch.aux, both.aux[picks])
    # every sample once, in order, as recorded: for held-out measurements
    parts = list(buf.batches(3))
    assert [len(b.value) for b in parts] == [3, 1]
    np.testing.assert_array_equal(np.concatenate([b.value for b in parts]), both.value)
    np.testing.assert_array_equal(np.concatenate([b.aux for b in parts]), both.aux)
    np.testing.assert_array_equal(parts[1].spatial[0], both.spatial(3, enc))
    with np.load(tmp_path / "s.npz") as z:
        np.savez(tmp_path / "bad.npz", **{**{k: z[k] for k in z.files},
                                          "aux": np.zeros((3, 4), dtype=np.float32)})
    with pytest.raises(ValueError, match=r"bad\.npz: inconsistent sample arrays \(aux\)"):
        SampleSet.load(tmp_path / "bad.npz")


def test_selfplay_and_expert_games_record_their_final_aux_targets() -> None:
    """Every sample of a game carries, by player slot, the aux targets of the game's end."""
    game, enc, samples, _, ended = selfplay(root="puct", games=2)
    final = {}
    for summary, history in ended:
        state = game.new_initial_state(seed=summary.seed)
        for a in history:
            state.apply(a)
        final[summary.game] = enc.aux_targets(state)
    assert sorted(final) == [0, 1]
    for i in range(len(samples)):
        p = int(samples.player[i])
        np.testing.assert_array_equal(samples.aux[i], np.roll(final[samples.game[i]], -p, 0))
    builder = SampleBuilder(enc)
    histories: list = []
    done = play_expert_games(game, enc, [(0, 5, 6)], builder, "heuristic", 10.0, 0.0,
                             lambda summary, history: histories.append(list(history)))
    experts = builder.build()
    state = game.new_initial_state(seed=done[0].seed)
    for a in histories[0]:
        state.apply(a)
    assert done[0].samples == len(experts) > 0
    for i in range(len(experts)):
        p = int(experts.player[i])
        np.testing.assert_array_equal(experts.aux[i], np.roll(enc.aux_targets(state), -p, 0))


def _decisions_to_the_end(num_players: int, seed: int):
    """A game of random legal moves: ``(encodings of its decisions, the final state)``."""
    game = TaluvaGame(num_players=num_players)
    enc = make_encoder("taluva", num_players)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(seed=seed)
    seen = []
    while not state.is_terminal():
        if state.current_player == CHANCE:
            acts, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply(int(rng.choice(acts, p=np.asarray(probs) / sum(probs))))
            continue
        seen.append(enc.encode(state))
        state.apply(int(rng.choice(state.legal_actions())))
    return enc, seen, state


@pytest.mark.parametrize("num_players", [2, 3])
def test_ownership_targets_are_each_slot_s_buildings_at_the_end_in_the_sample_s_frame(
        num_players: int) -> None:
    """Pixel ``(dr + R, dq + R)`` of a sample centred on ``(qc, rc)`` is the table's hex
    ``(qc + dq, rc + dr)``; its target for slot ``j`` is 1 iff seat ``(player + j) % n`` has a
    building there at the end. Checked from the final state's cells, not the encoder."""
    from taluva_ai.games.taluva.state import C_BUILDING, C_OWNER

    enc, seen, final = _decisions_to_the_end(num_players, seed=num_players)
    cell_of = final.game.board.cell_of
    big = (cell_of.shape[0] - 1) // 2
    R, S = enc.view_radius, enc.side
    assert enc.num_ownership == num_players
    for e in seen[::7]:
        got = enc.ownership_targets(final, e.frame, e.player)
        assert got.dtype == np.uint8 and got.shape == (num_players, S, S)
        want = np.zeros_like(got)
        qc, rc = e.frame
        for row in range(S):
            for col in range(S):
                if not enc.valid[row, col]:
                    continue
                q, r = qc + col - R, rc + row - R
                if abs(q) > big or abs(r) > big:
                    continue
                c = cell_of[q + big, r + big]
                if c >= 0 and final.cells[c, C_BUILDING] != 0:
                    want[(final.cells[c, C_OWNER] - e.player) % num_players, row, col] = 1
        np.testing.assert_array_equal(got, want)
    assert got.sum() > 0
    mid = seen[len(seen) // 2]
    with pytest.raises(ValueError, match="needs a finished game"):
        enc.ownership_targets(TaluvaGame(num_players=num_players).new_initial_state(seed=1),
                              mid.frame, mid.player)
    assert make_encoder("taluva", 1).num_ownership == 0
    assert make_encoder("taluva", 1).ownership_targets(final, (0, 0), 0) is None
    assert make_encoder("thurn_und_taxis", 2).num_ownership == 0


def test_ownership_targets_turn_as_the_building_planes_do() -> None:
    """Under each rotation the ownership targets move as the huts, temple and tower planes of
    the final position in the same frame move under ``transform_spatial``."""
    enc, seen, final = _decisions_to_the_end(2, seed=5)
    e = seen[len(seen) // 3]
    own = enc.ownership_targets(final, e.frame, e.player)
    planes = E.encode(final, player=e.player, view_radius=enc.view_radius, center=e.frame)[0]
    spatial = planes[:enc.spatial_planes].astype(np.uint8)
    b = E.plane_names(2).index("huts/0")
    for k in range(6):
        turned = enc.transform_spatial(spatial, k)[b:b + 6].reshape(3, 2, enc.side, enc.side)
        np.testing.assert_array_equal(enc.transform_pixels(own, k),
                                      (turned.max(axis=0) > 0).astype(np.uint8))
    assert not np.array_equal(enc.transform_pixels(own, 1), own)
    with pytest.raises(NotImplementedError, match="no ownership targets"):
        make_encoder("thurn_und_taxis", 2).transform_pixels(own, 1)


def test_ownership_targets_are_recorded_saved_batched_and_absent_in_older_files(
        tmp_path) -> None:
    """Self-play records each sample's ownership at its game's end (in its frame, by slot);
    the file keeps it; a batch turns it with the sample's symmetry; a file from before has
    none, and its samples are marked unknown when concatenated with newer ones."""
    game, enc, samples, _, ended = selfplay(root="puct", games=2)
    want = {}  # (game, the planes' bytes) -> the ownership of that decision in its frame
    for summary, history in ended:
        state, seen = game.new_initial_state(seed=summary.seed), []
        for a in history:
            if state.current_player >= 0:
                seen.append(enc.encode(state))
            state.apply(a)
        for e in seen:
            want[(summary.game, e.spatial.tobytes() + e.globals.tobytes())] = \
                enc.ownership_targets(
                state, e.frame, e.player)
    assert samples.ownership_known.all() and len(samples) > 10
    for i in range(len(samples)):
        np.testing.assert_array_equal(
            samples.ownership_planes(i, 0, enc),
            want[(int(samples.game[i]),
                   samples.spatial(i, enc).tobytes() + samples.globals[i].tobytes())])
    samples.save(tmp_path / "s.npz")
    back = SampleSet.load(tmp_path / "s.npz")
    np.testing.assert_array_equal(back.ownership, samples.ownership)
    np.testing.assert_array_equal(back.ownership_known, samples.ownership_known)
    buf = ReplayBuffer(enc, window_games=10)
    buf.add("s", back)
    rng = np.random.default_rng(3)
    batch = buf.sample(16, np.random.default_rng(3))
    picks = rng.integers(len(back), size=16)
    syms = rng.integers(6, size=16)
    assert batch.ownership.shape == (16, 2, enc.side, enc.side) and batch.ownership_known.all()
    for b in range(16):
        np.testing.assert_array_equal(batch.ownership[b],
                                      back.ownership_planes(int(picks[b]), int(syms[b]), enc))
    with np.load(tmp_path / "s.npz") as z:  # a file from before: no ownership arrays
        np.savez(tmp_path / "old.npz", **{k: z[k] for k in z.files
                                          if not k.startswith("ownership")})
    old = SampleSet.load(tmp_path / "old.npz")
    assert old.ownership.shape == (len(old), 0) and not old.ownership_known.any()
    assert old.ownership_planes(0, 0, enc) is None
    both = SampleSet.concatenate([old, back])
    assert both.ownership_known.tolist() == [False] * len(old) + [True] * len(back)
    np.testing.assert_array_equal(both.ownership[len(old):], back.ownership)
    batch = ReplayBuffer(enc, 10)
    batch.add("old", old)
    b = batch.sample(4, rng)
    assert not b.ownership_known.any() and not b.ownership.any()
    with np.load(tmp_path / "s.npz") as z:
        np.savez(tmp_path / "bad.npz", **{k: z[k] for k in z.files if k != "ownership_known"})
    with pytest.raises(ValueError, match=r"bad\.npz: inconsistent sample arrays \(ownership "
                                         r"and ownership_known come together; only ownership "
                                         r"is there\)"):
        SampleSet.load(tmp_path / "bad.npz")


@pytest.mark.parametrize(("change", "message"), [
    ({"ownership": lambda o, k: (o[:, :0], k)},
     r"inconsistent sample arrays \(ownership_known marks samples whose ownership has 0 bytes\)"),
    ({"ownership": lambda o, k: (o.astype(np.int16), k)},
     r"inconsistent sample arrays \(ownership must be uint8\[\d+, bytes\], got int16"),
    ({"ownership": lambda o, k: (o, k.astype(np.uint8))},
     r"inconsistent sample arrays \(ownership_known must be bool\[\d+\], got uint8"),
    ({"ownership": lambda o, k: (o[:, :3], k)},
     r"not samples of this encoding: ownership is \[\d+, 3\], the encoder needs \[\d+, 183\]"),
    ({"ownership": lambda o, k: (np.concatenate([o, o[:, :1]], 1), k)},
     r"not samples of this encoding: ownership is \[\d+, 184\], the encoder needs"),
    ({"ids": lambda i: i + 10**4}, r"not samples of this encoding: ids holds network ids "
                                   r"outside 0\.\.10205"),
    ({"globals": lambda g: g[:, :-1]}, r"not samples of this encoding: globals is \[\d+, 19\], "
                                       r"the encoder needs \[\d+, 20\]"),
])
def test_sample_files_that_do_not_fit_the_encoder_are_refused_by_name(
        tmp_path, change, message) -> None:
    """Garbage must never reach training: a damaged ownership array, one of another width, ids
    outside the network's range or another encoding's sizes are refused when the file is
    read for an encoder, naming the file and the array."""
    _, enc, samples, _, _ = selfplay(root="puct", games=2)
    samples.save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as z:
        arrays = {k: z[k] for k in z.files}
    for key, fn in change.items():
        if key == "ownership":
            arrays["ownership"], arrays["ownership_known"] = fn(arrays["ownership"],
                                                                arrays["ownership_known"])
        else:
            arrays[key] = fn(arrays[key])
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=r"bad\.npz: " + message):
        SampleSet.load(tmp_path / "bad.npz", enc)
    assert SampleSet.load(tmp_path / "s.npz", enc).problem_with(enc) is None


def test_sample_sets_with_ownership_of_two_widths_are_not_joined() -> None:
    _, enc, samples, _, _ = selfplay(root="puct", games=2)
    import dataclasses

    cut = dataclasses.replace(samples, ownership=np.asarray(samples.ownership)[:, :3])
    with pytest.raises(ValueError, match=r"ownership of \[3, 183\] bytes a sample cannot be "
                                         "joined"):
        SampleSet.concatenate([samples, cut])
    with pytest.raises(ValueError, match="ownership has 3 bytes a sample, the encoder needs 183"):
        cut.ownership_planes(0, 0, enc)


@pytest.mark.parametrize("opponent", ["greedy", "az:builtin,sims=8"])
def test_a_league_opponent_plays_its_seat_and_only_the_network_s_moves_are_samples(
        opponent) -> None:
    """``[selfplay] opponent = "greedy"`` (or the built-in network, a fixed one): in the games
    the game seed picks, the seat it picks is played by the opponent, seeded from the game
    seed: replaying the game, every move of that seat is the move the opponent of that seed
    chooses; every sample is a decision of another seat."""
    from taluva_ai.agents import make_agent

    game, _, samples, summaries, ended = selfplay(root="puct", games=6, opponent=opponent,
                                                    opponent_share=0.5)
    picked = {}
    for summary, _ in ended:
        pick = np.random.default_rng([summary.seed, 6])
        if pick.random() < 0.5:
            picked[summary.game] = (int(pick.integers(2)), int(pick.integers(2**31 - 1)))
    assert 0 < len(picked) < 6  # both kinds of game among these six
    assert {s.game: s.opponent_seat for s in summaries} == {
        s.game: picked.get(s.game, (-1, 0))[0] for s in summaries}
    checked = 0
    for summary, history in ended:
        if summary.game not in picked:
            continue
        seat, seed = picked[summary.game]
        agent = make_agent(opponent, seed=seed)
        state = game.new_initial_state(seed=summary.seed)
        for a in history:
            if state.current_player == seat:
                assert a == agent.act(state)
                checked += 1
            state.apply(a)
        mine = samples.player[samples.game == summary.game]
        assert len(mine) > 0 and (mine != seat).all()
    assert checked > 20
