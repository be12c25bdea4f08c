"""Benchmark rows. Each ``bench_*`` runs for about ``seconds`` and returns a dict row."""

from __future__ import annotations

import gc
import os
import random
import time
import tracemalloc

import numpy as np


def _rss() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# --------------------------------------------------------------------------------------
# environments, random masked play, observation + mask every step


TABLE_SEATS = 4    # the rows of the many-seat variants: a 4-player table
MANY_SEATS = ("german", "crazy", "robbers")


def _options(name: str) -> dict:
    return {"num_players": TABLE_SEATS} if name in MANY_SEATS else {}


def _variant(name: str):
    from mountain_rummy_env import make_variant

    return make_variant(name, **_options(name))


def _label(variant: str) -> str:
    return f"{variant} {TABLE_SEATS}p" if variant in MANY_SEATS else variant


def bench_vector(variant: str, batch: int, seconds: float) -> dict:
    from mountain_rummy_env.envs.vector import RummyVectorEnv, sample_masked, seed_rng

    env = RummyVectorEnv(_variant(variant), batch, seed=0)
    obs, info = env.reset()
    rng = seed_rng(1, batch)
    acts = np.zeros(batch, np.int64)
    sample_masked(info["action_mask"], rng, acts)
    obs, rew, term, trunc, info = env.step(acts)  # warm-up
    start_actions = env.actions_applied
    steps = games = 0
    t0 = time.perf_counter()
    while True:
        sample_masked(info["action_mask"], rng, acts)
        obs, rew, term, trunc, info = env.step(acts)
        steps += batch
        games += int(term.sum())
        dt = time.perf_counter() - t0
        if dt >= seconds:
            break
    actions = env.actions_applied - start_actions
    return {"name": f"{_label(variant)} vector env, batch {batch}", "steps_s": actions / dt,
            "learner_steps_s": steps / dt, "games_s": games / dt}


def random_legal(mask, rnd: random.Random) -> int:
    """A uniform legal action of an int8 mask, picked as the peer loops pick theirs: one
    ``random.Random`` call on the legal list (``rng.choice`` of a numpy Generator cost as
    much as the env's whole step, and RLCard's loop pays nothing like it)."""
    legal = np.flatnonzero(mask)
    return int(legal[rnd.randrange(len(legal))])


def bench_aec(variant: str, seconds: float) -> dict:
    from mountain_rummy_env.registry import variant_info

    env = variant_info(variant).import_env_module().env(**_options(variant))
    rnd = random.Random(0)
    env.reset(seed=1)  # one warm-up hand: compiling the encoder for this variant is not play
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        env.step(None if term or trunc else random_legal(obs["action_mask"], rnd))
    env.reset(seed=0)
    steps = games = 0
    t0 = time.perf_counter()
    while True:
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            games += 1
            env.reset()
            if time.perf_counter() - t0 >= seconds:
                break
            continue
        env.step(random_legal(obs["action_mask"], rnd))
        steps += 1
    dt = time.perf_counter() - t0
    return {"name": f"{_label(variant)} AEC env (single game)", "steps_s": steps / dt,
            "games_s": games / dt}


def bench_openspiel(seconds: float) -> dict | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rnd = random.Random(0)
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rnd.randrange(len(outcomes))][0])
                continue
            p = state.current_player()
            state.observation_tensor(p)
            state.apply_action(rnd.choice(state.legal_actions(p)))
            steps += 1
        games += 1
    dt = time.perf_counter() - t0
    return {"name": "OpenSpiel gin_rummy (observation_tensor)", "steps_s": steps / dt,
            "games_s": games / dt}


def peer_summary(peer: str, rates: list[dict]) -> dict:
    """One row for a peer measured in several slices: its median steps/s and games/s."""
    return {"name": rates[0]["name"], "peer": peer,
            "steps_s": float(np.median([r["steps_s"] for r in rates])),
            "games_s": float(np.median([r["games_s"] for r in rates]))}


def bracketing_rate(rates: list[dict], block: int) -> float:
    """The peer's steps/s around block ``block`` of our rows: the mean of the slice measured
    just before it and the one just after (the machine's speed drifts; a shared box more)."""
    around = rates[block:block + 2] or rates[-1:]
    return float(np.mean([r["steps_s"] for r in around]))


