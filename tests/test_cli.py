"""The ``mountain-rummy`` command line."""

from __future__ import annotations

import json

import pytest

from experiments.cli import main


@pytest.mark.parametrize("argv", [["--help"], ["tournament", "--help"], ["play", "--help"],
                                  ["replay", "--help"], ["agents", "--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["tournament", "--deals", "0"], "positive integer"),
    (["tournament", "--workers", "x"], "positive integer"),
    (["tournament", "--options", "[1]"], "JSON object"),
    ([], "required"),
    (["bogus"], "invalid choice"),
    (["tournament", "--variant", "canasta"], "invalid choice"),
    (["tournament", "--schedule", "swiss"], "invalid choice"),
])
def test_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_unknown_agent_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="unknown agent 'nosuch'"):
        main(["tournament", "--agents", "random", "nosuch", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="unknown agent"):
        main(["play", "--p0", "nosuch", "--p1", "greedy"])


def test_tournament_prints_the_table(tmp_path, capsys):
    assert main(["tournament", "--agents", "random", "greedy", "--deals", "2", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| random | greedy | 2 |" in out and "Bradley-Terry" in out


def test_gin_ladder_tournament(tmp_path, capsys):
    assert main(["tournament", "--variant", "gin", "--schedule", "ladder", "--agents", "random",
                 "greedy", "rules", "--deals", "2", "--workers", "1", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| random | greedy | 2 |" in out and "| greedy | rules | 2 |" in out
    assert "| random | rules |" not in out
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert {r["variant"].split(":")[0] for r in rows} == {"gin"}


def test_play_record_and_replay(tmp_path, capsys):
    rec = tmp_path / "hand.json"
    assert main(["play", "--p0", "greedy", "--p1", "rules", "--seed", "4",
                 "--record", str(rec)]) == 0
    log = capsys.readouterr().out
    assert "Hand ends by" in log and json.loads(rec.read_text())["players"] == ["greedy", "rules"]
    assert main(["replay", str(rec)]) == 0
    assert "Hand ends by" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match="error"):
        main(["replay", str(bad)])
