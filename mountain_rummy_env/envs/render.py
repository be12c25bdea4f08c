"""Readable text table of one game (``render_mode="ansi"`` / ``"human"`` of the envs)."""

from __future__ import annotations

from ..cards import JOKER_FACE, pretty_face
from ..core.state import PHASE_NAMES
from ..registry import variant_title


def _card(game, index: int, card: int) -> str:
    face = int(game.spec.card_face[card])
    return pretty_face(face) if face != JOKER_FACE else "XX"


def _table_card(game, index: int, card: int) -> str:
    """A table card; a joker or wild standing for another card adds it (``XX=7♥``, ``5♣=7♥``)."""
    shown = int(game.states[index]["shown"][card])
    face = int(game.spec.card_face[card])
    if shown in (face, -1):         # -1: a joker in a meld a play left unfinished (Robber's)
        return _card(game, index, card)
    return f"{_card(game, index, card)}={pretty_face(shown)}"


def render_text(game, index: int = 0, names=None, max_moves: int = 60) -> str:
    """Both hands, discard pile, melds with owners, scores and the legal moves in text."""
    s = game.states[index]
    v = game.variant
    n = v.num_players
    names = names or [f"player_{p}" for p in range(n)]
    phase = int(s["phase"])
    cur = int(s["current"])
    lines = []
    head = (f"{variant_title(v.name)} - hand {int(s['hand_no']) + 1}, turn {int(s['turn']) + 1}, "
            f"dealer {names[int(s['dealer'])]}, phase: {PHASE_NAMES[phase]}")
    if phase <= 2:
        head += f", {names[cur]} to act"
    lines.append(head)
    lines.append("Scores: " + " | ".join(f"{names[p]} {int(s['scores'][p])}" for p in range(n)))
    lines.append(f"Stock: {int(s['stock_len'] - s['stock_ptr'])} cards")
    pile = game.discard_pile(index)
    lines.append("Discard (bottom -> top): " + (" ".join(_card(game, index, c) for c in pile) or "-"))
    melds = game.melds(index)
    lines.append("Table:" + ("" if melds else " -"))
    for m in melds:
        cards = []
        for c, owner in zip(m["cards"], m["owners"]):
            text = _table_card(game, index, c)
            cards.append(text if owner == m["founder"] else f"{text}({names[owner]})")
        lines.append(f"  m{m['slot']:<2} {m['kind']:<3} [{names[m['founder']]}] " + " ".join(cards))
    for p in range(n):
        hand = game.hand(index, p)
        public = s["public"]
        taken = s["taken"]
        shown = []
        for c in hand:
            text = _card(game, index, c)
            if taken[c] and p == cur:
                text += "!"
            elif public[c]:
                text += "*"
            shown.append(text)
        marker = ">" if p == cur and phase <= 2 else " "
        lines.append(f"{marker} {names[p]} hand ({len(hand)}): " + (" ".join(shown) or "-"))
    if int(s["obligation"]) >= 0:
        held = _table_card(game, index, int(s["obligation"]))
        lines.append(f"  lifted: {held} must be put in a meld" if v.lifts_table_cards else
                     f"  obligation: {held} must be melded or laid off this turn")
    lines.append("  (* known to the opponent, ! taken this turn: may not be discarded)")
    if phase <= 2:
        legal = game.legal_actions(index)
        texts = [v.action_text(a) for a in legal[:max_moves]]
        more = f" ... (+{len(legal) - max_moves} more)" if len(legal) > max_moves else ""
        lines.append(f"Legal moves for {names[cur]} ({len(legal)}): " + ", ".join(texts) + more)
    if phase > 2 or int(s["h_end_kind"]) != 0:
        sm = game.summary(index)
        by = f" by {names[sm.ender]}" if sm.ender >= 0 else ""
        ended = "" if sm.went_out else f"{sm.end}{by}; "    # going out names who did, below
        lines.append(f"Last hand: {ended}{sm.outcome(names)}; points "
                     + ", ".join(f"{names[p]} {sm.hand_points[p]}" for p in range(n))
                     + (f"; bonuses: {', '.join(sm.bonus_kinds)}" if sm.bonus_kinds else ""))
        if sm.game_winner >= 0:
            lines.append(f"Game over: {names[sm.game_winner]} wins")
    return "\n".join(lines)