def bench_rlcard(seconds: float) -> dict | None:
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": 0})
    rnd = random.Random(0)
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(rnd.choice(list(state["legal_actions"].keys())))
            steps += 1
        games += 1
    dt = time.perf_counter() - t0
    return {"name": "RLCard gin-rummy", "steps_s": steps / dt, "games_s": games / dt}


# --------------------------------------------------------------------------------------
# deadwood solvers on the same 11-card Gin hands (min deadwood over the 11 discards)

GIN_VALUES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]


def gin_hands(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(52, 11, replace=False) for _ in range(n)], np.int64)


def bench_solvers(seconds: float, n: int = 20000) -> list[dict]:
    """Card c = suit * 13 + rank (ace low) in all three libraries (suit order is irrelevant
    to melds and values)."""
    rows = []
    hands = gin_hands(n)
    try:
        from mountain_rummy_env.melds import MeldRules, build_meld_table
        from mountain_rummy_env.solver import best_deadwood_batch
    except ImportError as err:
        rows.append({"name": f"ours: solver not importable ({err})", "hands_s": float("nan")})
        ours = None
    else:
        table = build_meld_table(MeldRules(ace_high=False))
        values = np.zeros(53, np.int64)
        values[:52] = np.tile(GIN_VALUES, 4)
        bits = np.uint64(1) << hands.astype(np.uint64)
        full = np.bitwise_or.reduce(bits, axis=1)
        leave_one = (full[:, None] & ~bits).reshape(-1)   # the 11 ten-card hands of each deal
        best_deadwood_batch(leave_one[:110], 0, table, values)  # warm-up / compile
        done = 0
        t0 = time.perf_counter()
        while True:
            dw = best_deadwood_batch(leave_one, 0, table, values).reshape(n, 11).min(axis=1)
            done += n
            dt = time.perf_counter() - t0
            if dt >= seconds:
                break
        ours = dw
        rows.append({"name": "ours: best_deadwood_batch (batched, numba)", "hands_s": done / dt})
        done = 0
        t0 = time.perf_counter()
        while True:  # the 11-card hands themselves, one exact arrangement each
            best_deadwood_batch(full, 0, table, values)
            done += n
            dt = time.perf_counter() - t0
            if dt >= seconds:
                break
        rows.append({"name": "ours: single arrangement of the 11 cards (no discard)",
                     "hands_s": done / dt, "not_compared": True})
    try:
        import pyspiel
        utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    except (ImportError, AttributeError):
        pass
    else:
        done, agree = 0, 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds and done < n:
            d = utils.min_deadwood(hands[done].tolist())
            if ours is not None:
                agree += int(d == ours[done])
            done += 1
        dt = time.perf_counter() - t0
        rows.append({"name": "OpenSpiel GinRummyUtils.min_deadwood", "hands_s": done / dt,
                     "agree": (agree, done) if ours is not None else None})
    try:
        from rlcard.games.gin_rummy.utils import melding
        from rlcard.games.gin_rummy.utils import utils as rutils
    except ImportError:
        pass
    else:
        cards = [rutils.card_from_card_id(c) for c in range(52)]
        done, agree = 0, 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds and done < n:
            hand = [cards[c] for c in hands[done]]
            best = 999
            for k in range(11):
                ten = hand[:k] + hand[k + 1:]
                clusters = melding.get_best_meld_clusters(ten)
                cluster = clusters[0] if clusters else []
                best = min(best, rutils.get_deadwood_count(ten, cluster))
            if ours is not None:
                agree += int(best == ours[done])
            done += 1
        dt = time.perf_counter() - t0
        rows.append({"name": "RLCard melding.get_best_meld_clusters x 11 discards",
                     "hands_s": done / dt, "agree": (agree, done) if ours is not None else None})
    return rows


# --------------------------------------------------------------------------------------
# memory


def _wrap_runs() -> list[np.ndarray]:
    """The runs of 3-5 cards that turn the corner (K-A-2 ...; RR-3 ``around_the_corner``),
    as face lists."""
    return [np.array([suit * 13 + (start + j) % 13 for j in range(length)])
            for suit in range(4) for length in (3, 4, 5) for start in range(14 - length, 13)]


