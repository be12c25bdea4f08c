"""The ``mountain-rummy`` command line."""

from __future__ import annotations

import io
import json
import re

import pytest

from experiments.cli import main


@pytest.mark.parametrize("argv", [["--help"], ["tournament", "--help"], ["play", "--help"],
                                  ["replay", "--help"], ["agents", "--help"],
                                  ["selfplay-ppo", "--help"]])
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
    (["play", "--seat", "x"], "expected a seat number or 'none'"),
    (["play", "--seat", "-1"], "expected a seat number (0, 1, ...) or 'none'"),
    (["play", "--players", "1"], "seat count of 2 or more"),
    (["selfplay-ppo", "--num-envs", "0"], "mountain-rummy selfplay-ppo: error: argument --num-envs"),
    (["selfplay-ppo", "--opponents", "rules:1"], "no batched form"),
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
        main(["play", "--agents", "nosuch"])


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
    assert main(["play", "--seat", "none", "--agents", "greedy", "rules", "--seed", "4",
                 "--record", str(rec)]) == 0
    log = capsys.readouterr().out
    assert "Hand ends by" in log and json.loads(rec.read_text())["players"] == ["greedy", "rules"]
    assert main(["replay", str(rec)]) == 0
    assert "Hand ends by" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match="error"):
        main(["replay", str(bad)])


# -- play with a human seat: its view, input that ends, the record --------------------------

def play_human(monkeypatch, stdin, *extra):
    """``play --agents greedy --seed 7`` (you at seat 0) with ``stdin`` as the keyboard."""
    monkeypatch.setattr("sys.stdin", stdin)
    return main(["play", "--agents", "greedy", "--seed", "7", *extra])


def test_play_shows_the_human_only_its_own_cards(monkeypatch, capsys, tmp_path):
    rec = tmp_path / "hand.json"
    assert play_human(monkeypatch, io.StringIO("0\n" * 500), "--record", str(rec)) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("; P1: 13 cards. Up-card JD.")
    hand = out[:out.index("Hand ends by")]
    assert "P1: draw stock\n" in hand and "P1: draw stock (" not in hand
    assert "  Hands: P0 " in out                                # the end-of-hand reveal
    assert main(["replay", str(rec)]) == 0                      # the record holds every card
    full = capsys.readouterr().out
    assert "P1: draw stock (" in full and "P1: 13 cards" not in full.splitlines()[0]


def test_play_reveal_prints_every_card(monkeypatch, capsys):
    assert play_human(monkeypatch, io.StringIO("0\n" * 500), "--reveal") == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "P1: 13 cards" not in first and first.count(" ") > 26


def one_error_line(exc) -> str:
    message = str(exc.value.code)
    assert message.startswith("error: ") and "\n" not in message
    return message


def test_input_ending_saves_the_unfinished_record(monkeypatch, capsys, tmp_path):
    rec = tmp_path / "cut.json"
    with pytest.raises(SystemExit) as exc:
        play_human(monkeypatch, io.StringIO("0\n0\n"), "--record", str(rec))
    assert one_error_line(exc).endswith(f"input ended during play; unfinished record saved to {rec}")
    data = json.loads(rec.read_text())
    assert data["unfinished"] is True and data["actions"]
    assert f"Hand 1 is unfinished after {len(data['actions'])} actions." in capsys.readouterr().out
    assert main(["replay", str(rec)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"Hand 1 is unfinished after {len(data['actions'])} actions."
    with pytest.raises(SystemExit) as exc:                      # nothing to keep: says so
        play_human(monkeypatch, io.StringIO(""))
    assert one_error_line(exc).endswith("no record kept (no --record)")


def test_interrupt_saves_the_unfinished_record(monkeypatch, capsys, tmp_path):
    class Keys:
        lines = iter(["0\n", "0\n"])

        def readline(self):
            line = next(self.lines, None)
            if line is None:
                raise KeyboardInterrupt
            return line

    rec = tmp_path / "stopped.json"
    assert play_human(monkeypatch, Keys(), "--record", str(rec)) == 130
    assert f"unfinished record saved to {rec}" in capsys.readouterr().err
    assert json.loads(rec.read_text())["unfinished"] is True


def test_replaying_a_cut_short_record_says_so(tmp_path, capsys):
    rec = tmp_path / "hand.json"
    assert main(["play", "--seat", "none", "--agents", "greedy", "--seed", "3", "--record",
                 str(rec)]) == 0
    data = json.loads(rec.read_text())
    data["actions"] = data["actions"][:5]
    rec.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(rec)])
    assert one_error_line(exc) == ("error: the record is cut short: hand 1 is unfinished after 5 "
                                   "actions and not marked unfinished")


