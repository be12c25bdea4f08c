"""Mountain Rummy rules (docs/mountain_rummy.md) as compiled functions over state records.

Every function takes one game's record ``s`` (see :mod:`.state`) and ``spec``, the variant's
static tables (:class:`mountain_rummy_env.core.spec.Spec`), so a batch is a loop over records
inside one compiled call and the single-game env runs the very same code. Nothing here holds
Python objects; numba compiles it once per record layout.

Legality is decided in one place, :func:`legal_mask`; :func:`apply_action` assumes a legal
action. Each mask entry is exact: meld/layoff actions are only unmasked when the player can
still end the turn afterwards (MR-7), and deep discard draws only when the drawn card can be
placed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import JOKER_FACE, NUM_RANKS
from ..solver import _lowbit, _popcount
from .state import (
    BONUS_BASE, BONUS_HIGH, BONUS_SUMMIT, BONUS_UNDERCUT, END_BASE_CAMP, END_EXHAUSTED,
    END_HIGH_CAMP, END_KNOCK, END_NONE, EVENT_GAME_OVER, EVENT_HAND_OVER, EVENT_NONE,
    LOC_DISCARD, LOC_FACEDOWN, LOC_HAND, LOC_STOCK, LOC_TABLE, MELD_EMPTY, MELD_WIDTH,
    PHASE_DRAW, PHASE_GAME_OVER, PHASE_HAND_OVER, PHASE_PLAY, PHASE_RESPONSE,
)

SET, RUN = 1, 2
ACE_HIGH_POS = 13
MAX_CLEAR_DEPTH = 40  # placements the "can every card be placed" search looks ahead (MR-7)
MAX_REACH_DEPTH = 12  # placements before a deep-drawn card is placed (MR-7.1 reachability)
# records of scratch a caller provides (Game, agents): the dead-end search's stack (the
# reachability search's, in turn, on top), plus the probe of legal_mask
SCRATCH_RECORDS = MAX_CLEAR_DEPTH + 2
VISITED_SLOTS = 512  # first size of the table of positions one search has seen (it grows)
MAX_VISITED_SLOTS = 1 << 20  # ... up to this size (9 MiB)
VISITED_PROBES = 32  # slots a position may look at in that table
CLEAR_CHECK_AFTER = 64  # positions the dead-end search visits before it checks each card

# --------------------------------------------------------------------------------------
# random numbers: splitmix64 per game, so a game's chance does not depend on its batch


@njit(cache=True)
def mix64(z):
    """The splitmix64 finalizer: every bit of ``z`` stirs every bit of the result."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def next_random(s):
    s.rng = s.rng + np.uint64(0x9E3779B97F4A7C15)
    return mix64(s.rng)


@njit(cache=True)
def random_below(s, n):
    return np.int64(next_random(s) % np.uint64(n))


@njit(cache=True)
def shuffle_deck(s, spec):
    """Fill ``s.deck`` with a uniformly shuffled deck (Fisher-Yates)."""
    n = spec.num_cards
    for i in range(n):
        s.deck[i] = i
    for i in range(n - 1, 0, -1):
        j = random_below(s, i + 1)
        tmp = s.deck[i]
        s.deck[i] = s.deck[j]
        s.deck[j] = tmp


@njit(cache=True)
def first_dealer(s, spec):
    """MR-6: each player draws a card from a shuffled deck, jokers redrawn; highest deals
    (ace high, ties of rank broken by suit C < D < H < S)."""
    shuffle_deck(s, spec)
    best_player = 0
    best_key = -1
    drawn = 0
    p = 0
    for i in range(spec.num_cards):
        c = s.deck[i]
        if c >= spec.num_naturals:
            continue
        face = spec.card_face[c]
        rank = face % NUM_RANKS
        key = (13 if rank == 0 else rank) * 4 + face // NUM_RANKS
        if key > best_key:
            best_key = key
            best_player = p
        p += 1
        drawn += 1
        if drawn == spec.num_players:
            break
    return best_player


# --------------------------------------------------------------------------------------
# dealing


@njit(cache=True)
def deal(s, spec):
    """MR-1: deal ``s.deck`` (top first): ``hand_size`` cards each, one at a time starting
    with the player after the dealer, one up-card, the rest is the stock."""
    n = spec.num_cards
    for c in range(n):
        s.meld_of[c] = -1
        s.shown[c] = -1
        s.owner[c] = -1
        s.taken[c] = 0
        s.public[c] = 0
    for m in range(spec.max_melds):
        s.m_kind[m] = MELD_EMPTY
        for k in range(MELD_WIDTH):
            s.m_cards[m, k] = -1
    i = 0
    for _ in range(spec.hand_size):
        for k in range(spec.num_players):
            p = (s.dealer + 1 + k) % spec.num_players
            s.loc[s.deck[i]] = LOC_HAND + p
            i += 1
    s.loc[s.deck[i]] = LOC_DISCARD
    s.discard[0] = s.deck[i]
    s.discard_len = 1
    i += 1
    s.stock_len = 0
    while i < n:
        s.loc[s.deck[i]] = LOC_STOCK
        s.stock[s.stock_len] = s.deck[i]
        s.stock_len += 1
        i += 1
    s.stock_ptr = 0
    s.phase = PHASE_DRAW
    s.current = (s.dealer + 1) % spec.num_players
    s.turn = 0
    s.obligation = -1
    s.placed_this_turn = 0
    for p in range(spec.num_players):
        s.placed_before[p] = 0
    s.end_kind = END_NONE
    s.ender = -1


start_hand = deal  # the hand start every kernel module names (core.batch.deal_batch)


@njit(cache=True)
def clear_game(s, spec, seed):
    """Seed the game's generator and clear the totals and the last hand's summary."""
    s.rng = np.uint64(seed)
    s.hand_no = 0
    s.wild_rank = -1
    for p in range(spec.num_players):
        s.scores[p] = 0
        s.h_credit[p] = 0
        s.h_deadwood[p] = 0
        s.h_sp[p] = 0
        s.h_bonus[p] = 0
        s.h_points[p] = 0
    s.h_winner = -1
    s.h_end_kind = END_NONE
    s.h_ender = -1
    s.h_bonus_kinds = 0
    s.game_winner = -1


@njit(cache=True)
def begin_game(s, spec, seed, dealer, deck_given, draw_for_dealer):
    """Every variant's game start before the deal: seed the generator, choose the first dealer
    (MR-6's draw if ``draw_for_dealer``, else a seat at random; ``dealer`` >= 0 overrides
    either), shuffle (unless ``deck_given``: ``s.deck`` already holds the order)."""
    clear_game(s, spec, seed)
    saved = s.deck.copy()
    chosen = first_dealer(s, spec) if draw_for_dealer else random_below(s, spec.num_players)
    shuffle_deck(s, spec)  # drawn even for a given deck, so later hands deal alike (records)
    if deck_given:
        s.deck[:] = saved
    s.dealer = dealer if dealer >= 0 else chosen


@njit(cache=True)
def new_game(s, spec, seed, dealer, deck_given):
    """Start a game (:func:`begin_game`, the dealer by MR-6) and deal."""
    begin_game(s, spec, seed, dealer, deck_given, True)
    deal(s, spec)


@njit(cache=True)
def draw_stock(s, p):
    """The top stock card goes to seat ``p``'s hand; returns it."""
    c = s.stock[s.stock_ptr]
    s.stock_ptr += 1
    s.loc[c] = LOC_HAND + p
    return c


# --------------------------------------------------------------------------------------
# views of the position used by the mask


@njit(cache=True)
def face_now(s, f):
    """The face a card printed ``f`` plays as in this hand: ``JOKER_FACE`` for a joker or a
    card of the hand's wild rank (``s.wild_rank``, Crazy Rummy), else ``f``."""
    if s.wild_rank >= 0 and f < JOKER_FACE and f % NUM_RANKS == s.wild_rank:
        return JOKER_FACE
    return f


@njit(cache=True)
def card_face_now(s, spec, c):
    """The face card ``c`` plays as in this hand (:func:`face_now` of its printed face)."""
    return face_now(s, spec.card_face[c])


@njit(cache=True)
def is_wild(s, spec, c):
    """Whether card ``c`` is a joker in this hand (:func:`card_face_now`)."""
    return card_face_now(s, spec, c) == JOKER_FACE


@njit(cache=True)
def hand_view(s, spec, p, face_card, jokers):
    """Fill ``face_card[f]`` with the natural card of face f in p's hand that a meld or
    layoff uses (of two copies, the one taken this turn, which may not be discarded anyway)
    and ``jokers`` with p's jokers, obligation joker and taken jokers first.
    Returns (number of jokers, hand size, discardable cards, deadwood)."""
    return scan_cards(s, spec, p, face_card, jokers, face_card, face_card, True, False)


@njit(cache=True)
def table_view(s, spec, shown_card, face_up):
    """``face_up[f]``: table cards showing face f; ``shown_card[f]``: one of them (natural first)."""
    scan_cards(s, spec, -1, shown_card, shown_card, shown_card, face_up, False, True)