def rearrangement_positions(n: int, seed: int = 0, *, melds: tuple[int, int] = (4, 10),
                            jokers: int | tuple[int, int] = 4, hand: int = 11,
                            wrap: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """Robber's-like positions: a legal table of ``melds`` (lowest, highest) random melds
    tried from two decks and ``jokers`` jokers (or a number drawn from that range each
    position; at most one joker a meld, a joker in 30% of the melds) and a ``hand``-card hand
    of the cards left. A meld that no longer fits the cards left is skipped, so a table may
    hold fewer. ``wrap``: the melds may also be runs around the corner (:func:`_wrap_runs`).
    The defaults are the benchmark's positions."""
    from mountain_rummy_env.melds import MeldRules, build_meld_table

    table = build_meld_table(MeldRules(ace_low=True, ace_high=True))
    candidates = [table.faces[t, :table.length[t]] for t in range(table.num_templates)]
    if wrap:
        candidates += _wrap_runs()
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        num_jokers = jokers if isinstance(jokers, int) else int(rng.integers(jokers[0],
                                                                             jokers[1] + 1))
        stock = np.array([2] * 52 + [num_jokers])
        on_table = np.zeros(53, dtype=np.int64)
        for _ in range(int(rng.integers(melds[0], melds[1] + 1))):
            faces = candidates[int(rng.integers(len(candidates)))]
            meld = np.zeros(53, dtype=np.int64)
            meld[faces] += 1
            if rng.random() < 0.3:
                meld[faces[rng.integers(len(faces))]] -= 1
                meld[52] += 1
            if (meld <= stock).all():
                stock -= meld
                on_table += meld
        pool = np.repeat(np.arange(53), stock)
        cards = np.bincount(rng.choice(pool, hand, replace=False), minlength=53)
        out.append((on_table, cards))
    return out


def _time_solves(solve, positions, seconds: float, passes: bool = False):
    """Seconds of each ``solve(on_table, hand)`` over ``positions`` in order, stopping after
    ``seconds``; with ``passes`` the list is gone through again until ``seconds`` have
    passed. Returns (times, results)."""
    times, results = [], []
    start = time.perf_counter()
    while True:
        for on_table, hand in positions:
            t0 = time.perf_counter()
            results.append(solve(on_table, hand))
            times.append(time.perf_counter() - t0)
            if time.perf_counter() - start > seconds and not passes:
                return np.array(times), results
        if not passes or time.perf_counter() - start > seconds:
            return np.array(times), results


def bench_rearrange(seconds: float, n: int = 200) -> list[dict]:
    """Exact RR-6 rearrangements (most hand cards placed) solved per second, by the two
    methods of :func:`best_rearrangement` on the same positions: ``"milp"`` (scipy's HiGHS)
    on as many of the positions as ``seconds`` allow, then ``"fast"`` (numba) on those same
    positions, passing over them again until ``seconds`` have gone by. One row per method;
    ``agree`` counts the positions where the fast optimum equals the MILP's."""
    from mountain_rummy_env.melds import MeldRules, build_meld_table
    from mountain_rummy_env.rearrange import best_rearrangement

    table = build_meld_table(MeldRules(ace_low=True, ace_high=True))
    positions = rearrangement_positions(n)
    for method in ("fast", "milp"):        # compile / build the program outside the clock
        best_rearrangement(table, *positions[0], method=method)
    rows = {}
    for method in ("milp", "fast"):
        times, results = _time_solves(
            lambda on_table, hand, m=method: best_rearrangement(table, on_table, hand,
                                                                method=m).cards_placed,
            positions, seconds, passes=method == "fast")
        rows[method] = (times, results)
        if method == "milp":
            positions = positions[:len(times)]
    k = len(positions)
    agree = sum(a == b for a, b in zip(rows["fast"][1][:k], rows["milp"][1]))
    out = []
    for method, label in (("fast", "fast (numba, LP-bounded search)"),
                          ("milp", "milp (scipy HiGHS)")):
        times, results = rows[method]
        out.append({"method": method, "name": label, "positions": k, "solves": len(times),
                    "per_s": len(times) / times.sum(), "mean_ms": 1000 * times.mean(),
                    "p95_ms": 1000 * float(np.quantile(times, 0.95)),
                    "max_ms": 1000 * float(times.max()),
                    "table_cards": float(np.mean([p[0].sum() for p in positions])),
                    "placed": float(np.mean(results[:k])), "agree": (agree, k)})
    return out


REARRANGE_TITLE = ("Robber's Rummy rearrangement (RR-6), exact, one core: table of 4-10 melds, "
                   "11-card hand, both methods on the same positions")
REARRANGE_HEADER = ("method", "positions", "solves/s", "mean ms", "p95 ms", "max ms",
                    "table cards", "hand cards placed", "speed vs milp", "agrees with milp")


def rearrange_rows(rows: list[dict]) -> list[tuple]:
    """The table rows of :func:`bench_rearrange`'s result."""
    milp = next(r for r in rows if r["method"] == "milp")
    return [(r["name"], r["positions"], _fmt(r["per_s"]), f"{r['mean_ms']:.2f}",
             f"{r['p95_ms']:.2f}", f"{r['max_ms']:.1f}", f"{r['table_cards']:.1f}",
             f"{r['placed']:.2f}", f"{r['per_s'] / milp['per_s']:.0f}x"
             if r is not milp else "1x", f"{r['agree'][0]}/{r['agree'][1]}") for r in rows]


def bench_memory(variant: str = "mountain", batch: int = 1024, obs_dtype: str = "float32") -> dict:
    from mountain_rummy_env.envs.vector import RummyVectorEnv, sample_masked, seed_rng

    v = _variant(variant)

    def play(env, steps):
        obs, info = env.reset()
        rng = seed_rng(1, env.num_envs)
        acts = np.zeros(env.num_envs, np.int64)
        for _ in range(steps):
            sample_masked(info["action_mask"], rng, acts)
            obs, *_rest, info = env.step(acts)

    # a small env of the same kind first: the compiled code its calls load from numba's
    # cache (megabytes held by the process once, whatever the batch) is not per-env memory
    play(RummyVectorEnv(v, 2, seed=0, obs_dtype=obs_dtype), 20)
    gc.collect()
    rss0 = _rss()
    tracemalloc.start()
    env = RummyVectorEnv(v, batch, seed=0, obs_dtype=obs_dtype)
    play(env, 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = _rss()
    core = v.dtype.itemsize + env._obs.itemsize * env._obs.shape[1] + v.num_actions
    return {"variant": _label(variant), "obs_dtype": obs_dtype, "batch": batch,
            "state_bytes": v.dtype.itemsize,
            "obs_bytes": env._obs.itemsize * env._obs.shape[1], "mask_bytes": v.num_actions,
            "core_bytes": core, "tracemalloc_peak_per_env": peak / batch,
            "rss_delta_per_env": (rss1 - rss0) / batch}


# --------------------------------------------------------------------------------------
# where the time goes


def mask_phases(variant: str, states: np.ndarray) -> dict:
    """Rows of recorded ``states`` by the mask's phase: Mountain's (a deep-drawn card
    pending or not, the response); for the many-seat variants, whether the seat to move
    has opened and whether a card is pending (the taken discard before opening, GE-5; the
    freed joker after, GE-6)."""
    phase, pending = states["phase"], states["obligation"] >= 0
    if variant not in MANY_SEATS:
        return {"draw": phase == 0, "play": (phase == 1) & ~pending,
                "play with a deep-drawn card pending": (phase == 1) & pending,
                "response": phase == 2}
    opened = states["placed_before"][np.arange(len(states)), states["current"]] != 0
    play = phase == 1
    return {"draw": phase == 0, "play before opening": play & ~opened & ~pending,
            "play before opening, the taken discard pending": play & ~opened & pending,
            "play after opening": play & opened & ~pending,
            "play after opening, a freed joker pending": play & opened & pending}


def profile_step(batch: int = 1024, seconds: float = 2.0, variant: str = "mountain") -> dict:
    """Per-action microseconds of: the mask kernel alone (by phase, :func:`mask_phases`),
    apply+mask (``advance``), the observation encoder, and the rest of ``VectorEnv.step``
    (Python)."""
    from mountain_rummy_env.core import batch as kernels
    from mountain_rummy_env.envs import vector as vec
    from mountain_rummy_env.envs.observation import encode_observations

    env = vec.RummyVectorEnv(_variant(variant), batch, seed=0)
    obs, info = env.reset()
    rng = vec.seed_rng(1, batch)
    acts = np.zeros(batch, np.int64)
    g = env.game
    t_step = t_adv = t_obs = 0.0
    n_actions = n_learner = 0
    snaps = []
    orig_advance, orig_encode = vec.advance, vec.encode_observations

    def timed_advance(*a):
        nonlocal t_adv
        t = time.perf_counter()
        r = orig_advance(*a)
        t_adv += time.perf_counter() - t
        return r

    def timed_encode(*a):
        nonlocal t_obs
        t = time.perf_counter()
        r = orig_encode(*a)
        t_obs += time.perf_counter() - t
        return r

    vec.advance, vec.encode_observations = timed_advance, timed_encode
    try:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            vec.sample_masked(info["action_mask"], rng, acts)
            t = time.perf_counter()
            before = env.actions_applied
            obs, rew, term, trunc, info = env.step(acts)
            t_step += time.perf_counter() - t
            n_actions += env.actions_applied - before
            n_learner += batch
            if len(snaps) < 40:
                snaps.append(g.states.copy())
    finally:
        vec.advance, vec.encode_observations = orig_advance, orig_encode
    # the mask kernel alone, by phase, on the recorded positions
    states = np.concatenate(snaps)
    masks = np.zeros((len(states), g.masks.shape[1]), np.int8)
    by_phase = {}
    for name, rows in mask_phases(variant, states).items():
        sub = states[rows]
        if not len(sub):
            continue
        kernels.mask_batch(sub[:1], g.spec, masks[:1], g._scratch)  # compile outside the clock
        reps = 0
        t = time.perf_counter()
        while time.perf_counter() - t < 0.5:
            kernels.mask_batch(sub, g.spec, masks[: len(sub)], g._scratch)
            reps += 1
        by_phase[name] = ((time.perf_counter() - t) / (reps * len(sub)) * 1e6, len(sub) / len(states))
    sub = states[:1024]
    out = np.zeros((len(sub), env._obs.shape[1]), np.float32)
    seats = sub["current"].astype(np.int64)
    t = time.perf_counter()
    reps = 0
    while time.perf_counter() - t < 0.5:
        encode_observations(sub, g.spec, seats, out)
        reps += 1
    states = sub
    obs_us = (time.perf_counter() - t) / (reps * len(states)) * 1e6
    return {"variant": _label(variant), "batch": batch,
            "actions_per_learner_step": n_actions / n_learner,
            "step_us_per_action": t_step / n_actions * 1e6,
            "advance_us_per_action": t_adv / n_actions * 1e6,
            "encode_us_per_learner_step": t_obs / n_learner * 1e6,
            "other_us_per_action": (t_step - t_adv - t_obs) / n_actions * 1e6,
            "mask_us_by_phase": by_phase, "encode_us_alone": obs_us}


def profile_aec(variant: str = "mountain", seconds: float = 2.0) -> dict:
    """Microseconds per action of :func:`bench_aec`'s loop, split into: ``env.step`` (the
    compiled rules call -- apply the action, refresh the mask -- and the Python around it),
    ``env.last()`` (the observation encoder and the Python around it: mask copy, dicts) and
    the loop's own random pick of a legal action."""
    from mountain_rummy_env.registry import variant_info

    env = variant_info(variant).import_env_module().env(**_options(variant))
    rnd = random.Random(0)
    clock = {"kernel": 0.0, "encode": 0.0}

    def timed(name, call):
        def run(*args):
            t = time.perf_counter()
            out = call(*args)
            clock[name] += time.perf_counter() - t
            return out
        return run

    env.reset(seed=0)
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))   # binds the compiled calls: time them
    game, encoder = env.unwrapped.game, env.unwrapped._encoder
    game._step_single = (game._step_single[0], timed("kernel", game._step_single[1]))
    encoder._bound = (encoder._bound[0], timed("encode", encoder._bound[1]))
    t_step = t_last = t_pick = 0.0
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        t = time.perf_counter()
        obs, rew, term, trunc, info = env.last()
        t_last += time.perf_counter() - t
        if term or trunc:
            env.reset()
            continue
        t = time.perf_counter()
        action = random_legal(obs["action_mask"], rnd)
        t_pick += time.perf_counter() - t
        t = time.perf_counter()
        env.step(action)
        t_step += time.perf_counter() - t
        steps += 1
    per = 1e6 / steps
    return {"variant": _label(variant), "step_us": t_step * per, "kernel_us": clock["kernel"] * per,
            "last_us": t_last * per, "encode_us": clock["encode"] * per, "pick_us": t_pick * per}


