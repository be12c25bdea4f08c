"""Search-distilled corrections to the ``rules`` player (one round of expert iteration).

PPO that starts as the ``rules`` player (``train_ppo --hint rules-slots``) did not improve
on it: one departure from ``rules`` changes a hand by a few points against a spread of
~90 (``experiments/departure_noise.py``). This trainer judges every candidate move
against the ``rules`` move on shared samples instead, as the Monte Carlo search does, and
teaches the network those judgements:

1. **Label** (``labels/``, resumable): the ``rules`` player plays ``--hands`` hands against
   ``--opponents``. At each of its decisions with a choice among the hinted policy's
   shortlist (the ``rules`` move and the search's candidate moves, ``agents.ppo.advise``),
   every distinct candidate is judged on the same ``--playouts`` samples (placing a meld
   the ``rules`` player holds is played as the search's whole placing plan). A label is
   each candidate's mean margin less the ``rules`` move's: its advantage in hand points.
   ``--judge replay`` (default) samples the true state with the stock's order reshuffled
   and lets copies of the players themselves finish the hand, ``rules`` in the labelled
   seat: a sample of the advantage against the real opponent, unbiased, since the true
   hidden cards are a draw from what the seat cannot see. ``--judge playouts`` uses the
   search's determinised playouts (``MonteCarloSearch.rollouts``): cheaper per sample,
   but their playout policy and sampled opponent hands are not the real ones, and that
   bias is what a policy fitted to them learned (docs/training.md).
2. **Fit**: the hinted ``rules-slots`` actor (``agents.ppo_nets``) regresses those
   advantages: its logit for a candidate less its logit for the ``rules`` move predicts the
   advantage / ``--scale``. Hands are split into training and held-out sets.
3. **Threshold**: the hint weight becomes the margin a candidate must be predicted to beat
   the ``rules`` move by before the policy departs; it is chosen on the held-out labels,
   whose mean advantage of the chosen moves is an unbiased estimate of the gain per decision.
4. **Evaluate**: the policy (``ppo:path=RUN/policy.pt``) plays ``--eval-opponents`` on
   duplicate deals; rows for models fitted on growing shares of the labels give
   ``learning_curve.png`` (x: labelled hands' env steps).

    python -m experiments.distill_search --workers 2 --eval-deals 200 --curve 0.5,1   # ~65 min
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

CANDIDATES = 6          # the rules move and at most five slots
HINT = "rules-slots"


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.distill_search",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--run-dir", default="runs/distill/mountain", help="outputs; reused to resume")
    p.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("labels")
    g.add_argument("--hands", type=int, default=3300, help="hands the rules player plays and labels")
    g.add_argument("--chunk", type=int, default=25, help="hands per label file (the unit of resuming)")
    g.add_argument("--judge", default="replay", choices=("replay", "playouts"),
                   help="replay: the true state, stock reshuffled, finished by the players "
                        "themselves; playouts: the search's determinised playouts")
    g.add_argument("--playouts", type=int, default=4, help="samples per candidate at a labelled decision")
    g.add_argument("--opponents", default="rules:3,greedy:1", help="opponent pool, spec:weight")
    g.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="labelling processes")
    g = p.add_argument_group("fit")
    g.add_argument("--net-arch", default="64", help="hidden widths of the actor")
    g.add_argument("--activation", default="tanh", choices=("tanh", "relu"))
    g.add_argument("--epochs", type=int, default=8)
    g.add_argument("--lr", type=float, default=3e-4)
    g.add_argument("--batch-size", type=int, default=256)
    g.add_argument("--weight-decay", type=float, default=1e-4)
    g.add_argument("--scale", type=float, default=10.0, help="hand points per logit unit")
    g.add_argument("--holdout", type=float, default=0.2, help="share of label files held out")
    g.add_argument("--curve", default="0.25,0.5,1", help="shares of the training labels fitted for the curve")
    g = p.add_argument_group("evaluation")
    g.add_argument("--eval-opponents", default="greedy,rules", help="baselines played on duplicate deals")
    g.add_argument("--eval-deals", type=int, default=300, help="duplicate deals per opponent and curve point")
    g.add_argument("--eval-seed", type=int, default=9_000_000)
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    if min(args.hands, args.chunk, args.playouts, args.workers, args.epochs, args.batch_size) < 1:
        p.error("--hands, --chunk, --playouts, --workers, --epochs and --batch-size must be positive")
    if not 0.0 < args.holdout < 1.0 or args.scale <= 0 or args.lr <= 0 or args.eval_deals < 0:
        p.error("--holdout must be in (0, 1); --scale and --lr positive; --eval-deals >= 0")
    try:
        args.curve_shares = sorted({float(s) for s in args.curve.split(",")})
        args.widths = [int(w) for w in args.net_arch.split(",")]
    except ValueError:
        p.error("--curve and --net-arch are comma-separated numbers")
    if not args.curve_shares or not all(0 < s <= 1 for s in args.curve_shares) or args.curve_shares[-1] != 1:
        p.error("--curve shares must lie in (0, 1] and end with 1")
    from agents import AgentSpecError, make_agent
    from experiments.train_ppo import parse_pool

    args.pool = parse_pool(args.opponents)
    for spec in [s for s, _ in args.pool] + args.eval_opponents.split(","):
        try:
            make_agent(spec, variant="mountain")
        except (AgentSpecError, ValueError) as err:
            p.error(f"opponent {spec!r}: {err}")
    return args


# ---------------------------------------------------------------------------------------
# 1. labels


def label_chunk(job: dict) -> dict:
    """Play and label the hands of one chunk; returns arrays (see :func:`load_labels`)."""
    from mountain_rummy_env import Game, mountain_variant, player_view
    from mountain_rummy_env.core.state import EVENT_NONE, PHASE_PLAY
    from mountain_rummy_env.envs.observation import encode_observations, observation_size

    from agents import make_agent
    from agents.ppo import HINTS, advise

    started = time.time()
    variant = mountain_variant()
    hint = HINTS[HINT]
    index, seed = job["index"], job["seed"]
    rng = np.random.default_rng([seed, index])
    specs = [s for s, _ in job["pool"]]
    w = np.array([w for _, w in job["pool"]], np.float64)
    adviser = make_agent(hint.spec, seed=[seed, index, 0], variant="mountain")
    opponents = {s: make_agent(s, seed=[seed, index, 1 + k], variant="mountain") for k, s in enumerate(specs)}
    game = Game(variant, 1)
    n_obs = observation_size(variant)
    buf = np.zeros((1, n_obs), np.float32)
    obs, ids, cands, adv = [], [], [], []
    steps = 0
    for h in range(job["hands"]):
        hand = index * job["hands"] + h
        opp = opponents[specs[rng.choice(len(specs), p=w / w.sum())]]
        me = hand % 2
        adviser.reset()
        opp.reset()
        game.reset(seed=seed * 1_000_003 + hand)
        while True:
            p = game.current_player(0)
            mask = game.masks[0]
            view = player_view(game, 0, p)
            if p == me:
                cols, keep = advise(adviser, hint, view, mask)
                move = cols[0]
                acts = [move, *sorted(set(np.flatnonzero(keep).tolist()) - {move})]
                if len(acts) > 1:
                    plays = [(a,) for a in acts]
                    placing = cols[1] if view.phase == PHASE_PLAY else -1   # the placing slot
                    if placing in acts[1:]:     # placing what rules holds: the whole plan
                        plays[acts.index(placing)] = adviser.placing_plan(view, mask) or (placing,)
                    if job["judge"] == "playouts":
                        values = adviser.rollouts(view, mask, plays, job["playouts"])
                    else:
                        values = replay_values(game, {me: adviser, 1 - me: opp}, me, plays,
                                               job["playouts"], rng)
                    gain = values.mean(axis=0) - values[:, 0].mean()
                    encode_observations(view.public_state(), variant.spec, np.array([p], np.int64), buf)
                    obs.append(buf[0].astype(np.float16))
                    ids.append(cols)
                    cands.append(acts + [-1] * (CANDIDATES - len(acts)))
                    adv.append(list(gain) + [np.nan] * (CANDIDATES - len(acts)))
                adviser.remember(view, move)
                a = move
            else:
                a = int(opp.act(view, mask))
            steps += 1
            if game.step_one(0, a) != EVENT_NONE:
                break
    return {"obs": np.array(obs, np.float16).reshape(-1, n_obs),
            "ids": np.array(ids, np.int16).reshape(-1, 1 + hint.slots),
            "cands": np.array(cands, np.int16).reshape(-1, CANDIDATES),
            "adv": np.array(adv, np.float32).reshape(-1, CANDIDATES),
            "env_steps": np.int64(steps), "seconds": np.float64(time.time() - started)}


def replay_values(game, players: dict, me: int, plays, n: int, rng) -> np.ndarray:
    """Hand-point margins of ``me`` (``n`` samples x candidates): the true state with the
    stock's unseen order shuffled anew for each sample, each candidate (an action or a plan)
    played in turn, then the players themselves (copies, with their memories) finish the
    hand; ``me``'s player plays its ``rules`` moves. All candidates of a sample share the
    stock order and the players' random state."""
    import copy

    from agents.rules import RulesAgent
    from mountain_rummy_env import player_view
    from mountain_rummy_env.core.state import EVENT_NONE

    s = game.states[0]
    ptr, end = int(s["stock_ptr"]), int(s["stock_len"])
    out = np.zeros((n, len(plays)))
    for j in range(n):
        order = rng.permutation(s["stock"][ptr:end])
        for c, plan in enumerate(plays):
            sim = game.clone()
            sim.states[0]["stock"][ptr:end] = order
            twins = copy.deepcopy(players)
            moves = list(plan)
            event = EVENT_NONE
            while event == EVENT_NONE:
                p = sim.current_player(0)
                view = player_view(sim, 0, p)
                if p == me:
                    a = moves.pop(0) if moves else RulesAgent.choose(twins[p], view, sim.masks[0])
                    twins[p].remember(view, a)
                else:
                    a = twins[p].act(view, sim.masks[0])
                event = sim.step_one(0, int(a))
            pts = sim.summary(0).hand_points
            out[j, c] = pts[me] - pts[1 - me]
    return out


