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


def test_tournament_help_describes_each_schedule(capsys):
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "round-robin every agent plays every other agent" in text
    assert "ladder each agent plays only the next one in the agent list" in text
    assert "manifest.json" in text


def test_tournament_runs_in_its_own_folder_and_resumes_there(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["tournament", "--agents", "random", "greedy", "--deals", "1", "--workers", "1",
            "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    (folder,) = (tmp_path / "runs" / "tournament").iterdir()
    assert folder.name.startswith("mountain-round-robin-")
    assert out.startswith(f"tournament into runs/tournament/{folder.name} ")
    assert "# Tournament: mountain, round-robin" in out and "- seed: 0 " in out
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sessions"][0]["command"].startswith(
        "mountain-rummy tournament --variant mountain --schedule round-robin --agents random "
        f"greedy --deals 1 --search-deals 8 --seed 0 --workers 1 --out runs/tournament/{folder.name}")
    results = (folder / "results.jsonl").read_text()
    assert main(argv + ["--deals", "2"]) == 0  # resumes: plays deal 1 only
    assert (folder / "results.jsonl").read_text().startswith(results)
    assert len((folder / "results.jsonl").read_text().splitlines()) == 2
    assert main(argv + ["--seed", "3"]) == 0  # other settings, another folder
    assert len(list((tmp_path / "runs" / "tournament").iterdir())) == 2


def test_tournament_refuses_another_runs_folder_before_play(tmp_path, capsys):
    base = ["tournament", "--agents", "random", "greedy", "--deals", "1", "--workers", "1",
            "--no-progress", "--out", str(tmp_path)]
    assert main(base) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(base + ["--seed", "9"])
    assert str(exc.value).startswith(f"error: {tmp_path} holds another run (seed 0 there, 9 now)")
    assert capsys.readouterr().out == ""  # nothing played, nothing printed
    with pytest.raises(SystemExit, match="error: .* holds another run"):
        main(base + ["--variant", "gin", "--no-resume"])
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 1


def test_tournament_out_naming_a_file_is_an_error_before_play(tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    with pytest.raises(SystemExit) as exc:
        main(["tournament", "--agents", "random", "greedy", "--deals", "1", "--workers", "1",
              "--no-progress", "--out", str(target)])
    assert str(exc.value) == f"error: {target} is a file; the output must be a folder"
    assert capsys.readouterr().out == "" and target.read_text() == "keep me"


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