# --------------------------------------------------------------------------------------
# the self-play PPO trainer, end to end


TRAINER_TITLE = ("Self-play PPO trainer (experiments/selfplay_ppo.py, default flags, league full), "
                 "one core: learner steps/s end to end (rollout + update) and where the time goes")
TRAINER_HEADER = ("variant", "precision", "learner steps/s", "env", "opponents", "policy forward",
                  "update")


def bench_trainer(variant: str, seconds: float, precision: str = "auto") -> dict:
    """Learner steps/s of ``selfplay_ppo`` with its default flags (no evaluation) but a
    snapshot every update, so the league is full after five as in a long run: one update to
    warm up (numba and torch first calls), then as many as ``seconds`` allow at that rate;
    the trainer's own clock splits the time into env, opponents, policy forward and update.
    At least 10 s: one update takes over a second."""
    import tempfile

    from experiments import selfplay_ppo

    def run(steps, folder):
        return selfplay_ppo.train(selfplay_ppo.parse_args([
            "--variant", variant, "--precision", precision, "--total-steps", str(steps),
            "--eval-every", "0", "--snapshot-every", str(batch), "--no-progress", "--run-dir", folder]))

    args = selfplay_ppo.parse_args([])
    batch = args.num_envs * args.n_steps
    with tempfile.TemporaryDirectory() as tmp:
        warm = run(batch, f"{tmp}/warm")
        updates = max(2, round(max(seconds, 10.0) * warm["learner_steps_per_s"] / batch))
        out = run(updates * batch, f"{tmp}/run")
    clock = out["seconds"]
    total = sum(clock[k] for k in ("env", "opponents", "policy", "update"))
    return {"variant": variant, "precision": out["precision"], "steps": out["env_steps"],
            "learner_steps_s": out["learner_steps_per_s"],
            **{f"share_{k}": clock[k] / total for k in ("env", "opponents", "policy", "update")}}