def chunk_path(run: Path, index: int) -> Path:
    return run / "labels" / f"chunk_{index:05d}.npz"


def make_labels(args, run: Path, log=print) -> None:
    """Label every missing chunk (``--workers`` processes); each file is written atomically,
    so an interrupted run resumes where it stopped."""
    from tqdm import tqdm

    (run / "labels").mkdir(parents=True, exist_ok=True)
    n_chunks = math.ceil(args.hands / args.chunk)
    todo = [i for i in range(n_chunks) if not chunk_path(run, i).exists()]
    if not todo:
        return
    log(f"[labels] {len(todo)} of {n_chunks} chunks to label ({args.chunk} hands each, "
        f"{args.playouts} samples a candidate, judge {args.judge})")
    jobs = [{"index": i, "seed": args.seed, "hands": args.chunk, "pool": args.pool,
             "playouts": args.playouts, "judge": args.judge} for i in todo]
    bar = tqdm(total=len(todo) * args.chunk, unit="hand", disable=args.no_progress, file=sys.stderr)
    with ProcessPoolExecutor(args.workers) as pool:
        for job, data in zip(jobs, pool.map(label_chunk, jobs)):
            path = chunk_path(run, job["index"])
            tmp = path.with_name(path.name + ".tmp.npz")
            np.savez(tmp, **data)
            os.replace(tmp, path)
            bar.update(args.chunk)
    bar.close()


