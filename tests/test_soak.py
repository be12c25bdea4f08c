"""The soak command (``python -m benchmarks.soak``) on a handful of games of every variant."""

from __future__ import annotations

from benchmarks.soak import main
from mountain_rummy_env.registry import VARIANTS


def test_soak_plays_every_variant_at_every_table_size(capsys):
    assert main(["--games", "12", "--batch", "4", "--check-every", "1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    labels = [row[0] if len(row) == 5 else f"{row[0]} {row[1]}" for row in rows]
    expected = [name if len(info.num_players) == 1 else f"{name} {n}p"
                for name, info in VARIANTS.items() for n in info.num_players]
    assert labels == expected
    assert all(int(row[-4].replace(",", "")) >= 1 for row in rows)     # games finished