def trainer_runs(seconds: float) -> list[dict]:
    """:func:`bench_trainer` for Mountain and Gin, at the trainer's default precision and in
    float32 (what a CPU without AMX runs) when the default is bf16."""
    from experiments.selfplay_ppo import has_amx

    return [bench_trainer(v, seconds, p) for p in ("auto", "fp32")[:1 + has_amx()]
            for v in ("mountain", "gin")]


def trainer_rows(rows: list[dict]) -> list[tuple]:
    """The table rows of :func:`bench_trainer`'s results."""
    return [(r["variant"], r["precision"], _fmt(r["learner_steps_s"]),
             *(f"{r[f'share_{k}']:.0%}" for k in ("env", "opponents", "policy", "update")))
            for r in rows]


# --------------------------------------------------------------------------------------
# report


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def _plain_table(title, header, rows) -> list[str]:
    """A table as lines of text: the first column left-aligned, the others right."""
    widths = [max([len(str(h)), *(len(str(r[i])) for r in rows)]) for i, h in enumerate(header)]
    lines = [title, "  ".join(str(h).ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))))
    lines.append("")
    return lines


def run_all(seconds: float, batches, peers: bool = True, profile: bool = True,
            trainer: bool = False):
    from mountain_rummy_env.envs.observation import OBS_DTYPES

    slices: dict = {"OpenSpiel": [], "RLCard": []}   # peer rates, one slice per block edge

    def peer_slice():
        if not peers:
            return
        for fn, name in ((bench_openspiel, "OpenSpiel"), (bench_rlcard, "RLCard")):
            row = fn(seconds / 2)
            if row:
                slices[name].append(row)

    env_rows, aec_rows = [], {}
    for block, variant in enumerate(("gin", "mountain", *MANY_SEATS)):
        peer_slice()
        rows = [bench_vector(variant, b, seconds) for b in batches]
        # games/s of the large batches: all games start together, so few finish inside a short
        # window; use steps/s / mean game length (measured on the rows that finished games)
        fin = [r for r in rows if r["games_s"] > 0 and r["steps_s"] / r["games_s"] < 1000]
        length = (sum(r["steps_s"] for r in fin) / sum(r["games_s"] for r in fin)) if fin else None
        if length:
            for r in rows:
                r["games_s"] = r["steps_s"] / length
        aec_rows[variant] = bench_aec(variant, seconds)
        for r in rows + [aec_rows[variant]]:
            r["block"] = block
        env_rows.extend(rows + [aec_rows[variant]])
    peer_slice()
    summaries = {name: peer_summary(name, rates) for name, rates in slices.items() if rates}
    peer_rows = list(summaries.values())
    solver_rows = bench_solvers(seconds)
    mems = [bench_memory(v, obs_dtype=dtype) for v in ("mountain", "german", "robbers")
            for dtype in OBS_DTYPES]
    rearrange = bench_rearrange(seconds)
    profs = [profile_step(1024, min(seconds, 3.0), v) for v in ("mountain", "german")] \
        if profile else []
    aec_prof = [profile_aec(v, min(seconds, 3.0)) for v in ("gin", "mountain")] if profile else []

    os_row, rl_row = summaries.get("OpenSpiel"), summaries.get("RLCard")
    lines, md = [], []

    def peer_ratio(r, peer: str) -> float | None:
        """``r``'s steps/s over the peer's, measured around ``r``'s block (a peer row:
        over the peer's median)."""
        if peer not in summaries:
            return None
        if "block" in r:
            return r["steps_s"] / bracketing_rate(slices[peer], r["block"])
        return r["steps_s"] / summaries[peer]["steps_s"]

    def table(title, header, rows):
        lines.extend(_plain_table(title, header, rows))
        md.append(f"### {title}\n")
        md.append("| " + " | ".join(map(str, header)) + " |")
        md.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for r in rows:
            md.append("| " + " | ".join(map(str, r)) + " |")
        md.append("")

    rows = []
    for r in env_rows + peer_rows:
        ratio_os = f"{peer_ratio(r, 'OpenSpiel'):.2f}x" if os_row else "-"
        ratio_rl = f"{peer_ratio(r, 'RLCard'):.2f}x" if rl_row else "-"
        learner = _fmt(r["learner_steps_s"]) if "learner_steps_s" in r else "-"
        rows.append((r["name"], _fmt(r["steps_s"]), learner, _fmt(r["games_s"]), ratio_os, ratio_rl))
    table(f"Random masked play, one core, {seconds:g} s per row (steps = actions of all seats)",
          ("env", "steps/s", "learner steps/s", "games/s", "vs OpenSpiel", "vs RLCard"), rows)

    srows = []
    base = next((r for r in solver_rows if r["name"].startswith("ours:")), None)
    for r in solver_rows:
        ratio = f"{base['hands_s'] / r['hands_s']:.0f}x" if base and not r["name"].startswith("ours:") \
            and r["hands_s"] else "-"
        agree = f"{r['agree'][0]}/{r['agree'][1]}" if r.get("agree") else "-"
        srows.append((r["name"], _fmt(r["hands_s"]), ratio, agree))
    table("Min deadwood of random 11-card Gin hands (best discard), one core",
          ("solver", "hands/s", "ours is faster by", "agrees with ours"), srows)

    table(REARRANGE_TITLE, REARRANGE_HEADER, rearrange_rows(rearrange))
    if trainer:
        table(TRAINER_TITLE, TRAINER_HEADER,
              trainer_rows(trainer_runs(seconds)))

    table(f"Memory per env (vector env, batch {mems[0]['batch']})",
          ("variant", "obs_dtype", "state B", "obs B", "mask B", "state+obs+mask B",
           "tracemalloc peak B/env", "RSS delta B/env"),
          [(m["variant"], m["obs_dtype"], m["state_bytes"], m["obs_bytes"], m["mask_bytes"],
            m["core_bytes"], _fmt(m["tracemalloc_peak_per_env"]), _fmt(m["rss_delta_per_env"]))
           for m in mems])

    for prof in profs:
        prow = [("actions per learner step", f"{prof['actions_per_learner_step']:.2f}"),
                ("VectorEnv.step, us per action", f"{prof['step_us_per_action']:.1f}"),
                ("  advance (apply + mask kernel), us per action", f"{prof['advance_us_per_action']:.1f}"),
                ("  observation encode, us per learner step", f"{prof['encode_us_per_learner_step']:.1f}"),
                ("  rest (Python, autoreset, copies), us per action", f"{prof['other_us_per_action']:.1f}"),
                ("encode_observations alone, us per obs", f"{prof['encode_us_alone']:.2f}")]
        for name, (us, share) in prof["mask_us_by_phase"].items():
            prow.append((f"legal_mask alone, {name} ({share:.0%} of positions), us", f"{us:.1f}"))
        table(f"Where the time goes ({prof['variant']} vector env, batch {prof['batch']})",
              ("item", "value"), prow)
    if aec_prof:
        table("Where the time goes (AEC env, us per action of the benchmark loop)",
              ("env", "step", "  rules kernel", "  Python", "last()", "  encoder", "  Python",
               "loop's random pick"),
              [(f"{p['variant']} AEC env", f"{p['step_us']:.1f}", f"{p['kernel_us']:.1f}",
                f"{p['step_us'] - p['kernel_us']:.1f}", f"{p['last_us']:.1f}",
                f"{p['encode_us']:.1f}", f"{p['last_us'] - p['encode_us']:.1f}",
                f"{p['pick_us']:.1f}") for p in aec_prof])

    targets = [f"{r['name']}: {len(slices[r['peer']])} slices of {seconds / 2:g} s between the "
               f"variants' rows, {_fmt(min(x['steps_s'] for x in slices[r['peer']]))}-"
               f"{_fmt(max(x['steps_s'] for x in slices[r['peer']]))} steps/s; each row's ratio "
               "is to the mean of the two slices around its variant's rows" for r in peer_rows]
    for variant, factor in (("gin", 10), ("mountain", 10), ("german", 5)):   # issue #24
        best = max((r for r in env_rows if r["name"].startswith(f"{_label(variant)} vector")),
                   key=lambda r: peer_ratio(r, "OpenSpiel") or 0)
        if os_row:
            targets.append(f"target: {_label(variant)} vector env >= {factor}x OpenSpiel steps/s -> best "
                           f"{peer_ratio(best, 'OpenSpiel'):.2f}x ({best['name']})")
    if rl_row:
        for variant in ("gin", "mountain"):
            targets.append(f"target: {variant} AEC env >= 2x RLCard steps/s -> "
                           f"{peer_ratio(aec_rows[variant], 'RLCard'):.2f}x")
    compact = next(m for m in mems if m["variant"] == "mountain" and m["obs_dtype"] == "int8")
    peak = compact["tracemalloc_peak_per_env"] / 1000
    targets.append(f"target: mountain vector env peak memory <= 16 kB per env at batch "
                   f"{compact['batch']} (int8) -> {peak:.1f} kB")
    single = next((r for r in solver_rows if r["name"].startswith("ours: single")), None)
    if single:
        targets.append(f"target: solver >= 1,000,000 11-card hands/s -> {_fmt(single['hands_s'])}")
    lines.extend(targets)
    md.extend(f"- {t}" for t in targets)
    return "\n".join(lines), "\n".join(md) + "\n"


