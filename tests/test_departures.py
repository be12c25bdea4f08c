"""experiments/departures.py: where a Mountain player departs from ``rules``."""

from __future__ import annotations

import numpy as np
import pytest

from agents.common import FAMILIES
from experiments import departures


def test_rules_agrees_with_itself_everywhere():
    asked, agreed, gaps = departures.measure("rules", 2, 5)
    assert sum(asked.values()) > 20 and asked == agreed and gaps == []
    assert {fam for _, fam in asked} <= set(FAMILIES)


def test_greedys_discards_are_split_into_the_parts_of_rules_value():
    asked, agreed, gaps = departures.measure("greedy", 4, 5)
    assert sum(agreed.values()) < sum(asked.values()) and gaps
    g = np.array(gaps)
    assert np.allclose(g[:, 0], g[:, 1:].sum(axis=1))    # the parts add up to the total
    assert (g[:, 0] >= -1e-9).all()                      # rules' discard is its own best
    text = departures.report(asked, agreed, gaps)
    assert "agreement with rules" in text and "| outs x weight |" in text


def test_bad_arguments_are_one_line_errors(capsys):
    with pytest.raises(SystemExit) as exit_:
        departures.main(["--hands", "0"])
    assert exit_.value.code == 2 and "--hands must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        departures.main(["--player", "nosuchagent", "--hands", "1"])
    assert exit_.value.code == 2 and "nosuchagent" in capsys.readouterr().err
