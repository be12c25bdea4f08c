"""Gin with ``openspiel_compatible=True`` and OpenSpiel's ``gin_rummy``: the move mapping.

The card, meld and action mapping of docs/gin_rummy.md ("Action mapping"), shared by the
differential test (tests/test_gin_openspiel.py) and the ``openspiel_simple`` agent
(agents/openspiel_bot.py). Needs open_spiel (``pip install -e ".[peers]"``) only for the
meld table, which is read from OpenSpiel's own action names.

OpenSpiel cards are ``suit * 13 + rank`` with suits s c d h (ours C D H S). OpenSpiel's
player 0 is our non-dealer, its player 1 our dealer. A knock is one action of ours
(``knock c``) and two of OpenSpiel's (``Knock``, then the discard ``c`` in its knock phase).
"""

from __future__ import annotations

from functools import lru_cache

from .core import gin as K
from .variants.gin import gin_variant

OS_DRAW_UP, OS_DRAW_STOCK, OS_PASS, OS_KNOCK, OS_MELD = 52, 53, 54, 55, 56
OUR_SUIT = {"s": 3, "c": 0, "d": 1, "h": 2}   # OpenSpiel suits s c d h -> ours C D H S
RANKS = "A23456789TJQK"
VARIANT = gin_variant(openspiel_compatible=True)   # layout and meld table (options aside)
PEERS_HINT = 'pip install -e ".[peers]"'


def os_to_our_card(c: int) -> int:
    return OUR_SUIT["scdh"[c // 13]] * 13 + c % 13


OUR_TO_OS_CARD = {os_to_our_card(c): c for c in range(52)}


def os_seat(player: int, dealer: int) -> int:
    """OpenSpiel's player for our seat ``player`` (its player 0 is our non-dealer)."""
    return int(player == dealer)


def deal_order(deck) -> list[int]:
    """OpenSpiel's chance outcomes (card ids, in order) for our ``deck`` (cards in our deal
    order: alternating from the non-dealer, then the up-card and the stock in draw order)."""
    ours = [int(c) for c in deck]
    return [OUR_TO_OS_CARD[c] for c in ours[0:20:2] + ours[1:20:2] + ours[20:]]


def pyspiel_module():
    """``pyspiel``, or an ImportError saying how to install it."""
    try:
        import pyspiel
    except ImportError as err:
        raise ImportError(f"open_spiel (pyspiel) is not installed: {PEERS_HINT}") from err
    return pyspiel


@lru_cache(maxsize=None)
def os_meld_tables() -> tuple[dict[int, int], dict[int, int]]:
    """``(our template -> OpenSpiel meld id, its inverse)`` over OpenSpiel's 185 melds
    (sets, runs of 3..5), read from OpenSpiel's action names."""
    state = pyspiel_module().load_game("gin_rummy").new_initial_state()
    out = {}
    for mid in range(185):
        text = state.action_to_string(0, OS_MELD + mid).split("Action: ")[1]
        cards = [text[i:i + 2] for i in range(0, len(text), 2)]
        faces = [OUR_SUIT[c[1]] * 13 + RANKS.index(c[0]) for c in cards]
        t = VARIANT.table.find(faces)
        assert t >= 0, text
        out[t] = mid
    return out, {mid: t for t, mid in out.items()}


def os_meld_id(template: int) -> int:
    return os_meld_tables()[0][template]


def our_to_os(action: int, step: int, pending_knock: bool) -> int:
    """The OpenSpiel action id for our action in our step (a knock ``knock c`` is OpenSpiel's
    ``Knock`` then, in its knock phase (``pending_knock``), discard ``c``)."""
    lay = VARIANT.layout
    family = VARIANT.action_family(action)
    if family == "draw":
        return OS_DRAW_STOCK
    if family == "take":
        return OS_KNOCK if step == K.WALL else OS_DRAW_UP
    if family == "pass":
        return OS_PASS
    if family == "meld":
        return OS_MELD + os_meld_id(action - lay.meld)
    card = OUR_TO_OS_CARD[action - getattr(lay, family)]
    if family == "knock" and step == K.DISCARD and not pending_knock:
        return OS_KNOCK
    return card


def os_moves(action: int, step: int) -> list[int]:
    """OpenSpiel's actions for our ``action`` in ``step``: two for a knock at the discard
    step (``Knock``, then the card), else one."""
    if VARIANT.action_family(action) == "knock" and step == K.DISCARD:
        return [OS_KNOCK, our_to_os(action, step, True)]
    return [our_to_os(action, step, False)]
