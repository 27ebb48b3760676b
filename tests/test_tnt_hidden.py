"""Hidden information (THURN-UND-TAXIS.md §9): observations hold only what a seat knows;
``resample`` deals the unseen cards again, consistently with the observation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.games.thurn_und_taxis import ThurnUndTaxisState
from tests.tnt_helpers import check_invariants, counts, play, scenario


def _positions(n: int, seed: int, every: int = 7) -> list[ThurnUndTaxisState]:
    """Positions along a seeded random game (every ``every``-th ply, chance nodes included)."""
    s = make_game("thurn_und_taxis", num_players=n).new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while not s.is_terminal() and len(out) < 40:
        if s.ply % every == 0:
            out.append(s.clone())
        if s.current_player < 0:
            s.draw()
        else:
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    assert a.keys() == b.keys()
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def test_observation_shows_the_own_hand_and_only_counts_of_the_others() -> None:
    s = scenario(3, step="draw", hands={0: ["ulm", "ulm"], 1: ["lodz", "linz", "basel"],
                                        2: ["passau"]},
                 known={1: ["linz"]}, display=["kempten"])
    obs = s.observation(0)
    assert obs["hand"].tolist() == counts(["ulm", "ulm"]).tolist()
    assert obs["hand_sizes"].tolist() == [2, 3, 1]
    assert obs["known"][1].tolist() == counts(["linz"]).tolist()
    assert obs["unknown"].tolist() == [2 - 0, 3 - 1, 1]
    assert obs["supply_size"] == 66 - 6 - 1
    flat = np.concatenate([np.asarray(v, dtype=np.int64).ravel() for k, v in obs.items()
                           if k not in ("hand",)])
    # nothing in the observation but the seat's own hand locates lodz or basel in seat 1's hand
    assert obs["known"][1][[9, 1]].tolist() == [0, 0]
    assert flat.size > 0


def test_known_cards_follow_face_up_takes_and_leave_with_plays() -> None:
    s = scenario(step="draw", hands={0: ["ulm"]}, display=["stuttgart", "kempten"])
    play(s, "take:stuttgart", "deal:lodz")
    assert s.observation(1)["known"][0].tolist() == counts(["stuttgart"]).tolist()
    assert s.observation(1)["unknown"][0] == 1  # the ulm held before
    s.apply("start:stuttgart")
    assert s.observation(1)["known"][0].tolist() == [0] * 22
    s.apply("carrier:ulm@stuttgart")  # ulm was unknown: the unknown count drops
    assert s.observation(1)["unknown"][0] == 0 and s.observation(1)["hand_sizes"][0] == 0
    s = scenario(step="draw", hands={0: ["ulm"]}, display=["stuttgart", "kempten"])
    play(s, "take:supply", "deal:lodz", "postmaster:kempten", "deal:linz")
    assert s.observation(1)["known"][0].tolist() == counts(["kempten"]).tolist()
    assert s.observation(1)["unknown"][0] == 2
    assert s.observation(0)["hand"].tolist() == counts(["ulm", "lodz", "kempten"]).tolist()


@pytest.mark.parametrize(("n", "seed"), [(2, 1), (3, 2), (4, 3)])
def test_resampled_states_agree_with_the_observation_and_differ_in_the_hidden_parts(
    n: int, seed: int
) -> None:
    differ = hidden_slots = 0
    for s in _positions(n, seed):
        for p in range(n):
            obs = s.observation(p)
            for k in range(3):
                r = s.resample(p, np.random.default_rng(k))
                check_invariants(r)
                assert _same(r.observation(p), obs)  # the same information set
                assert np.array_equal(r.legal_actions(), s.legal_actions()) or \
                    s.current_player not in (p,)
                hidden = [r.cards[0]] + [r.cards[3 + q] for q in range(n) if q != p]
                real = [s.cards[0]] + [s.cards[3 + q] for q in range(n) if q != p]
                if int(obs["unknown"].sum()) > int(obs["unknown"][p]):
                    hidden_slots += 1
                    differ += any(not np.array_equal(a, b) for a, b in zip(hidden, real,
                                                                            strict=True))
    assert hidden_slots > 100 and differ >= 0.9 * hidden_slots


def test_resample_depends_only_on_the_information_set_and_the_rng() -> None:
    s = _positions(2, 11)[12]
    a = s.resample(0, np.random.default_rng(5))
    b = a.resample(0, np.random.default_rng(5))  # a different state of the same info set
    assert a.to_position_string() == b.to_position_string()
    assert a.resample(0, 9).to_position_string() == s.resample(0, 9).to_position_string()


def test_resample_keeps_the_observers_hand_and_the_others_known_cards() -> None:
    s = scenario(step="play", hands={0: ["ulm", "kempten"], 1: ["lodz", "linz", "basel"]},
                 known={1: ["linz"]})
    for k in range(20):
        r = s.resample(0, k)
        assert r.hand(0) == {"kempten": 1, "ulm": 1}
        assert r.hand(1).get("linz", 0) >= 1 and sum(r.hand(1).values()) == 3
        assert r.observation(0)["supply_size"] == s.observation(0)["supply_size"]
    seen = {tuple(sorted(s.resample(0, k).hand(1).items())) for k in range(20)}
    assert len(seen) > 10


def test_resample_refuses_a_bad_seat() -> None:
    s = scenario()
    with pytest.raises(ValueError, match="seat"):
        s.resample(2)
    with pytest.raises(ValueError, match="seat"):
        s.observation(-1)
