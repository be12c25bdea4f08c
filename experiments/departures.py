"""Where a Mountain Rummy player departs from ``rules``: the diagnostic behind issue #23's
Mountain network (docs/training.md, "Where the Mountain network departs from rules").

``rules`` plays ``greedy`` (the seats swap every hand); at each of ``rules``' decisions with
more than one legal move the player under study is asked the same question on the same
view. The table gives, per phase and family of ``rules``' move (draw, take, meld, layoff,
discard, knock ...), how often the two agree; for each discard the other player chose
instead, ``rules``' own value of the two discards (:meth:`agents.rules.RulesAgent.discard_values`)
split into its parts: the points of the hand kept, twice the expected gain of the next draw
(``outs``) and the feeding penalty::

    python -m experiments.departures --player ppo:policy=mountain_solver --hands 300

The player is asked, never obeyed, so it sees the positions ``rules`` reaches; it is reset at
every hand and must be stateless or track the hand from its views alone.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from agents import make_agent
from agents.common import legal_by_family
from agents.rules import RulesAgent
from mountain_rummy_env import Game
from mountain_rummy_env.core.state import EVENT_NONE, PHASE_NAMES
from mountain_rummy_env.game import player_view
from mountain_rummy_env.registry import make_variant


def discard_gap(rules: RulesAgent, view, by, ours: int, theirs: int) -> np.ndarray:
    """``rules``' value of discarding ``ours`` less that of ``theirs``, as (total, points
    kept, outs x weight, -feeding): the same agent's sums with the outs and the feeding
    switched off in turn, each computed once for every legal discard."""
    kept = RulesAgent(outs_weight=0.0, feed_weight=0.0)
    no_feed = RulesAgent(outs_weight=rules.outs_weight, feed_weight=0.0)
    for other in (kept, no_feed):
        other.opp_discards, other.opp_taken = rules.opp_discards, rules.opp_taken
    total, points, with_outs = (agent.discard_values(view, by) for agent in (rules, kept, no_feed))

    def parts(a):
        return np.array([total[a], points[a], with_outs[a] - points[a], total[a] - with_outs[a]])

    return parts(ours) - parts(theirs)


def measure(player: str, hands: int, seed: int) -> tuple[Counter, Counter, list]:
    """Agreement counts per (phase, family of rules' move) and the discard value gaps
    (rules' discard less the player's, by part) over ``hands`` hands."""
    variant = make_variant("mountain")
    game = Game(variant, 1)
    other = make_agent(player, seed=0, variant="mountain")
    asked, agreed, gaps = Counter(), Counter(), []
    for hand in range(hands):
        rules, greedy = RulesAgent(seed=1), make_agent("greedy", seed=2, variant="mountain")
        seats = [rules, greedy] if hand % 2 == 0 else [greedy, rules]
        game.reset(seed=seed + hand)
        for agent in (rules, greedy, other):
            agent.reset()
        while True:
            p = game.current_player(0)
            view, mask = player_view(game, 0, p), game.masks[0]
            a = int(seats[p].act(view, mask))
            if seats[p] is rules and mask.sum() > 1:
                b = int(other.act(view, mask))
                key = (PHASE_NAMES[int(game.states[0]["phase"])], variant.action_family(a))
                asked[key] += 1
                agreed[key] += a == b
                if a != b and variant.action_family(a) == variant.action_family(b) == "discard":
                    gaps.append(discard_gap(rules, view, legal_by_family(variant, mask), a, b))
            if game.step_one(0, a) != EVENT_NONE:
                break
    return asked, agreed, gaps


def report(asked: Counter, agreed: Counter, gaps: list) -> str:
    total = sum(asked.values())
    lines = [f"agreement with rules: {sum(agreed.values()) / max(total, 1):.3f} of {total} decisions",
             "", "| phase | rules' move | decisions | agreement | departures |", "|---|---|---:|---:|---:|"]
    for (phase, fam), n in asked.most_common():
        lines.append(f"| {phase} | {fam} | {n} | {agreed[phase, fam] / n:.3f} | {n - agreed[phase, fam]} |")
    if gaps:
        g = np.array(gaps)
        lines += ["", f"discards chosen otherwise: {len(g)}; rules' value of its discard less the other's",
                  "| part | mean | median | share > +0.5 | share < -0.5 |", "|---|---:|---:|---:|---:|"]
        for j, part in enumerate(("total", "points kept", "outs x weight", "-feeding")):
            col = g[:, j]
            lines.append(f"| {part} | {col.mean():+.2f} | {np.median(col):+.2f} | "
                         f"{np.mean(col > 0.5):.2f} | {np.mean(col < -0.5):.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.departures",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--player", default="ppo:policy=mountain_solver",
                    help="agent spec asked at rules' decisions (default: %(default)s)")
    ap.add_argument("--hands", type=int, default=300, help="hands of rules vs greedy (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=7120000, help="first deal seed (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.hands < 1:
        ap.error("--hands must be at least 1")
    try:
        measured = measure(args.player, args.hands, args.seed)
    except (ValueError, KeyError) as err:
        ap.error(str(err))
    print(report(*measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