@njit(cache=True)
def scan_cards(s, spec, p, face_card, jokers, shown_card, face_up, hand, table):
    """One pass over the cards for :func:`hand_view` (with ``hand``; its arrays
    ``face_card``, ``jokers`` and its counts) and :func:`table_view` (with ``table``; its
    ``shown_card``, ``face_up``): a position's views in one loop instead of two."""
    if hand:
        face_card[:] = -1
    if table:
        shown_card[:] = -1
        face_up[:] = 0
    nj = 0
    size = 0
    free = 0
    deadwood = 0
    loc = s.loc   # the record's arrays and fields read once, not per card
    taken = s.taken
    shown = s.shown
    card_face = spec.card_face
    hand_value = spec.hand_value
    wild = s.wild_rank
    at = LOC_HAND + p if hand else -1
    for c in range(spec.num_cards):
        where = loc[c]
        if where == at:
            size += 1
            free += taken[c] == 0
            f = card_face[c]   # card_face_now, inlined
            if wild >= 0 and f < JOKER_FACE and f % NUM_RANKS == wild:
                f = JOKER_FACE
            deadwood += hand_value[f]
            if f == JOKER_FACE:
                jokers[nj] = c
                nj += 1
            elif face_card[f] < 0 or taken[c] != 0:
                face_card[f] = c
        elif where == LOC_TABLE and table:
            f = shown[c]
            face_up[f] += 1
            d = shown_card[f]
            if d < 0:
                shown_card[f] = c
            else:   # is_wild(d), inlined
                e = card_face[d]
                if e == JOKER_FACE or wild >= 0 and e % NUM_RANKS == wild:
                    shown_card[f] = c
    # order jokers: the obligation card, then taken ones, then the rest
    for a in range(nj):
        for b in range(a + 1, nj):
            ka = (0 if jokers[a] == s.obligation else 1) * 2 + (0 if taken[jokers[a]] else 1)
            kb = (0 if jokers[b] == s.obligation else 1) * 2 + (0 if taken[jokers[b]] else 1)
            if kb < ka:
                tmp = jokers[a]
                jokers[a] = jokers[b]
                jokers[b] = tmp
    return nj, size, free, deadwood


@njit(cache=True)
def others_faces(s, spec, p, shown_card):
    """Faces shown on melds founded by a seat other than ``p``: the table cards a regroup
    may detach (MR-9), now or after layoffs lengthen their melds."""
    bits = np.uint64(0)
    founder = s.m_founder
    meld_of = s.meld_of
    for f in range(JOKER_FACE):   # branch-free: the faces shown follow no pattern
        c = max(shown_card[f], 0)
        other = (shown_card[f] >= 0) & (founder[meld_of[c]] != p)
        bits |= np.uint64(other) << np.uint64(f)
    return bits


@njit(cache=True)
def hand_mask_bits(face_card):
    bits = np.uint64(0)
    for f in range(JOKER_FACE):
        bits |= np.uint64(face_card[f] >= 0) << np.uint64(f)
    return bits


@njit(cache=True)
def hand_counts(s, spec, p):
    """(hand size, cards that may be discarded) of seat ``p``: :func:`hand_view`'s counts
    without its arrays (German's mask asks for them where it builds no views)."""
    loc = s.loc
    taken = s.taken
    at = LOC_HAND + p
    size = 0
    free = 0
    for c in range(spec.num_cards):
        if loc[c] == at:
            size += 1
            if taken[c] == 0:
                free += 1
    return size, free


@njit(cache=True)
def popcount(x):
    """Set bits of a face mask: one POPCNT (the template tests run it per template)."""
    return _popcount(x)


# --------------------------------------------------------------------------------------
# resolving a placement into concrete cards


@njit(cache=True)
def run_remainder_ok(s, spec, m, removed):
    """Would run ``m`` stay valid with the cards flagged in ``removed`` detached? Every
    remaining segment must hold 3+ cards, one of them natural (MR-3, MR-5, MR-9)."""
    seg_len = 0
    seg_nat = 0
    left = 0
    for pos in range(s.m_lo[m], s.m_hi[m] + 2):
        c = s.m_cards[m, pos] if pos <= s.m_hi[m] else -1
        if c >= 0 and removed[c] == 0:
            seg_len += 1
            left += 1
            if c < spec.num_naturals:
                seg_nat += 1
        else:
            if seg_len > 0 and (seg_len < 3 or seg_nat == 0):
                return False
            seg_len = 0
            seg_nat = 0
    return left > 0


@njit(cache=True)
def set_remainder_ok(s, spec, m, removed):
    left = 0
    nat = 0
    for k in range(4):
        c = s.m_cards[m, k]
        if c >= 0 and removed[c] == 0:
            left += 1
            if c < spec.num_naturals:
                nat += 1
    return left >= 3 and nat > 0


@njit(cache=True)
def resolve_meld(s, spec, t, regroup, p, face_card, jokers, nj, shown_card, face_up,
                 used, decl, removed, need_natural):
    """Cards for template ``t`` (a new meld). Returns (cards used, hand cards used) with
    ``used``/``decl`` filled, or (-1, -1) if the meld cannot be made.

    Hand naturals are used where held; for ``regroup`` (MR-9) a missing face is then
    detached from an opponent-founded meld; otherwise a joker fills it, declared as that face
    (MR-5: not a face already face up). ``removed`` flags the detached table cards. With
    ``need_natural`` a meld of jokers alone cannot be made (MR-5, GE-3; Crazy Rummy's wilds
    may meld alone)."""
    n = 0
    n_hand = 0
    n_table = 0
    naturals = 0
    jused = 0
    for i in range(spec.t_len[t]):
        f = spec.t_faces[t, i]
        c = face_card[f]
        if c >= 0:
            used[n] = c
            decl[n] = f
            n += 1
            n_hand += 1
            naturals += 1
            continue
        if regroup:
            tc = shown_card[f]
            if tc >= 0 and s.m_founder[s.meld_of[tc]] != p and removed[tc] == 0:
                used[n] = tc
                decl[n] = f
                removed[tc] = 1
                n += 1
                n_table += 1
                if tc < spec.num_naturals:
                    naturals += 1
                continue
        if face_up[f] > 0 or jused >= nj:
            return -1, -1
        used[n] = jokers[jused]
        decl[n] = f
        jused += 1
        n += 1
        n_hand += 1
    if naturals == 0 and need_natural:
        return -1, -1
    if regroup:
        if n_table == 0 or n_hand == 0:
            return -1, -1
        for i in range(n):
            c = used[i]
            if s.loc[c] == LOC_TABLE:
                m = s.meld_of[c]
                ok = run_remainder_ok(s, spec, m, removed) if s.m_kind[m] == RUN else \
                    set_remainder_ok(s, spec, m, removed)
                if not ok:
                    return -1, -1
    return n, n_hand