def load_labels(run: Path, n_chunks: int) -> list[dict]:
    """The label files ``0 .. n_chunks-1``; a damaged one raises ``ValueError`` naming it
    (delete it and run again to relabel it). ``seconds`` (a worker's time on the file) is
    NaN for files written before it was recorded."""
    keys = ("obs", "ids", "cands", "adv", "env_steps")
    out = []
    for i in range(n_chunks):
        path = chunk_path(run, i)
        try:
            with np.load(path) as z:
                chunk = {k: z[k] for k in keys}
                chunk["seconds"] = float(z["seconds"]) if "seconds" in z.files else math.nan
        except Exception as err:
            raise ValueError(f"label file {path} is missing or damaged ({type(err).__name__}: "
                             f"{err}); delete it and run again to relabel it") from None
        rows = {len(chunk[k]) for k in keys[:4]}
        if len(rows) != 1:
            raise ValueError(f"label file {path} is inconsistent (row counts {sorted(rows)}); "
                             "delete it and run again to relabel it")
        out.append(chunk)
    return out


def stack(chunks: list[dict]) -> dict:
    """The label arrays of ``chunks`` concatenated, row by row."""
    return {k: np.concatenate([c[k] for c in chunks]) for k in ("obs", "ids", "cands", "adv")}


# ---------------------------------------------------------------------------------------
# 2. fit and 3. threshold


