"""The chance correction (experiments/luck_skill/aivat.py): zero mean over the card drawn,
lower variance on recorded deals, clear errors on records it cannot replay."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.luck_skill import aivat
from experiments.luck_skill import estimators as est
from experiments.luck_skill.analysis import PRIMARY, analyse
from experiments.luck_skill.runner import LuckSkillConfig, _key, _variant, run_job


def _row(variant: str, deal: int, a: str = "rules", b: str = "greedy", options=None) -> dict:
    return run_job((variant, options or {}, 0, ("pair", a, b, deal)))


@pytest.mark.parametrize("variant,value", [("mountain", "hand"), ("mountain", "rollouts=2"),
                                           ("gin", "hand"), ("gin", "rollouts=2")])
def test_first_draw_correction_averages_to_zero_over_the_card_drawn(variant, value):
    """Exact enumeration of one chance event: the first stock draw replayed with every card
    of the stock on top; the corrections' mean is 0 whatever the (noisy) value function."""
    v, _ = _variant(variant, {}, False)
    rec = aivat.hand_records(_row(variant, 5))[0]
    values = aivat.first_draw_corrections(aivat.ChanceCorrector(v, value), rec)
    assert len(values) > 10 and np.abs(values).max() > 1       # not trivially zero
    assert abs(values.mean()) < 1e-9


@pytest.mark.parametrize("variant,seats", [("german", 4), ("crazy", 4), ("robbers", 4),
                                           ("robbers", 2), ("german", 2)])
def test_n_seat_first_draw_correction_averages_to_zero_over_the_card_drawn(variant, seats):
    """The same enumeration at German's, Crazy's and Robber's tables: every card of the
    stock in turn at the first stock draw; the mean of the drawer's correction is 0, and so
    is every seat's (each is a fixed multiple of it)."""
    options = {"num_players": seats}
    v, _ = _variant(variant, options, False)
    rec = aivat.hand_records(_row(variant, 7, options=options))[1]
    values = aivat.first_draw_corrections(aivat.ChanceCorrector(v, "hand=1"), rec)
    assert len(values) > 20 and np.abs(values).max() > 1
    assert abs(values.mean()) < 1e-9
    per_seat = np.array([aivat.seat_corrections(1, d, seats) for d in values])
    assert np.abs(per_seat.mean(axis=0)).max() < 1e-9


@pytest.mark.parametrize("variant", ["german", "crazy", "robbers"])
def test_n_seat_corrections_are_the_results_of_corrected_points(variant):
    """A draw corrects the drawer's points; the row's per-seat corrections are exactly the
    change of the analysis's results (a seat's points minus the mean of the others',
    ``analysis.relative``) when each hand's points get the draws' corrections, so they sum
    to 0 over the seats as the results do."""
    from experiments.luck_skill.analysis import relative

    options = {"num_players": 4}
    v, _ = _variant(variant, options, False)
    row = _row(variant, 3, options=options)
    corrector = aivat.ChanceCorrector(v, "hand=1")
    chance = aivat.correct_row(row, v, "hand=1")["chance"]
    for hand, rec, c in zip(row["hands"], aivat.hand_records(row), chance):
        points = np.array(hand["points"], dtype=np.float64)
        fixed = points.copy()
        draws = corrector.draw_corrections(rec, seats=True)
        assert draws and {seat for seat, _ in draws} <= set(range(4))
        for seat, delta in draws:
            fixed[seat] += delta
        assert np.allclose(relative(fixed) - relative(points), c, atol=1e-9)
        assert abs(sum(c)) < 1e-9
    assert aivat.seat_corrections(0, 3.0, 2).tolist() == [3.0, -3.0]   # two seats: +c, -c


def test_a_german_stock_rebuilt_from_the_discard_pile_is_replayed_and_its_draws_corrected():
    """GE-8: deal 800189 at two seats draws past its first stock (81 cards); the rebuild is
    no term of its own, and every draw, from either stock, gets its correction."""
    options = {"num_players": 2}
    v, _ = _variant("german", options, False)
    rec = aivat.hand_records(_row("german", 800189, options=options))[0]
    draws = sum(1 for a in rec.actions if a == v.layout.draw)
    assert draws > 81
    values = aivat.ChanceCorrector(v).draw_corrections(rec)
    assert len(values) == draws and np.isfinite(values).all()
    assert np.abs(values[81:]).max() > 0


def test_correction_is_reproducible_and_zero_sum_over_the_seats():
    v, _ = _variant("gin", {}, False)
    row = _row("gin", 2)
    first = aivat.correct_row(row, v, "rollouts=2")
    assert first["chance"] == aivat.correct_row(row, v, "rollouts=2")["chance"]
    assert all(c0 == -c1 for c0, c1 in first["chance"])


@pytest.mark.slow
def test_correction_lowers_the_variance_of_duplicate_margins():
    """Over 300 recorded Mountain deals of rules vs greedy, the corrected duplicate margins
    vary less than the raw ones (measured factor 1.22 [1.15, 1.28] over 600 other deals,
    docs/luck_skill.md), and the primary statistic is left as it was."""
    rows = [_row("mountain", 1000 + k) for k in range(300)]
    cfg = LuckSkillConfig(ladder=["greedy", "rules"], aivat="hand")
    v, _ = _variant("mountain", {}, False)
    corrections = {_key(r): aivat.correct_row(r, v, cfg.aivat) for r in rows}
    st = analyse("mountain", aivat.attach(rows, corrections), cfg.ladder, n_boot=50)
    assert st.point["aivat_factor"] > 1.05
    assert st.lo["aivat_factor"] > 1.0
    assert np.isfinite(st.point[f"{PRIMARY}_aivat"])
    assert st.point[PRIMARY] != st.point[f"{PRIMARY}_aivat"]
    raw = analyse("mountain", rows, cfg.ladder, n_boot=0)
    assert raw.point[PRIMARY] == st.point[PRIMARY]
    assert "aivat_factor" not in raw.point