@njit(cache=True)
def layoff_position(s, spec, m, f):
    """Meld slot index where face ``f`` would extend meld ``m``, or -1 (MR-3, MR-4, MR-9).
    An ace fitting both ends of a 2..K run goes high (the better credit)."""
    kind = s.m_kind[m]
    if kind == SET:
        if f % NUM_RANKS != s.m_rank[m] or s.m_cards[m, f // NUM_RANKS] >= 0:
            return -1
        return f // NUM_RANKS
    if kind != RUN or f // NUM_RANKS != s.m_suit[m]:
        return -1
    rank = f % NUM_RANKS
    hi = s.m_hi[m] + 1
    if hi <= spec.max_run_pos and hi % NUM_RANKS == rank and not (hi == ACE_HIGH_POS and s.m_lo[m] == 0):
        return hi
    lo = s.m_lo[m] - 1
    if lo >= spec.min_run_pos and lo == rank and not (lo == 0 and s.m_hi[m] == ACE_HIGH_POS):
        return lo
    return -1


@njit(cache=True)
def layoff_card(s, spec, m, f, face_card, jokers, nj, face_up):
    """The hand card that lays off face ``f`` onto meld ``m``, or -1."""
    if s.m_kind[m] == MELD_EMPTY or layoff_position(s, spec, m, f) < 0:
        return -1
    if face_card[f] >= 0:
        return face_card[f]
    if nj > 0 and face_up[f] == 0:
        return jokers[0]
    return -1


@njit(cache=True)
def end_face(s, m, end):
    """The face meld ``m`` could take at ``end`` (0..3): a missing suit of a set, or the card
    below (0) or above (1) a run; -1 if none. :func:`layoff_position` has the last word."""
    kind = s.m_kind[m]
    if kind == SET:
        return -1 if s.m_cards[m, end] >= 0 else end * NUM_RANKS + s.m_rank[m]
    if kind != RUN or end >= 2:
        return -1
    pos = s.m_lo[m] - 1 if end == 0 else s.m_hi[m] + 1
    if pos < 0 or pos > ACE_HIGH_POS:
        return -1
    return s.m_suit[m] * NUM_RANKS + pos % NUM_RANKS


@njit(cache=True)
def template_may_fit(tm, regroup, hand_bits, detachable, nj):
    """Face counts that rule most templates (faces ``tm``) out before :func:`resolve_meld`:
    too few of its faces in the hand (plus, for a regroup, detachable from other seats'
    melds) for the ``nj`` jokers to fill, no hand card, or for a regroup no table card.
    Scalars only, so the call costs nothing in the template loops."""
    avail = hand_bits | detachable if regroup else hand_bits
    if popcount(tm & ~avail) > nj or (tm & hand_bits) == 0 and nj == 0:
        return False
    return not regroup or (tm & detachable & ~hand_bits) != 0


@njit(cache=True)
def meld_buffers(spec, extra):
    """:func:`resolve_meld`'s ``used`` and ``decl`` (``MELD_WIDTH`` each) and ``removed``
    (zeroed, one per card), then ``extra`` more int16 entries: one allocation."""
    work = np.empty(2 * MELD_WIDTH + spec.num_cards + extra, np.int16)
    removed = work[2 * MELD_WIDTH:2 * MELD_WIDTH + spec.num_cards]
    removed[:] = 0
    return work[:MELD_WIDTH], work[MELD_WIDTH:2 * MELD_WIDTH], removed, \
        work[2 * MELD_WIDTH + spec.num_cards:]


@njit(cache=True)
def fitting_templates(spec, regroup, hand_bits, detachable, nj, require_face, out):
    """Write to ``out``, in increasing id, the templates :func:`template_may_fit` lets
    through (only those holding ``require_face``, if >= 0); returns how many. Without
    jokers every face of such a template is available (in the hand or, for a regroup,
    detachable), its lowest face among them, so only the ``by_low`` lists of the available
    faces are read: about a tenth of the table for a 10-card hand."""
    count = 0
    if require_face >= 0 or nj > 0:
        narrow = require_face >= 0
        n = spec.by_face_count[require_face] if narrow else spec.num_templates
        for k in range(n):
            t = spec.by_face[require_face, k] if narrow else k
            if template_may_fit(spec.t_mask[t], regroup, hand_bits, detachable, nj):
                out[count] = t
                count += 1
        return count
    avail = hand_bits | detachable if regroup else hand_bits
    while avail != 0:
        f = _lowbit(avail)
        avail &= avail - np.uint64(1)
        for k in range(spec.by_low_count[f]):
            t = spec.by_low[f, k]
            if not template_may_fit(spec.t_mask[t], regroup, hand_bits, detachable, nj):
                continue
            j = count   # insertion keeps the ids increasing, the full table's order
            while j > 0 and out[j - 1] > t:
                out[j] = out[j - 1]
                j -= 1
            out[j] = t
            count += 1
    return count


# --------------------------------------------------------------------------------------
# applying moves


@njit(cache=True)
def free_slot(s, spec):
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            return m
    return -1


@njit(cache=True)
def leave_hand(s, c):
    s.taken[c] = 0
    s.public[c] = 0
    if s.obligation == c:
        s.obligation = -1


@njit(cache=True)
def place_on_table(s, c, m, slot, face, p):
    if s.loc[c] != LOC_TABLE:
        s.owner[c] = p
        leave_hand(s, c)
    s.loc[c] = LOC_TABLE
    s.meld_of[c] = m
    s.shown[c] = face
    s.m_cards[m, slot] = c


@njit(cache=True)
def split_run(s, spec, m):
    """After cards left run ``m``, keep its first segment in ``m`` and move further
    segments to free slots (same founder)."""
    target = -1
    pos = s.m_lo[m]
    hi = s.m_hi[m]
    first = True
    while pos <= hi:
        if s.m_cards[m, pos] < 0:
            pos += 1
            continue
        start = pos
        while pos <= hi and s.m_cards[m, pos] >= 0:
            pos += 1
        end = pos - 1
        if first:
            s.m_lo[m] = start
            s.m_hi[m] = end
            first = False
            continue
        target = free_slot(s, spec)
        s.m_kind[target] = RUN
        s.m_suit[target] = s.m_suit[m]
        s.m_rank[target] = -1
        s.m_founder[target] = s.m_founder[m]
        s.m_lo[target] = start
        s.m_hi[target] = end
        for q in range(start, end + 1):
            c = s.m_cards[m, q]
            s.m_cards[target, q] = c
            s.m_cards[m, q] = -1
            s.meld_of[c] = target


@njit(cache=True)
def apply_meld(s, spec, t, used, decl, n):
    p = s.current
    m = free_slot(s, spec)
    # detach table cards first (MR-9), then re-form the melds they left
    touched = np.full(n, -1, np.int64)
    nt = 0
    for i in range(n):
        c = used[i]
        if s.loc[c] == LOC_TABLE:
            old = s.meld_of[c]
            for k in range(MELD_WIDTH):
                if s.m_cards[old, k] == c:
                    s.m_cards[old, k] = -1
            touched[nt] = old
            nt += 1
    s.m_kind[m] = spec.t_kind[t]
    s.m_suit[m] = spec.t_suit[t]
    s.m_rank[m] = spec.t_rank[t]
    s.m_lo[m] = spec.t_lo[t]
    s.m_hi[m] = spec.t_hi[t]
    s.m_founder[m] = p
    for i in range(n):
        place_on_table(s, used[i], m, spec.t_pos[t, i], decl[i], p)
    for i in range(nt):
        if s.m_kind[touched[i]] == RUN:
            split_run(s, spec, touched[i])
    s.placed_this_turn = 1


@njit(cache=True)
def apply_layoff(s, spec, m, f, c):
    slot = layoff_position(s, spec, m, f)
    if s.m_kind[m] == RUN:
        if slot < s.m_lo[m]:
            s.m_lo[m] = slot
        else:
            s.m_hi[m] = slot
    place_on_table(s, c, m, slot, f, s.current)
    s.placed_this_turn = 1


@njit(cache=True)
def hand_size_of(s, spec, p):
    n = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            n += 1
    return n


# --------------------------------------------------------------------------------------
# the legal-action mask


@njit(cache=True)
def can_clear(s, spec, scratch):
    """MR-7 dead-end test: can every card left in the current hand still be melded or laid
    off (cards taken from the discard pile this turn may not be discarded)? Depth-first
    over placements on copies in ``scratch``, at most ``MAX_CLEAR_DEPTH`` deep. Placements
    made in another order reach the same position, so each position is searched once
    (:func:`first_visit`). A position holding a card that no placement could ever take
    (:func:`all_may_be_placed`) is given up at once, and once the search has grown past
    ``CLEAR_CHECK_AFTER`` positions, it stops if some card cannot be placed even on its
    own (:func:`each_card_placeable`)."""
    levels = min(MAX_CLEAR_DEPTH, len(scratch) - 1)
    scratch[0] = s
    p = s.current
    # each placement takes a card from the hand: with no more cards than levels, the depth
    # limit cuts no search short, and a position is searched once whatever its depth
    size = hand_size_of(s, spec, p)
    limit_binds = size > levels
    levels = min(levels, size)
    n_templates = spec.num_templates
    n_place = 2 * n_templates + 4 * spec.max_melds  # melds, regroups, then four ends per meld
    cursor = np.zeros(levels + 1, np.int64)
    face_card = np.empty((levels + 1, JOKER_FACE), np.int16)
    jokers = np.empty((levels + 1, 8), np.int16)
    num_jokers = np.zeros(levels + 1, np.int64)
    shown_card = np.empty((levels + 1, JOKER_FACE), np.int16)
    face_up = np.empty((levels + 1, JOKER_FACE), np.int16)
    hand_bits = np.zeros(levels + 1, np.uint64)
    detachable = np.zeros(levels + 1, np.uint64)
    used, decl, removed, _ = meld_buffers(spec, 0)
    keys, depths = visited_table()
    stored = 0
    depth = 0
    while depth >= 0:
        cur = scratch[depth]
        if cursor[depth] == 0:
            nj = hand_view(cur, spec, p, face_card[depth], jokers[depth])[0]
            num_jokers[depth] = nj
            table_view(cur, spec, shown_card[depth], face_up[depth])
            hand_bits[depth] = hand_mask_bits(face_card[depth])
            detachable[depth] = others_faces(cur, spec, p, shown_card[depth])
            if depth >= levels or not all_may_be_placed(cur, spec, hand_bits[depth],
                                                        detachable[depth], nj):
                depth -= 1
                continue
        if cursor[depth] >= n_place:
            depth -= 1
            continue
        a = cursor[depth]
        cursor[depth] += 1
        nj = num_jokers[depth]
        if a < 2 * n_templates:
            t = a % n_templates
            regroup = a >= n_templates
            if not template_may_fit(spec.t_mask[t], regroup, hand_bits[depth], detachable[depth], nj):
                continue
            removed[:] = 0
            n, _ = resolve_meld(cur, spec, t, regroup, p, face_card[depth], jokers[depth], nj,
                                shown_card[depth], face_up[depth], used, decl, removed, True)
            if n < 0:
                continue
            scratch[depth + 1] = cur
            apply_meld(scratch[depth + 1], spec, t, used, decl, n)
        else:
            m = (a - 2 * n_templates) // 4
            f = end_face(cur, m, (a - 2 * n_templates) % 4)
            c = -1 if f < 0 else layoff_card(cur, spec, m, f, face_card[depth], jokers[depth],
                                             nj, face_up[depth])
            if c < 0:
                continue
            scratch[depth + 1] = cur
            apply_layoff(scratch[depth + 1], spec, m, f, c)
        nxt = scratch[depth + 1]
        if hand_size_of(nxt, spec, p) == 0:
            return True
        if depth + 1 < levels and first_visit(keys, depths, position_key(nxt, spec),
                                              depth + 1 if limit_binds else 0):
            stored += 1
            keys, depths = with_room(keys, depths, stored)
            if stored == CLEAR_CHECK_AFTER and not each_card_placeable(s, spec, scratch.copy()):
                return False
            depth += 1
            cursor[depth] = 0
    return False


@njit(cache=True)
def each_card_placeable(s, spec, scratch):
    """Necessary for :func:`can_clear`: can each card in the hand, on its own, be placed by
    some sequence of placements? Each in turn is made the obligation card of a copy of
    ``s`` and searched as in :func:`best_fit_reachable`, as deep as ``scratch`` allows (a
    sequence placing every card places this one after fewer placements)."""
    for c in range(spec.num_cards):
        if s.loc[c] != LOC_HAND + s.current:
            continue
        scratch[len(scratch) - 1] = s
        probe = scratch[len(scratch) - 1]
        probe.obligation = c
        if best_fit_reachable(probe, spec, scratch[: len(scratch) - 1], len(scratch) - 2, 1) == 0:
            return False
    return True


VIEW_WIDTH = 3 * JOKER_FACE + 8 + 3   # face_card, shown_card, face_up, jokers, (nj, size, free)


@njit(cache=True)
def views_into(s, spec, p, view):
    """Fill ``view`` (``VIEW_WIDTH`` int16) with the hand and table views of player ``p``
    (see hand_view, table_view) and return it. One array per position, so that a search
    builds a position's views once and hands them to every question about it
    (:func:`unpack_views` reads them)."""
    nj, size, free, _ = scan_cards(s, spec, p, view[:JOKER_FACE],
                                   view[3 * JOKER_FACE:3 * JOKER_FACE + 8],
                                   view[JOKER_FACE:2 * JOKER_FACE],
                                   view[2 * JOKER_FACE:3 * JOKER_FACE], True, True)
    view[VIEW_WIDTH - 3] = nj
    view[VIEW_WIDTH - 2] = size
    view[VIEW_WIDTH - 1] = free
    return view


@njit(cache=True)
def unpack_views(view):
    """(face_card, jokers, nj, size, free, shown_card, face_up) of a :func:`views_into` array."""
    return (view[:JOKER_FACE], view[3 * JOKER_FACE:3 * JOKER_FACE + 8],
            np.int64(view[VIEW_WIDTH - 3]), np.int64(view[VIEW_WIDTH - 2]),
            np.int64(view[VIEW_WIDTH - 1]), view[JOKER_FACE:2 * JOKER_FACE],
            view[2 * JOKER_FACE:3 * JOKER_FACE])


@njit(cache=True)
def new_views(s, spec):
    """:func:`views_into` a new array, for the current player."""
    return views_into(s, spec, s.current, np.empty(VIEW_WIDTH, np.int16))


@njit(cache=True)
def placement_candidates(s, spec, require_face, acts, n_hand, free_used, uses, placed):
    """Every meld, regroup and layoff the current player could make now, ignoring whether
    the turn could end afterwards. Per candidate: action id, hand cards used, discardable
    cards used, whether it uses the obligation card, and the faces it puts in a meld
    (bitmask). ``require_face`` >= 0 keeps only candidates holding that face. Returns the count."""
    return placement_candidates_of(s, spec, new_views(s, spec), require_face, False,
                                   np.uint64(0), acts, n_hand, free_used, uses, placed)


@njit(cache=True)
def placement_candidates_of(s, spec, view, require_face, regroups_only, regroup_faces, acts,
                            n_hand, free_used, uses, placed):
    """:func:`placement_candidates` with the position's views ``view`` (:func:`new_views`);
    with ``regroups_only`` the new melds from the hand are left out, and so are regroups of
    templates holding none of ``regroup_faces`` (the candidates :func:`may_enable` could
    accept; same order otherwise)."""
    p = s.current
    face_card, jokers, nj, size, free, shown_card, face_up = unpack_views(view)
    used, decl, removed, templates = meld_buffers(spec, spec.num_templates)
    hand_bits = hand_mask_bits(face_card)
    detachable = others_faces(s, spec, p, shown_card)
    narrow = require_face >= 0
    count = 0
    for regroup in range(2):
        if regroup == 1 and detachable == 0:
            break
        if regroup == 0 and regroups_only:
            continue
        n_templates = fitting_templates(spec, regroup, hand_bits, detachable, nj, require_face,
                                        templates)
        for k in range(n_templates):
            t = templates[k]
            if regroups_only and (spec.t_mask[t] & regroup_faces) == 0:
                continue
            if regroup:   # only a regroup detaches (and flags) table cards
                removed[:] = 0
            n, nh = resolve_meld(s, spec, t, regroup, p, face_card, jokers, nj,
                                 shown_card, face_up, used, decl, removed, True)
            if n < 0:
                continue
            acts[count] = (spec.a_regroup if regroup else spec.a_meld) + t
            n_hand[count] = nh
            free_used[count] = 0
            uses[count] = 0
            for i in range(n):
                c = used[i]
                if s.loc[c] == LOC_HAND + p and s.taken[c] == 0:
                    free_used[count] += 1
                if c == s.obligation:
                    uses[count] = 1
            placed[count] = spec.t_mask[t]
            count += 1
    for m in range(spec.max_melds):
        kind = s.m_kind[m]
        if kind == MELD_EMPTY:
            continue
        for end in range(4 if kind == SET else 2):   # a run has two ends (end_face)
            f = end_face(s, m, end)
            if f < 0 or narrow and f != require_face:
                continue
            c = layoff_card(s, spec, m, f, face_card, jokers, nj, face_up)
            if c < 0:
                continue
            acts[count] = spec.a_layoff + m * JOKER_FACE + f
            n_hand[count] = 1
            free_used[count] = 1 if s.taken[c] == 0 else 0
            uses[count] = 1 if c == s.obligation else 0
            placed[count] = np.uint64(1) << np.uint64(f)
            count += 1
    return count


@njit(cache=True)
def apply_placement(s, spec, a):
    """Play meld, regroup or layoff action ``a`` (resolved as in :func:`resolve_meld`)."""
    apply_placement_with(s, spec, new_views(s, spec), a)


@njit(cache=True)
def apply_placement_with(s, spec, view, a):
    """:func:`apply_placement`, ``view`` holding the views of this position (of ``s`` or of
    a copy of it: the search applies each step to a copy of a node whose views it has)."""
    p = s.current
    face_card, jokers, nj, size, free, shown_card, face_up = unpack_views(view)
    if a < spec.a_layoff:
        used, decl, removed, _ = meld_buffers(spec, 0)
        regroup = a >= spec.a_regroup
        t = a - (spec.a_regroup if regroup else spec.a_meld)
        n, _ = resolve_meld(s, spec, t, regroup, p, face_card, jokers, nj, shown_card,
                            face_up, used, decl, removed, True)
        apply_meld(s, spec, t, used, decl, n)
    else:
        m = (a - spec.a_layoff) // JOKER_FACE
        f = (a - spec.a_layoff) % JOKER_FACE
        apply_layoff(s, spec, m, f, layoff_card(s, spec, m, f, face_card, jokers, nj, face_up))


@njit(cache=True)
def can_end_after(s, spec, view, a, size_after, free_after, scratch):
    """MR-7: after placement ``a`` can the turn still end -- hand empty (High Camp), a card
    left that may be discarded, or the rest (all taken this turn) meldable in full?
    ``view``: the views of ``s``."""
    if size_after == 0 or free_after > 0:
        return True
    scratch[len(scratch) - 1] = s
    probe = scratch[len(scratch) - 1]
    apply_placement_with(probe, spec, view, a)
    return can_clear(probe, spec, scratch[: len(scratch) - 1])


@njit(cache=True)
def candidate_buffers(spec):
    """Arrays for :func:`placement_candidates`: room for every template twice (meld and
    regroup) and four layoff faces per meld slot. One allocation, cut in five (each
    allocation costs about as much as scanning the hand)."""
    n = 2 * spec.num_templates + 4 * spec.max_melds
    block = np.empty(5 * n, np.int64)
    return block[:n], block[n:2 * n], block[2 * n:3 * n], block[3 * n:4 * n], \
        block[4 * n:].view(np.uint64)


@njit(cache=True)
def obligation_fit(s, spec, view, acts, n_hand, free_used, uses, placed):
    """How the obligation card k can be placed right now: 2 by a placement keeping a card
    that may be discarded, or emptying the hand (the turn can end, MR-7.3); 1 only by
    placements that keep none; 0 not at all. ``view``: the views of ``s``; the candidate
    buffers are scratch."""
    k = s.obligation
    face = spec.card_face[k]
    count = placement_candidates_of(s, spec, view, face if face < JOKER_FACE else -1, False,
                                    np.uint64(0), acts, n_hand, free_used, uses, placed)
    size = view[VIEW_WIDTH - 2]
    free = view[VIEW_WIDTH - 1]
    fit = 0
    for i in range(count):
        if uses[i]:
            if size == n_hand[i] or free > free_used[i]:
                return 2
            fit = 1
    return fit


@njit(cache=True)
def related_faces(face):
    """Faces whose arrival on the table can give ``face`` a layoff spot: its suit
    neighbours, which extend a run up to it. (A set cannot take a fourth card and then
    ``face`` too.)"""
    bits = np.uint64(0)
    rank = face % NUM_RANKS
    suit = face // NUM_RANKS
    for d in (-1, 1):
        bits |= np.uint64(1) << np.uint64(suit * NUM_RANKS + (rank + d) % NUM_RANKS)
    return bits


@njit(cache=True)
def position_key(s, spec):
    """A 64-bit hash of a position within a turn: where every card off the table is, and the
    table melds as a set (each by founder, kind, and which card shows which face at which
    place). Placements made in another order reach positions that share it, whichever meld
    slots their melds came to occupy."""
    prime = np.uint64(1099511628211)
    h = np.uint64(14695981039346656037)
    loc = s.loc
    for c in range(spec.num_cards):   # a select, not a branch: where cards are follows no pattern
        mixed = (h ^ ((np.uint64(c) << np.uint64(8)) | np.uint64(loc[c] + 1))) * prime
        h = mixed if loc[c] != LOC_TABLE else h
    melds = np.uint64(0)
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            continue
        g = (np.uint64(14695981039346656037) ^ np.uint64(s.m_founder[m] * 4 + s.m_kind[m])) * prime
        for pos in range(MELD_WIDTH):
            c = s.m_cards[m, pos]
            if c >= 0:
                v = (np.uint64(pos) << np.uint64(16)) | (np.uint64(c) << np.uint64(8)) \
                    | np.uint64(s.shown[c] + 1)
                g = (g ^ v) * prime
        melds += mix64(g)  # a sum: the same whatever the melds' order
    key = mix64(h ^ melds)
    return key if key != np.uint64(0) else np.uint64(1)


@njit(cache=True)
def visited_table():
    """An empty set of positions for :func:`first_visit`: keys (0 = free) and depths."""
    return np.zeros(VISITED_SLOTS, np.uint64), np.zeros(VISITED_SLOTS, np.int8)


@njit(cache=True)
def with_room(keys, depths, stored):
    """The table of :func:`first_visit`, moved to one four times the size once ``stored``
    positions fill half of it (up to ``MAX_VISITED_SLOTS``), so that lookups stay short."""
    n = len(keys)
    if 2 * stored <= n or n >= MAX_VISITED_SLOTS:
        return keys, depths
    bigger_keys = np.zeros(4 * n, np.uint64)
    bigger_depths = np.zeros(4 * n, np.int8)
    for i in range(n):
        if keys[i] != 0:
            first_visit(bigger_keys, bigger_depths, keys[i], depths[i])
    return bigger_keys, bigger_depths


@njit(cache=True)
def first_visit(keys, depths, key, depth):
    """Record that a search reached position ``key`` after ``depth`` placements. False if it
    had been there after no more placements: all it can reach within the search's depth limit
    has been searched. A position finding no free slot near its hash is not remembered (the
    search stays exact, only slower)."""
    n = len(keys)
    i = np.int64(key % np.uint64(n))
    for _ in range(VISITED_PROBES):
        if keys[i] == key:
            if depths[i] <= depth:
                return False
            depths[i] = depth
            return True
        if keys[i] == 0:
            keys[i] = key
            depths[i] = depth
            return True
        i = (i + 1) % n
    return True


@njit(cache=True)
def feasible_faces(spec, face, avail, nj):
    """Faces of every template holding ``face`` that could be made from the faces in
    ``avail`` and ``nj`` jokers."""
    bits = np.uint64(0)
    for i in range(spec.by_face_count[face]):
        tm = spec.t_mask[spec.by_face[face, i]]
        if popcount(tm & ~avail) <= nj:
            bits |= tm
    return bits


@njit(cache=True)
def may_be_placed(s, spec, face, held, others, nj):
    """Necessary for a natural of ``face`` in the current hand to be placed this turn, with
    ``held`` the faces in the hand, ``others`` those on other seats' melds (cards laid off
    from the hand come from ``held``) and ``nj`` jokers in hand. It goes (a) into a new
    meld of such faces and jokers, (b) on a meld that takes it now, or (c) on a run that
    grew to end next to it (:func:`run_may_reach`); with a joker, anything may be."""
    avail = held | others
    if nj > 0 or feasible_faces(spec, face, avail, nj) != 0:
        return True
    for m in range(spec.max_melds):
        if s.m_kind[m] != MELD_EMPTY and layoff_position(s, spec, m, face) >= 0:
            return True
    return run_may_reach(s, spec, face, held)


@njit(cache=True)
def run_may_reach(s, spec, face, held):
    """Can a run come to end next to ``face`` when no meld with ``face`` can be made (and
    no joker stands in)? Only by laying off a hand card of a suit neighbour on a table run
    ending just behind it. A run reaching the neighbour any other way holds two faces in a
    row next to ``face`` that are in the hand or detachable, which with ``face`` make a
    meld (MR-3); table runs only lose cards at their ends or split (MR-9), never coming
    closer. An ace sits at either end of the ranks."""
    suit = face // NUM_RANKS
    rank = face % NUM_RANKS
    for q in (rank, ACE_HIGH_POS):
        if q == ACE_HIGH_POS and rank != 0:
            continue
        for d in (-1, 1):
            g = q + d
            if 0 <= g <= ACE_HIGH_POS and (held >> np.uint64(suit * NUM_RANKS + g % NUM_RANKS)) \
                    & np.uint64(1) and table_run_end(s, spec, suit, g + d, d):
                return True
    return False


@njit(cache=True)
def table_run_end(s, spec, suit, pos, d):
    """Is there a run of ``suit`` on the table ending at position ``pos``, on the side away
    from direction ``d`` (its high end for ``d`` = -1, its low end for ``d`` = 1)?"""
    for m in range(spec.max_melds):
        if s.m_kind[m] == RUN and s.m_suit[m] == suit and \
                (s.m_hi[m] == pos if d < 0 else s.m_lo[m] == pos):
            return True
    return False


@njit(cache=True)
def all_may_be_placed(s, spec, hand_bits, detachable, nj):
    """:func:`may_be_placed` for every natural face in the hand (``hand_bits``)."""
    for f in range(JOKER_FACE):
        if (hand_bits >> np.uint64(f)) & np.uint64(1) and \
                not may_be_placed(s, spec, f, hand_bits, detachable, nj):
            return False
    return True


@njit(cache=True)
def meld_faces(s, m):
    bits = np.uint64(0)
    for pos in range(MELD_WIDTH):
        c = s.m_cards[m, pos]
        if c >= 0:
            bits |= np.uint64(1) << np.uint64(s.shown[c])
    return bits


@njit(cache=True)
def regroup_sources(s, spec, p, face, held, others, nj):
    """Faces shown on the melds of other seats that a regroup placing ``face`` (a natural)
    may need to detach from, now or after other steps: melds holding a face of a template
    with ``face`` that the hand (faces ``held``, ``nj`` jokers) and those melds (faces
    ``others``) could complete, closed over runs (detaching a run's end card by one regroup
    frees its neighbour for the next, MR-9)."""
    avail = held | others
    want = feasible_faces(spec, face, avail, nj) & others
    sources = np.uint64(0)
    done = np.zeros(spec.max_melds, np.bool_)
    grown = True
    while grown:
        grown = False
        for m in range(spec.max_melds):
            if done[m] or s.m_kind[m] == MELD_EMPTY or s.m_founder[m] == p:
                continue
            faces = meld_faces(s, m)
            if (faces & want) == 0:
                continue
            done[m] = True
            grown = True
            sources |= faces
            if s.m_kind[m] == RUN:
                for f in range(JOKER_FACE):
                    if (faces >> np.uint64(f)) & np.uint64(1):
                        want |= feasible_faces(spec, f, avail, nj) & others
    return sources


@njit(cache=True)
def may_enable(s, spec, a, placed, joker, related, sources):
    """Can placement ``a`` (not using the obligation card k) be a needed step towards
    placing k (MR-7.1)? Only these can:

    - a layoff giving k a spot: a suit neighbour of k at a run's end (for a joker, any
      layoff opens a spot);
    - a layoff on, or a regroup from, another seat's meld a regroup with k may need
      (``sources``, see :func:`regroup_sources`): it changes which of its cards can be
      detached (MR-9). For a joker, every regroup.

    A new meld from the hand, or a regroup, that would give k a spot can take k itself
    (one longer run, same cards); every other placement only removes hand cards and joker
    faces, so it can be left out, or played after k: leaving it out keeps every card that
    may be discarded. (Cards taken this turn that must be placed before the turn ends are
    the business of :func:`can_clear`, see :func:`obligation_reachable`.)"""
    if a >= spec.a_layoff:
        m = (a - spec.a_layoff) // JOKER_FACE
        if (placed & related) != 0:
            return True
        return s.m_founder[m] != s.current and (meld_faces(s, m) & sources) != 0
    if a >= spec.a_regroup:
        return joker or (spec.t_mask[a - spec.a_regroup] & sources) != 0
    return False


@njit(cache=True)
def enabling_steps(s, spec, view, joker, related, sources, steps, acts, n_hand, free_used, uses,
                   placed):
    """Fill ``steps`` with the placements that :func:`may_enable` the obligation card now
    (``view``: the views of ``s``; the candidate buffers are scratch); returns how many. New
    melds from the hand never do, nor regroups of templates without a ``sources`` face when
    k is a natural, so those are not enumerated."""
    count = placement_candidates_of(s, spec, view, -1, True,
                                    ~np.uint64(0) if joker else sources,
                                    acts, n_hand, free_used, uses, placed)
    n = 0
    for i in range(count):
        if not uses[i] and may_enable(s, spec, acts[i], placed[i], joker, related, sources):
            steps[n] = acts[i]
            n += 1
    return n


@njit(cache=True)
def best_fit_reachable(s, spec, scratch, levels, enough):
    """The best :func:`obligation_fit` of the obligation card k over the positions that at
    most ``levels`` placements which :func:`may_enable` k reach, each searched once
    (depth-first on the top ``levels + 1`` records of ``scratch``); it stops once a
    position fits ``enough``. The other placements are left out: k can be placed without
    them just as well (see may_enable), and leaving them out keeps every card that may be
    discarded. Each node's views are built once (row ``depth`` of ``views``) and serve its
    fit, its steps and the placements applied to its copies."""
    acts, n_hand, free_used, uses, placed = candidate_buffers(spec)
    root = new_views(s, spec)
    best = obligation_fit(s, spec, root, acts, n_hand, free_used, uses, placed)
    # each step takes a card from the hand and k stays: with no more steps left than levels,
    # the depth limit cuts no search short (as in can_clear)
    steps_left = hand_size_of(s, spec, s.current) - 1
    limit_binds = steps_left > levels
    levels = min(levels, steps_left)
    if best >= enough or levels <= 0:
        return best
    face = spec.card_face[s.obligation]
    joker = face == JOKER_FACE
    related = ~np.uint64(0) if joker else related_faces(face)
    sources = np.uint64(0)
    if not joker:
        face_card, jokers, nj, size, free, shown_card, face_up = unpack_views(root)
        held = hand_mask_bits(face_card)
        sources = regroup_sources(s, spec, s.current, face, held,
                                  others_faces(s, spec, s.current, shown_card), nj)
        # no regroup can ever take k: only a suit neighbour from the hand (or a joker
        # standing for one) laid off on a run can give k a spot
        if sources == 0 and nj == 0 and (held & related) == 0:
            return best
    base = len(scratch) - 1 - levels
    n_acts = len(acts)   # the steps of each level and the views of each node: one allocation
    block = np.empty(levels * n_acts + (levels + 1) * VIEW_WIDTH, np.int16)
    steps = block[:levels * n_acts].reshape((levels, n_acts))
    views = block[levels * n_acts:].reshape((levels + 1, VIEW_WIDTH))
    counters = np.zeros(2 * levels, np.int64)
    count = counters[:levels]
    cursor = counters[levels:]
    count[0] = enabling_steps(s, spec, root, joker, related, sources, steps[0], acts, n_hand,
                              free_used, uses, placed)
    if count[0] == 0:   # nothing can prepare k: the search would visit no position
        return best
    views[0] = root
    keys, depths = visited_table()
    stored = 0
    scratch[base] = s
    depth = 0
    while depth >= 0:
        if cursor[depth] >= count[depth]:
            depth -= 1
            continue
        a = steps[depth, cursor[depth]]
        cursor[depth] += 1
        scratch[base + depth + 1] = scratch[base + depth]
        nxt = scratch[base + depth + 1]
        apply_placement_with(nxt, spec, views[depth], a)
        if not first_visit(keys, depths, position_key(nxt, spec), depth + 1 if limit_binds else 0):
            continue
        stored += 1
        keys, depths = with_room(keys, depths, stored)
        view = views_into(nxt, spec, nxt.current, views[depth + 1])
        best = max(best, obligation_fit(nxt, spec, view, acts, n_hand, free_used, uses, placed))
        if best >= enough:
            return best
        if depth + 1 < levels:
            depth += 1
            cursor[depth] = 0
            count[depth] = enabling_steps(nxt, spec, view, joker, related, sources, steps[depth],
                                          acts, n_hand, free_used, uses, placed)
    return best


@njit(cache=True)
def fit_bits(s, spec, p):
    """One scan of the cards for :func:`face_fits_now`: (hand size, cards that may be
    discarded, jokers, jokers taken this turn, natural faces held, those that may be
    discarded, faces up on the table) of seat ``p``'s hand and the table. A card of the
    wild rank counts as a joker, as in :func:`hand_view`."""
    size = 0
    free = 0
    nj_taken = 0
    nj = 0
    held = np.uint64(0)
    free_bits = np.uint64(0)
    up = np.uint64(0)
    loc = s.loc
    shown = s.shown
    taken = s.taken
    at = LOC_HAND + p
    for c in range(spec.num_cards):   # branch-free: where the cards are follows no pattern
        up |= np.uint64(loc[c] == LOC_TABLE) << np.uint64(max(shown[c], 0))
        in_hand = loc[c] == at
        g = card_face_now(s, spec, c)
        free_card = in_hand & (taken[c] == 0)
        joker = in_hand & (g == JOKER_FACE)
        size += in_hand
        free += free_card
        nj += joker
        nj_taken += joker & (taken[c] != 0)
        natural = np.uint64(in_hand & (g != JOKER_FACE)) << np.uint64(g)
        held |= natural
        free_bits |= natural if free_card else np.uint64(0)
    return size, free, nj, nj_taken, held, free_bits, up


@njit(cache=True)
def fits_now_possible(s, spec):
    """Whether :func:`face_fits_now` may answer for this hand: one deck, no wild rank."""
    return spec.num_naturals <= NUM_RANKS * 4 and s.wild_rank < 0


@njit(cache=True)
def face_fits_now(s, spec, f, size, free, nj, nj_taken, held, free_bits, up):
    """:func:`obligation_fits_now` for a natural k of face ``f`` taken this turn, the hand
    and table given by the counts and bitmasks of :func:`fit_bits` (k in the hand). Only
    the table is read from ``s``, so the draw phase asks it of a take without making the
    take (:func:`legal_mask_exact`)."""
    # a layoff of k uses k alone (taken this turn)
    if free > 0 or size == 1:
        for m in range(spec.max_melds):
            if s.m_kind[m] != MELD_EMPTY and layoff_position(s, spec, m, f) >= 0:
                return True
    for i in range(spec.by_face_count[f]):
        t = spec.by_face[f, i]
        tm = spec.t_mask[t]
        n = spec.t_len[t]
        if popcount(tm) != n:
            continue
        missing = tm & ~held
        if (missing & up) != 0:
            continue
        need = popcount(missing)
        if need > nj:
            continue
        free_used = popcount(tm & free_bits) + max(0, need - nj_taken)
        if free > free_used or size == n:
            return True
    return False


@njit(cache=True)
def obligation_fits_now(s, spec):
    """Sufficient for :func:`obligation_fit` == 2, from one scan of the cards and face
    bitmasks, no allocation: the obligation card k (a natural) can be laid off now keeping a
    card that may be discarded, or melded now from the hand (no regroup) keeping one or
    emptying the hand. It reads the same choices :func:`placement_candidates` and
    :func:`resolve_meld` make: k is its face's only card (one deck), a missing face is
    filled by a joker declared as it unless that face is face up, jokers taken this turn
    are used before the others. False (decide by the search) for a joker k, two decks, or
    a template naming a face twice."""
    k = s.obligation
    if k < 0 or not fits_now_possible(s, spec):
        return False
    f = spec.card_face[k]
    if f == JOKER_FACE or s.taken[k] == 0:
        return False
    size, free, nj, nj_taken, held, free_bits, up = fit_bits(s, spec, s.current)
    return face_fits_now(s, spec, f, size, free, nj, nj_taken, held, free_bits, up)


@njit(cache=True)
def can_show(g, held, nj, up):
    """Can the hand put face ``g`` on the table: a natural of it held, or a joker declared
    as it (not while ``g`` is face up, MR-5)?"""
    one = np.uint64(1)
    return (held >> np.uint64(g)) & one != 0 or nj > 0 and (up >> np.uint64(g)) & one == 0


@njit(cache=True)
def ever_loose(s, spec, p, held, nj, up):
    """Faces of the cards on other seats' melds that some sequence of placements this turn
    could detach (MR-9), over-approximated. What stays of a meld after a detachment is a
    meld, made of its cards now and cards laid off since: faces the hand can show
    (:func:`can_show`), on a run only in a chain from one of its ends (a detached card's
    face is up for good, so the run never fills its own gaps again). So a set of four, or
    of three whose fourth face the hand can show; a run card with three positions on one
    side of it, counting the chain the hand could add beyond that end."""
    loose = np.uint64(0)
    one = np.uint64(1)
    for m in range(spec.max_melds):
        kind = s.m_kind[m]
        if kind == MELD_EMPTY or s.m_founder[m] == p:
            continue
        if kind == SET:   # slot = suit
            n = 0
            missing = -1
            for suit in range(4):
                if s.m_cards[m, suit] >= 0:
                    n += 1
                else:
                    missing = suit * NUM_RANKS + s.m_rank[m]
            if n == 4 or n == 3 and can_show(missing, held, nj, up):
                loose |= meld_faces(s, m)
            continue
        suit = s.m_suit[m]
        lo = s.m_lo[m]
        hi = s.m_hi[m]
        below = 0
        while lo - below - 1 >= spec.min_run_pos and \
                can_show(suit * NUM_RANKS + (lo - below - 1) % NUM_RANKS, held, nj, up):
            below += 1
        above = 0
        while hi + above + 1 <= spec.max_run_pos and \
                can_show(suit * NUM_RANKS + (hi + above + 1) % NUM_RANKS, held, nj, up):
            above += 1
        for pos in range(lo, hi + 1):
            c = s.m_cards[m, pos]
            if c >= 0 and (pos - lo + below >= 3 or hi - pos + above >= 3):
                loose |= one << np.uint64(s.shown[c])
    return loose


@njit(cache=True)
def face_ever_fits(s, spec, p, f, held, nj, up):
    """Necessary for a natural obligation card k of face ``f`` in ``p``'s hand (one deck, no
    wild rank) to be placed by any sequence of placements this turn (MR-7.1), from bitmasks
    (``held``: natural faces in the hand, k's among them; ``nj`` jokers; ``up``: faces up on
    the table) and the table in ``s``, without a copy of the position: the draw phase asks
    it of a take without making the take. Its no spares the reachability search, most of
    whose questions in random play end in no. Along a turn the hand only loses cards and
    faces only come up (MR-5: no joker is taken back or re-declared), so
    a card placed later shows a face the hand can show now (:func:`can_show`), and a table
    card it uses is one that can be detached (:func:`ever_loose`). k goes

    - on a set of its rank (one on the table now; a new one is a template with k below);
    - on a run of its suit that grows to its side: the positions between the run's end and
      k are faces the hand can show;
    - into a new meld, or a run made this turn then laid off on: then a template holding k
      (three consecutive faces of that run with k) has each other face held, detachable, or
      a joker's (not up; no more of them than jokers).

    A joker on the table showing k's face is left to the search (True)."""
    one = np.uint64(1)
    if (up >> np.uint64(f)) & one:
        return True
    rank = f % NUM_RANKS
    suit = f // NUM_RANKS
    for m in range(spec.max_melds):
        kind = s.m_kind[m]
        if kind == SET and s.m_rank[m] == rank:
            return True
        if kind != RUN or s.m_suit[m] != suit:
            continue
        for pos in (rank, ACE_HIGH_POS if rank == 0 else -1):
            if pos < spec.min_run_pos or pos > spec.max_run_pos:
                continue
            a, b = (s.m_hi[m] + 1, pos) if pos > s.m_hi[m] else (pos + 1, s.m_lo[m])
            gap = True
            for q in range(a, b):
                if not can_show(suit * NUM_RANKS + q % NUM_RANKS, held, nj, up):
                    gap = False
                    break
            if gap:
                return True
    loose = ever_loose(s, spec, p, held, nj, up)
    for i in range(spec.by_face_count[f]):
        tm = spec.t_mask[spec.by_face[f, i]]
        rest = tm & ~held & ~loose
        if popcount(tm) != spec.t_len[spec.by_face[f, i]] or \
                (rest & up) == 0 and popcount(rest) <= nj:
            return True
    return False


@njit(cache=True)
def obligation_ever_fits(s, spec):
    """:func:`face_ever_fits` of the pending obligation card k: False only where
    :func:`obligation_reachable` is False. True (decide by the search) for a joker k, two
    decks or a wild rank."""
    k = s.obligation
    if k < 0 or not fits_now_possible(s, spec):
        return True
    f = spec.card_face[k]
    if f == JOKER_FACE:
        return True
    size, free, nj, nj_taken, held, free_bits, up = fit_bits(s, spec, s.current)
    return face_ever_fits(s, spec, s.current, f, held, nj, up)


@njit(cache=True)
def obligation_reachable(s, spec, scratch, fast=True):
    """MR-7.1 exactly: can the pending obligation card k still be placed this turn by some
    sequence of placements, leaving a way to end the turn (MR-7.3)? Either

    - k is placed and a card that may be discarded is kept (or the hand is emptied), after
      at most ``MAX_REACH_DEPTH`` placements that may enable it (:func:`best_fit_reachable`);
    - or k can be placed, but only by giving up every card that may be discarded: then
      every card in the hand must be placed this turn, k among them (:func:`can_clear`).

    With ``fast`` a position where k fits now (:func:`obligation_fits_now`, most of them)
    is answered without the search, and so is one where no sequence of placements could
    place it (:func:`obligation_ever_fits`); ``fast=False`` always searches (the tests'
    reference)."""
    if fast and obligation_fits_now(s, spec):
        return True
    if fast and not obligation_ever_fits(s, spec):
        return False
    fit = best_fit_reachable(s, spec, scratch, min(MAX_REACH_DEPTH, len(scratch) - 1), 2)
    return fit == 2 or fit == 1 and can_clear(s, spec, scratch)


@njit(cache=True)
def placement_mask(s, spec, mask, scratch, check_end, fast=True):
    """Unmask the meld, regroup and layoff actions of the current player; returns how many.

    With ``check_end`` (play phase) each must leave a way to end the turn. While a deep-draw
    obligation is pending (MR-7.1) a placement must use the obligation card, or leave it
    placeable by some later sequence of placements (:func:`obligation_reachable`)."""
    acts, n_hand, free_used, uses, placed = candidate_buffers(spec)
    view = new_views(s, spec)
    count = placement_candidates_of(s, spec, view, -1, False, np.uint64(0), acts, n_hand,
                                    free_used, uses, placed)
    size = view[VIEW_WIDTH - 2]
    free = view[VIEW_WIDTH - 1]
    k = s.obligation
    legal = 0
    for i in range(count):
        if k >= 0 and not uses[i]:
            scratch[len(scratch) - 1] = s
            probe = scratch[len(scratch) - 1]
            apply_placement_with(probe, spec, view, acts[i])
            if not obligation_reachable(probe, spec, scratch[: len(scratch) - 1], fast):
                continue
        elif check_end and not can_end_after(s, spec, view, acts[i], size - n_hand[i],
                                             free - free_used[i], scratch):
            continue
        mask[acts[i]] = 1
        legal += 1
    return legal


@njit(cache=True)
def take_cards(s, depth):
    """Move the discard card at ``depth`` (0 = top) and all above it to the current hand."""
    p = s.current
    start = s.discard_len - 1 - depth
    for i in range(start, s.discard_len):
        c = s.discard[i]
        s.loc[c] = LOC_HAND + p
        s.taken[c] = 1
        s.public[c] = 1
    card = s.discard[start]
    s.discard_len = start
    s.obligation = card if depth > 0 else -1
    s.phase = PHASE_PLAY


@njit(cache=True)
def take_mask(s, spec, mask, scratch, fast):
    """Unmask the discard pile's takes of the draw phase (the top card always)."""
    # A card k taken deep must be placed this turn (MR-7.1). A cheap necessary test
    # first (may_be_placed, with the cards taken with k in the hand); then, with
    # ``fast``, obligation_fits_now (yes) and obligation_ever_fits (no) of the take from
    # bitmasks that follow the pile down (the cards above k and k join the hand, taken);
    # only then is the take made on a copy and searched.
    p = s.current
    size, free, nj, nj_taken, held, free_bits, up = fit_bits(s, spec, p)
    others = np.uint64(0)   # may_be_placed's faces on other seats' melds
    loc = s.loc
    meld_of = s.meld_of
    shown = s.shown
    founder = s.m_founder
    for c in range(spec.num_cards):   # branch-free over the cards (-1 off the table)
        other = (loc[c] == LOC_TABLE) & (founder[max(meld_of[c], 0)] != p)
        others |= np.uint64(other) << np.uint64(max(shown[c], 0))
    probe = fast and fits_now_possible(s, spec)
    for depth in range(s.discard_len):
        c = s.discard[s.discard_len - 1 - depth]
        f = card_face_now(s, spec, c)
        size += 1
        if f == JOKER_FACE:
            nj += 1
            nj_taken += 1
        else:
            held |= np.uint64(1) << np.uint64(f)
        if depth == 0:
            mask[spec.a_take + c] = 1
            continue
        if f != JOKER_FACE and not may_be_placed(s, spec, f, held, others, nj):
            continue
        if probe and f != JOKER_FACE:
            if face_fits_now(s, spec, f, size, free, nj, nj_taken, held, free_bits, up):
                mask[spec.a_take + c] = 1
                continue
            if not face_ever_fits(s, spec, p, f, held, nj, up):
                continue
        scratch[len(scratch) - 1] = s
        after = scratch[len(scratch) - 1]
        take_cards(after, depth)
        # obligation_fits_now and obligation_ever_fits of ``after`` are what the probes
        # just answered (for a natural k)
        if obligation_reachable(after, spec, scratch[: len(scratch) - 1], False):
            mask[spec.a_take + c] = 1


@njit(cache=True)
def legal_mask(s, spec, mask, scratch):
    """Write the exact legal-action mask of game ``s`` into ``mask`` (int8, zeroed here)."""
    legal_mask_exact(s, spec, mask, scratch, True)


@njit(cache=True)
def legal_mask_full(s, spec, mask, scratch):
    """:func:`legal_mask` without its shortcuts (every deep-draw question searched in full):
    the reference the tests hold the mask to (tests/test_mask_fast_paths.py)."""
    legal_mask_exact(s, spec, mask, scratch, False)


@njit(cache=True)
def legal_mask_exact(s, spec, mask, scratch, fast):
    """:func:`legal_mask`; ``fast`` takes the shortcuts of :func:`obligation_reachable`."""
    mask[:] = 0
    phase = s.phase
    if phase == PHASE_DRAW:
        mask[spec.a_draw] = 1
        take_mask(s, spec, mask, scratch, fast)
        return
    if phase == PHASE_RESPONSE:
        mask[spec.a_done] = 1
        placement_mask(s, spec, mask, scratch, False, fast)
        return
    if phase != PHASE_PLAY:
        return
    placement_mask(s, spec, mask, scratch, True, fast)
    if s.obligation >= 0:
        return
    # one scan of the cards: hand size, deadwood and the faces that may be discarded
    at = LOC_HAND + s.current
    loc = s.loc
    taken = s.taken
    card_face = spec.card_face
    hand_value = spec.hand_value
    size = 0
    deadwood = 0
    discardable = np.uint64(0)   # bit f: a card of face f (52 = joker) not taken this turn
    for c in range(spec.num_cards):   # branch-free: which cards are held follows no pattern
        held = loc[c] == at
        f = card_face[c]
        size += held
        deadwood += held * hand_value[f]
        discardable |= np.uint64(held & (taken[c] == 0)) << np.uint64(f)
    if discardable != 0 and size == 1:
        mask[spec.a_base_camp] = 1
        return
    while discardable != 0:
        f = _lowbit(discardable)
        discardable &= discardable - np.uint64(1)
        mask[spec.a_discard + f] = 1
        if deadwood - hand_value[f] <= spec.knock_limit:
            mask[spec.a_knock + f] = 1


# --------------------------------------------------------------------------------------
# hand end and scoring


@njit(cache=True)
def score_hand(s, spec, end_kind, ender):
    """MR-8, MR-12 ... MR-14: score the hand as it stands, then deal the next hand or end."""
    P = spec.num_players
    credit = np.zeros(P, np.int64)
    deadwood = np.zeros(P, np.int64)
    for m in range(spec.max_melds):
        for k in range(MELD_WIDTH):
            c = s.m_cards[m, k]
            if c >= 0:
                value = spec.rank_credit[s.m_rank[m]] if s.m_kind[m] == SET else spec.run_credit[k]
                credit[s.owner[c]] += value
    for c in range(spec.num_cards):
        if s.loc[c] >= LOC_HAND:
            deadwood[s.loc[c] - LOC_HAND] += spec.hand_value[spec.card_face[c]]
    sp = credit - deadwood
    winner = -1
    best = sp.max()
    leaders = 0
    for p in range(P):
        if sp[p] == best:
            leaders += 1
            winner = p
    if leaders > 1:
        winner = -1
        if end_kind != END_EXHAUSTED:  # MR-12: a tie goes to a player who did not end the hand
            for p in range(P):
                if sp[p] == best and p != ender:
                    winner = p
                    break
    bonus = np.zeros(P, np.int64)
    kinds = 0
    if end_kind == END_BASE_CAMP or end_kind == END_HIGH_CAMP:
        amount = spec.base_bonus if end_kind == END_BASE_CAMP else spec.high_bonus
        kinds |= BONUS_BASE if end_kind == END_BASE_CAMP else BONUS_HIGH
        if s.placed_before[ender] == 0:
            amount += spec.summit_bonus
            kinds |= BONUS_SUMMIT
        bonus[winner if spec.bonus_to_winner else ender] += amount
    elif end_kind == END_KNOCK:
        other = (ender + 1) % P
        if deadwood[other] <= deadwood[ender] and credit[other] >= credit[ender]:
            kinds |= BONUS_UNDERCUT
            bonus[winner if spec.bonus_to_winner else other] += spec.undercut_bonus
    for p in range(P):
        s.h_credit[p] = credit[p]
        s.h_deadwood[p] = deadwood[p]
        s.h_sp[p] = sp[p]
        s.h_bonus[p] = bonus[p]
        s.h_points[p] = sp[p] + bonus[p]
        s.scores[p] += sp[p] + bonus[p]
    s.h_winner = winner
    s.h_end_kind = end_kind
    s.h_ender = ender
    s.h_bonus_kinds = kinds
    s.end_kind = end_kind
    s.ender = ender
    if winner >= 0 and s.scores[winner] >= spec.target_score:
        s.game_winner = winner
        s.phase = PHASE_GAME_OVER
        return EVENT_GAME_OVER
    if winner >= 0:
        s.dealer = winner  # MR-6: the hand winner deals next; an exhausted tie keeps the dealer
    if spec.episode_game:
        s.hand_no += 1
        shuffle_deck(s, spec)
        deal(s, spec)
    else:
        s.phase = PHASE_HAND_OVER
    return EVENT_HAND_OVER


@njit(cache=True)
def end_turn(s, spec):
    """A face-up discard ended the turn: next player, or an exhausted hand (MR-11)."""
    p = s.current
    for c in range(spec.num_cards):
        s.taken[c] = 0
    if s.placed_this_turn:
        s.placed_before[p] = 1
    s.placed_this_turn = 0
    s.obligation = -1
    s.turn += 1
    if s.stock_ptr >= s.stock_len or s.turn >= spec.max_turns:
        return score_hand(s, spec, END_EXHAUSTED, p)
    s.current = (p + 1) % spec.num_players
    s.phase = PHASE_DRAW
    return EVENT_NONE


@njit(cache=True)
def hand_ended(s, spec, kind):
    """Knock or camp: the response phase (MR-10) or straight to scoring."""
    p = s.current
    for c in range(spec.num_cards):
        s.taken[c] = 0
    s.obligation = -1
    s.end_kind = kind
    s.ender = p
    if kind == END_KNOCK or spec.camp_respond:
        s.phase = PHASE_RESPONSE
        s.current = (p + 1) % spec.num_players
        return EVENT_NONE
    return score_hand(s, spec, kind, p)


@njit(cache=True)
def discard_card_of_face(s, spec, f):
    p = s.current
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and spec.card_face[c] == f and s.taken[c] == 0:
            return c
    return -1


@njit(cache=True)
def apply_action(s, spec, a):
    """Play legal action ``a`` for the current player; returns an EVENT_* code."""
    p = s.current
    if a == spec.a_draw:
        draw_stock(s, p)
        s.phase = PHASE_PLAY
        return EVENT_NONE
    if spec.a_take <= a < spec.a_take + spec.num_cards:
        c = a - spec.a_take
        for depth in range(s.discard_len):
            if s.discard[s.discard_len - 1 - depth] == c:
                take_cards(s, depth)
                break
        return EVENT_NONE
    if spec.a_meld <= a < spec.a_discard:
        apply_placement(s, spec, a)
    elif spec.a_discard <= a < spec.a_knock:
        c = discard_card_of_face(s, spec, a - spec.a_discard)
        leave_hand(s, c)
        s.loc[c] = LOC_DISCARD
        s.discard[s.discard_len] = c
        s.discard_len += 1
        return end_turn(s, spec)
    elif spec.a_knock <= a < spec.a_base_camp:
        c = discard_card_of_face(s, spec, a - spec.a_knock)
        leave_hand(s, c)
        s.loc[c] = LOC_FACEDOWN
        return hand_ended(s, spec, END_KNOCK)
    elif a == spec.a_base_camp:
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + p:
                leave_hand(s, c)
                s.loc[c] = LOC_FACEDOWN
        return hand_ended(s, spec, END_BASE_CAMP)
    elif a == spec.a_done:
        return score_hand(s, spec, s.end_kind, s.ender)
    # a placement: High Camp if it emptied the hand in the play phase (MR-7)
    if s.phase == PHASE_PLAY and hand_size_of(s, spec, p) == 0:
        return hand_ended(s, spec, END_HIGH_CAMP)
    return EVENT_NONE


@njit(cache=True)
def next_hand(s, spec):
    """From a finished hand (episode = hand) deal the next hand of the same game."""
    s.hand_no += 1
    shuffle_deck(s, spec)
    deal(s, spec)