# -- play at N seats: a human at any seat, the others' view, errors --------------------------

@pytest.mark.parametrize("argv, seat, specs, dealt", [
    (["--variant", "german", "--seat", "2", "--agents", "greedy", "rules", "random"], 2,
     ["greedy", "rules", "human", "random"], 13),
    (["--variant", "german", "--players", "3", "--seat", "1", "--agents", "greedy"], 1,
     ["greedy", "human", "greedy"], 13),
    (["--variant", "gin", "--seat", "1", "--agents", "rules"], 1, ["rules", "human"], 10),
], ids=["german4", "german3", "gin"])
def test_play_seats_you_at_any_seat_against_the_others(argv, seat, specs, dealt, monkeypatch,
                                                         capsys, tmp_path):
    rec = tmp_path / "game.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("0\n" * 3000))
    assert main(["play", *argv, "--seed", "5", "--record", str(rec)]) == 0
    out = capsys.readouterr().out
    seats = len(specs)
    others = [(seat + k) % seats for k in range(1, seats)]
    deal = out.splitlines()[0]                      # your cards, the others' hand sizes
    assert all(f"P{q}: {dealt} cards" in deal for q in others)
    assert re.search(rf"P{seat}: (\w\w ){{{dealt - 1}}}\w\w[;.]", deal)
    # each prompt lists the other seats, from the next one on, with their hand sizes
    prompts = re.findall(r"^--- P(\d) \(you\).*?^your hand:", out, re.M | re.S)
    assert prompts and set(prompts) == {str(seat)}
    first = out[out.index("--- P"):out.index("your hand:")]
    assert [int(q) for q in re.findall(r"^P(\d): \d+ card\(s\)", first, re.M)] == others
    assert json.loads(rec.read_text())["players"] == specs
    assert main(["replay", str(rec)]) == 0
    replayed = capsys.readouterr().out
    assert out.splitlines()[-2] == replayed.splitlines()[-1]     # the same end ...
    draw = f"P{others[0]}: draw stock ("
    assert draw in replayed and draw not in out                   # ... and every card