def new_actor(args, n_obs: int, n_act: int):
    from agents.ppo import HINTS
    from agents.ppo_nets import build_actor

    actor = build_actor(n_obs, n_act, args.widths, args.activation, hinted=True, slots=HINTS[HINT].slots)
    actor.head.hint_weight.data.zero_()
    actor.head.hint_weight.requires_grad_(False)
    return actor


def predicted_advantage(actor, data: dict, rows, scale: float):
    """``(rows, CANDIDATES)`` tensor: each candidate's logit less the ``rules`` move's,
    in hand points, with the hint weight left out."""
    import torch

    x = torch.as_tensor(np.concatenate([data["obs"][rows], data["ids"][rows]], axis=1).astype(np.float32))
    logits = actor(x) - actor.head.hint_weight * torch.nn.functional.one_hot(
        x[:, -1 - actor.head.slots].long(), actor.head.out_features)
    c = torch.as_tensor(data["cands"][rows].astype(np.int64)).clamp(min=0)
    picked = logits.gather(1, c)
    return (picked - picked[:, :1]) * scale


def fit(actor, train: dict, val: dict, args, log=print) -> list[dict]:
    """AdamW on the mean squared error of the predicted advantages (candidates other than
    the ``rules`` move); keeps the weights of the epoch with the lowest held-out error."""
    import torch

    opt = torch.optim.AdamW([p for p in actor.parameters() if p.requires_grad], lr=args.lr,
                            weight_decay=args.weight_decay)
    gen = np.random.default_rng(args.seed)
    n = len(train["adv"])
    history, best = [], (math.inf, None)

    def loss_of(data, rows):
        target = torch.as_tensor(np.nan_to_num(data["adv"][rows], nan=0.0))
        real = torch.as_tensor(~np.isnan(data["adv"][rows]))
        real[:, 0] = False
        err = (predicted_advantage(actor, data, rows, args.scale) - target) / args.scale
        return (err[real] ** 2).mean()

    for ep in range(args.epochs):
        t = time.time()
        actor.train()
        for g in opt.param_groups:
            g["lr"] = args.lr * (1 - ep / args.epochs) ** 0.5
        order = gen.permutation(n)
        for s in range(0, n, args.batch_size):
            loss = loss_of(train, order[s:s + args.batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
        actor.eval()
        with torch.no_grad():
            tr = float(np.mean([loss_of(train, order[s:s + 4096]).item() for s in range(0, min(n, 20_000), 4096)]))
            va = float(loss_of(val, np.arange(len(val["adv"]))).item())
        history.append({"epoch": ep + 1, "train_mse": tr, "val_mse": va, "seconds": round(time.time() - t, 1)})
        log(f"[fit] epoch {ep + 1}: train mse {tr:.4f}, held-out mse {va:.4f} ({history[-1]['seconds']} s)")
        if va < best[0]:
            best = (va, {k: v.clone() for k, v in actor.state_dict().items()})
    actor.load_state_dict(best[1])
    return history


def threshold_table(actor, val: dict, scale: float, margins=None) -> list[dict]:
    """For each departure margin (hand points): the share of held-out decisions where the
    policy departs from ``rules`` and the mean labelled advantage of its moves (points per
    decision; unbiased, since the labels were not fitted on)."""
    import torch

    with torch.no_grad():
        pred = predicted_advantage(actor, val, np.arange(len(val["adv"])), scale).numpy()
    pred[np.isnan(val["adv"])] = -np.inf
    pred[:, 0] = 0.0
    rows = []
    for m in (np.arange(0.0, 40.01, 1.0) if margins is None else margins):
        bonus = np.zeros_like(pred)
        bonus[:, 0] = m
        pick = (pred + bonus).argmax(axis=1)
        gain = val["adv"][np.arange(len(pick)), pick]
        rows.append({"margin": float(m), "departs": float((pick != 0).mean()),
                     "gain": float(gain.mean()), "gain_se": float(gain.std(ddof=1) / math.sqrt(len(gain)))})
    return rows


# ---------------------------------------------------------------------------------------
# 4. evaluation and the run


def evaluate_policy(path: Path, args, deals: int) -> list[dict]:
    from experiments.train_ppo import evaluate

    cfg = argparse.Namespace(variant="mountain", variant_options="{}", eval_seed=args.eval_seed)
    return evaluate(path, cfg, [s for s in args.eval_opponents.split(",") if s], deals)


def main(argv=None) -> dict:
    import torch

    from agents.ppo import save_policy, variant_options
    from experiments.train_ppo import EVAL_FIELDS, plot_curve
    from mountain_rummy_env import mountain_variant
    from mountain_rummy_env.envs.observation import observation_size

    args = parse_args(argv)
    run = Path(args.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    (run / "args.json").write_text(json.dumps({k: v for k, v in vars(args).items() if k != "pool"}, indent=1) + "\n")
    torch.manual_seed(args.seed)
    t0 = time.time()
    make_labels(args, run)
    label_s = time.time() - t0
    n_chunks = math.ceil(args.hands / args.chunk)
    chunks = load_labels(run, n_chunks)
    held = np.random.default_rng([args.seed, 1]).random(n_chunks) < args.holdout
    held[0] = True       # at least one chunk each side
    held[-1] = n_chunks == 1
    train_idx = [i for i in range(n_chunks) if not held[i]] or [0]
    val = stack([chunks[i] for i in range(n_chunks) if held[i]])
    variant = mountain_variant()
    n_obs, n_act = observation_size(variant), variant.num_actions
    meta = {"variant": "mountain", "variant_options": variant_options(variant),
            "observation_size": n_obs, "num_actions": n_act, "net_arch": args.widths,
            "activation": args.activation, "hint": HINT, "guard": "none", "trainer": "distill_search"}
    csv_path = run / "eval.csv"
    with csv_path.open("w", newline="") as fh:
        csv.writer(fh).writerow(EVAL_FIELDS)
    timed = [c["seconds"] for c in chunks if not math.isnan(c["seconds"])]
    summary = {"label_wall_seconds_this_run": round(label_s, 1),
               "label_worker_seconds": round(sum(timed), 1), "label_files_timed": len(timed),
               "label_files": n_chunks, "decisions": int(sum(len(c["adv"]) for c in chunks)),
               "heldout_decisions": int(len(val["adv"])), "points": []}
    for share in args.curve_shares:
        used = train_idx[: max(1, round(share * len(train_idx)))]
        train = stack([chunks[i] for i in used])
        steps = int(sum(int(chunks[i]["env_steps"]) for i in used))
        actor = new_actor(args, n_obs, n_act)
        t = time.time()
        history = fit(actor, train, val, args)
        table = threshold_table(actor, val, args.scale)
        best = max(table, key=lambda r: r["gain"])
        actor.head.hint_weight.data.fill_(best["margin"] / args.scale)
        path = run / ("policy.pt" if share == 1 else f"policy_{share:g}.pt")
        save_policy(path, actor, dict(meta, env_steps=steps, departure_margin=best["margin"]))
        point = {"share": share, "decisions": int(len(train["adv"])), "env_steps": steps,
                 "fit_seconds": round(time.time() - t, 1), "fit": history, "thresholds": table,
                 "margin": best["margin"], "departs": best["departs"], "gain": best["gain"],
                 "gain_se": best["gain_se"]}
        print(f"[fit] share {share:g}: {point['decisions']} decisions; departs on {best['departs']:.3f} "
              f"of held-out decisions at margin {best['margin']:g}, gain {best['gain']:+.2f} "
              f"± {best['gain_se']:.2f} points a decision")
        if args.eval_deals:
            for r in evaluate_policy(path, args, args.eval_deals):
                with csv_path.open("a", newline="") as fh:
                    csv.writer(fh).writerow([steps, round(time.time() - t0, 1), r["opponent"], r["deals"],
                                             r["win_rate"], r["margin"], r["margin_se"]])
                point.setdefault("eval", []).append(r)
                print(f"[eval] vs {r['opponent']}: margin {r['margin']:+.2f} ± {r['margin_se']:.2f}, "
                      f"win rate {r['win_rate']:.3f} over {r['deals']} deals")
        summary["points"].append(point)
        (run / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.eval_deals:
        plot_curve(csv_path, run / "learning_curve.png")
    summary["wall_seconds"] = round(time.time() - t0, 1)
    (run / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


if __name__ == "__main__":
    main()