def test_variance_reduction_factor_pools_centred_groups():
    raw = [np.array([10.0, 12.0, 8.0, 10.0]), np.array([-5.0, -1.0, -3.0, -3.0])]
    corrected = [g - (g - g.mean()) / 2 for g in raw]             # halves every deviation
    assert est.variance_reduction_factor(raw, corrected) == pytest.approx(4.0)
    assert np.isnan(est.variance_reduction_factor(raw, [g * 0 + 1 for g in raw]))


def test_rows_without_actions_or_with_a_bad_action_are_refused_clearly():
    v, _ = _variant("gin", {}, False)
    row = _row("gin", 3)
    old = {**row, "hands": [{k: x for k, x in h.items() if k != "actions"} for h in row["hands"]]}
    with pytest.raises(aivat.ReplayError, match="cannot be replayed"):
        aivat.correct_row(old, v)
    corrector = aivat.ChanceCorrector(v)
    rec = aivat.hand_records(row)[0]
    bad = aivat.HandRecord(rec.deal, rec.dealer, rec.actions[:3] + (10**6,) + rec.actions[4:])
    with pytest.raises(aivat.ReplayError, match="action 3"):
        corrector.draw_corrections(bad)
    with pytest.raises(aivat.ReplayError, match="not over"):
        corrector.draw_corrections(aivat.HandRecord(rec.deal, rec.dealer, rec.actions[:-1]))
    with pytest.raises(aivat.ReplayError, match="ended before"):
        corrector.draw_corrections(aivat.HandRecord(rec.deal, rec.dealer, rec.actions + (0,)))


def test_every_variant_is_supported_and_rollouts_need_two_seats_with_a_playout_policy():
    from mountain_rummy_env.registry import make_variant

    for name, options in [("mountain", {}), ("gin", {}), ("german", {}), ("crazy", {}),
                          ("robbers", {}), ("german", {"num_players": 2}),
                          ("robbers", {"num_players": 2})]:
        assert aivat.supported(make_variant(name, **options)) == "", name
    assert "two seats" in aivat.supported(make_variant("german"), "rollouts=2")
    assert aivat.supported(make_variant("german", num_players=2), "rollouts=2") == ""
    with pytest.raises(NotImplementedError, match="two seats"):
        aivat.ChanceCorrector(make_variant("german"), "rollouts=2")
    with pytest.raises(NotImplementedError, match="playout policy"):
        aivat.ChanceCorrector(make_variant("robbers", num_players=2), "rollouts=2")
    assert aivat.parse_value("hand=0.5") == ("hand", 0.5)
    assert aivat.parse_value("hand") == ("hand", None)
    assert aivat.HandValue(make_variant("gin")).scale == 0.5
    assert aivat.HandValue(make_variant("german")).scale == 1.9
    assert aivat.HandValue(make_variant("german", num_players=2)).scale == 0.9
    assert aivat.HandValue(make_variant("robbers")).scale == 0.0       # calibrated off
    for bad in ("rollouts=0", "rollouts", "rollouts=1.5", "hand=0", "hand=x", "deadwood"):
        with pytest.raises(ValueError, match="unknown value function"):
            aivat.ChanceCorrector(make_variant("gin"), bad)


def test_study_with_the_correction_reports_it_as_a_secondary_row(tmp_path):
    from experiments.luck_skill import run_study

    cfg = LuckSkillConfig(variants=["mountain"], ladder=["random", "greedy", "rules"], deals=4,
                          self_agents=[], games=0, workers=1, aivat="hand")
    res = run_study(cfg, tmp_path / "runs", report=tmp_path / "r.md", progress=False, n_boot=10,
                    add_ppo=False, log=lambda *a: None)
    st = res["stats"]["mountain"]
    assert np.isfinite(st.point["aivat_factor"]) and f"{PRIMARY}_aivat" in st.point
    assert "5. chance correction (secondary)" in (tmp_path / "r.md").read_text()
    stored = (tmp_path / "runs" / "mountain" / "aivat.jsonl").read_text().splitlines()
    assert len(stored) == 3 * 4            # every ladder deal corrected once
    run_study(cfg, tmp_path / "runs", progress=False, n_boot=10, add_ppo=False, play=False,
              log=lambda *a: None)
    assert len((tmp_path / "runs" / "mountain" / "aivat.jsonl").read_text().splitlines()) == 12


def test_cli_takes_a_value_function_and_refuses_a_bad_one(capsys):
    from experiments.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["luck-skill", "--aivat", "hand=0.5"]).aivat == "hand=0.5"
    assert parser.parse_args(["luck-skill"]).aivat is None
    with pytest.raises(SystemExit):
        parser.parse_args(["luck-skill", "--aivat", "rollouts=0"])
    assert "unknown value function" in capsys.readouterr().err