def test_hot_seat_at_german_shows_only_public_cards(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("0\n" * 3000))
    assert main(["play", "--variant", "german", "--players", "3", "--agents", "human", "rules",
                 "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "P0: 13 cards; P1: 13 cards; P2: 13 cards." in out.splitlines()[0]
    assert {"--- P0 (you)", "--- P1 (you)"} <= set(re.findall(r"^--- P\d \(you\)", out, re.M))


@pytest.mark.parametrize("argv, message", [
    (["--seat", "2"], "error: --seat 2 is not a seat of mountain with 2 seats (0..1)"),
    (["--variant", "german", "--seat", "4"],
     "error: --seat 4 is not a seat of german with 4 seats (0..3); --players sets the seat count"),
    (["--agents", "greedy", "rules"],
     "error: mountain with 2 seats, you at seat 0, needs one agent in --agents (for seat 1), "
     "got 2"),
    (["--variant", "german", "--agents", "rules", "greedy"],
     "error: german with 4 seats, you at seat 0, needs 3 agents in --agents (seats 1, 2, 3 in "
     "order) or one for all of them, got 2; --players sets the seat count"),
    (["--variant", "german", "--players", "3", "--seat", "2", "--agents", "a", "b", "c"],
     "needs 2 agents in --agents (seats 0, 1 in order)"),
    (["--seat", "none", "--agents", "greedy", "rules", "random"],
     "error: mountain with 2 seats needs 2 agents in --agents (seats 0, 1 in order) or one for "
     "all of them, got 3"),
    (["--variant", "gin", "--players", "3"], "error: bad --players 3: gin is played by 2 seats"),
    (["--variant", "german", "--players", "7"], "num_players must be in 2..6"),
    (["--variant", "german", "--target", "300"], "error: --target: german has no target score"),
    (["--variant", "german", "--agents", "nosuch"], "unknown agent 'nosuch'"),
])
def test_bad_seats_and_agents_are_one_error_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["play", *argv, "--seed", "1"])
    assert message in one_error_line(exc)
    assert capsys.readouterr().out == ""                       # nothing was played


@pytest.mark.parametrize("where", ["missing/hand.json", "folder", "file.txt/hand.json"])
def test_record_path_is_checked_before_play(where, tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("")
    with pytest.raises(SystemExit) as exc:
        main(["play", "--seat", "none", "--agents", "greedy", "--record", str(tmp_path / where)])
    assert one_error_line(exc).startswith(f"error: cannot write --record {tmp_path / where}: ")
    assert "Hand 1" not in capsys.readouterr().out               # nothing was played
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "folder"]


@pytest.mark.parametrize("argv", [
    ["play", "--variant", "gin", "--agents", "ppo:policy=mountain"],
    ["tournament", "--variant", "gin", "--agents", "ppo:policy=mountain", "greedy"],
])
def test_a_mountain_policy_on_gin_is_an_error_line(argv, tmp_path):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as exc:
        main(argv + (["--out", str(tmp_path)] if argv[0] == "tournament" else []))
    assert "plays 'mountain', not 'gin'" in one_error_line(exc)


def test_a_policy_on_other_options_is_an_error_line(tmp_path):
    pytest.importorskip("torch")
    rec = tmp_path / "hand.json"
    with pytest.raises(SystemExit) as exc:
        main(["play", "--seat", "none", "--agents", "ppo:policy=mountain", "greedy", "--seed", "1",
              "--options", '{"num_jokers": 1}', "--record", str(rec)])
    assert "trained for variant 'mountain' (observation size 1809" in one_error_line(exc)


def test_agents_describes_each_strategy_of_a_name(capsys):
    """``greedy``, ``rules`` and ``search`` play Mountain, Gin and German each with a class of
    its own: the list says what each does in each variant."""
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    entries = dict(re.findall(r"^(\w+) +(.*?)(?=^\w|\n\n)", out, re.M | re.S))
    for name in ("greedy", "rules", "search"):
        lines = " ".join(entries[name].split())
        said = re.findall(r"(?:^|\s)(mountain|gin|german): ", lines)
        assert said == ["mountain", "gin", "german"], (name, lines)
    assert "Base Camp or knock" in entries["greedy"] and "joins a meld" in entries["greedy"]


def test_agents_lists_the_shipped_policies(capsys):
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    assert "shipped policies (spec ppo:policy=NAME, or netsearch:policy=NAME" in out
    assert re.search(r"^  mountain +plays mountain: 1809-256-256-1845 .*PPO steps$", out, re.M)
    assert re.search(r"^  gin_expert +plays gin: .* expert iteration, 1200 hands$", out, re.M)
    assert re.search(r"^  german_solver +plays german: 6856-512-512-4279 .*PPO steps$", out, re.M)
    assert re.search(r"^  mountain_move +plays mountain: 3926-512-512-1845 .*PPO steps$", out, re.M)
    assert re.search(r"^  mountain_outs +plays mountain: 3926-512-512-1845 .*PPO steps$", out, re.M)
    assert "shipped belief networks (spec netsearch:belief=NAME" in out
    assert re.search(r"^  mountain_belief mountain: 2025-512-512-54 ReLU, 120000 hands of rules$",
                     out, re.M)