def main(argv=None) -> int:
    """``python -m benchmarks.bench rearrange``: one part of ``python -m benchmarks`` alone
    (pinned to one core like the whole run)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench",
                                 description="Run one part of the benchmarks alone.")
    ap.add_argument("part", choices=["rearrange", "trainer"], help="rearrange: the RR-6 "
                    "rearrangement table, fast and milp methods on the same positions; trainer: "
                    "the self-play PPO trainer's learner steps/s, Mountain and Gin")
    ap.add_argument("--seconds", type=float, default=5.0, help="seconds per method (default 5)")
    ap.add_argument("--positions", type=int, default=200,
                    help="positions generated; the MILP gets through those its seconds allow")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin to (default 0)")
    args = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {args.core})
    except (AttributeError, OSError) as err:  # pragma: no cover - non-Linux
        print(f"note: could not pin to core {args.core}: {err}", file=sys.stderr)
    if args.part == "trainer":
        rows = trainer_runs(args.seconds)
        print("\n".join(_plain_table(TRAINER_TITLE, TRAINER_HEADER, trainer_rows(rows))))
        return 0
    rows = bench_rearrange(args.seconds, args.positions)
    print("\n".join(_plain_table(REARRANGE_TITLE, REARRANGE_HEADER, rearrange_rows(rows))))
    return 0


if __name__ == "__main__":
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    raise SystemExit(main())
