"""SVG drawings of a game, from one seat's view or the omniscient one, for every variant.

:func:`draw` returns a self-contained SVG: every seat's hand (in a seat's view the other
hands are card backs, with the cards the seat knows of face up and marked), the table's
melds with their owners and declared jokers, the discard pile in order with every card
visible, the stock size, scores, whose turn and phase, and optionally the last move. It
reads only :class:`~mountain_rummy_env.game.PlayerView`-level facts, so a seat's drawing
holds nothing that seat may not know (``tests/test_drawing.py`` checks that re-dealing the
hidden cards leaves it unchanged). ``Game`` and ``PlayerView`` show it inline in Jupyter
(``_repr_svg_``); ``mountain-rummy replay FILE --html OUT`` pages through a record with it.

Cards are ``<use>`` references to definitions (:func:`card_symbols`), so a page of many
drawings defines each card face once. A face-up card carries its name (``data-card="7H"``,
a joker ``XX``) and a table meld's group its slot (``data-meld="m3"``), the names action
texts use: the web table (``mountain-rummy serve``) makes them clickable.
"""

from __future__ import annotations

from html import escape

from .cards import JOKER_FACE, SUIT_SYMBOLS, face_text
from .core.state import PHASE_NAMES
from .registry import variant_title

CARD_W, CARD_H = 34, 48
STEP = 24                   # horizontal step of overlapping cards
ROW = CARD_H + 26           # height of one row of cards with its label
WIDTH = 960
RED = "#c0392b"
INK = "#1d1d1f"
KNOWN = "#fff4c2"           # a card of another seat that the viewer knows of


def _face_id(face: int) -> str:
    return "cXX" if face == JOKER_FACE else f"c{face_text(face)}"


def card_symbols(faces=None) -> str:
    """Card definitions (``<g>`` groups of 34 x 48 at the origin, used by ``<use>``) of the
    given faces (default: all 53) and of the card back (``cBK``)."""
    faces = range(JOKER_FACE + 1) if faces is None else sorted(set(faces))
    out = ['<g id="cBK"><rect x="0.5" y="0.5" width="33" height="47" rx="4" fill="#2c4f8c" '
           'stroke="#1b2f55"/><rect x="4" y="4" width="26" height="40" rx="2" fill="none" '
           'stroke="#8fb0e6" stroke-dasharray="2 2"/></g>']
    for f in faces:
        if f == JOKER_FACE:
            body = (f'<text x="17" y="30" text-anchor="middle" font-size="20" fill="{RED}">'
                    '\u2605</text><text x="4" y="12" font-size="9" fill="{ink}">JKR</text>'
                    ).replace("{ink}", INK)
        else:
            text = face_text(f)
            rank = "10" if text[0] == "T" else text[0]
            color = RED if text[1] in "HD" else INK
            body = (f'<text x="4" y="14" font-size="12" font-weight="bold" fill="{color}">{rank}'
                    f'</text><text x="17" y="38" text-anchor="middle" font-size="20" '
                    f'fill="{color}">{SUIT_SYMBOLS[text[1]]}</text>')
        out.append(f'<g id="{_face_id(f)}"><rect x="0.5" y="0.5" width="33" height="47" rx="4" '
                   f'fill="white" stroke="#777"/>{body}</g>')
    return "".join(out)


class _Canvas:
    def __init__(self):
        self.parts: list[str] = []
        self.faces: set[int] = set()
        self.y = 0

    def text(self, x, y, s, size=13, weight="normal", color=INK, anchor="start"):
        self.parts.append(f'<text x="{x}" y="{y}" font-size="{size}" font-weight="{weight}" '
                          f'fill="{color}" text-anchor="{anchor}">{escape(s)}</text>')

    def card(self, x, y, face=None, tint=None, note=None):
        """One card: a face (None: its back), an optional tint behind it, a note under it."""
        if tint:
            self.parts.append(f'<rect x="{x - 2}" y="{y - 2}" width="{CARD_W + 4}" '
                              f'height="{CARD_H + 4}" rx="5" fill="{tint}"/>')
        if face is None:
            self.parts.append(f'<use href="#cBK" x="{x}" y="{y}"/>')
        else:
            self.faces.add(face)
            self.parts.append(f'<use href="#{_face_id(face)}" x="{x}" y="{y}" '
                              f'data-card="{_face_id(face)[1:]}"/>')
        if note:
            self.text(x + CARD_W / 2, y + CARD_H + 11, note, size=9, anchor="middle")

    def cards(self, x, y, items, step=STEP):
        """A fanned row of ``(face or None, tint, note)``; returns the x after it."""
        for i, (face, tint, note) in enumerate(items):
            self.card(x + i * step, y, face, tint, note)
        return x + (len(items) - 1) * step + CARD_W if items else x


def _table_item(game, index, card):
    """A table card as drawn: its shown face; a joker or wild standing in for another card
    is a joker with the declared card noted under it (none yet: a joker in an unfinished
    Robber's meld, shown -1)."""
    s = game.states[index]
    shown = int(s["shown"][card])
    own = int(game.spec.card_face[card])
    if shown < 0:
        return (own, "#e8f0ff", None)
    if own == JOKER_FACE or shown != own:
        return (JOKER_FACE if own == JOKER_FACE else own, "#e8f0ff", f"={face_text(shown)}")
    return (shown, None, None)


def draw(game, index: int = 0, seat: int | None = None, *, names=None, last_move: str = "",
         symbols: bool = True) -> str:
    """The SVG of game ``index``: ``seat``'s view (None: every card face up). ``names``
    label the seats (default ``P0`` …), ``last_move`` is printed under the table, and
    ``symbols=False`` leaves out the card definitions (a page that holds them once)."""
    from .game import player_view

    v = game.variant
    n = v.num_players
    s = game.states[index]
    names = list(names or [f"P{p}" for p in range(n)])
    views = {p: player_view(game, index, p) for p in range(n)}
    phase = int(s["phase"])
    cur = int(s["current"])
    c = _Canvas()
    title = (f"{variant_title(v.name)} \u2014 hand {int(s['hand_no']) + 1}, turn "
             f"{int(s['turn']) + 1}, {PHASE_NAMES[phase]}")
    if phase <= 2:
        title += f", {names[cur]} to act"
    c.text(12, 20, title, size=15, weight="bold")
    c.text(12, 38, ("seen by " + names[seat]) if seat is not None else "all cards shown",
           size=11, color="#555")
    c.text(WIDTH - 12, 38, "scores: " + "  ".join(f"{names[p]} {int(s['scores'][p])}"
                                                  for p in range(n)), size=11, anchor="end")
    y = 52
    order = list(range(n)) if seat is None else [(seat + k) % n for k in range(1, n)] + [seat]
    hand_rows = []
    for p in order:
        view = views[p]
        label = f"{names[p]}{' (dealer)' if p == int(s['dealer']) else ''} \u2014 " \
                f"{len(view.hand)} card{'s' if len(view.hand) != 1 else ''}"
        if seat is None or p == seat:
            taken = set(view.taken)
            items = [(int(game.spec.card_face[x]), None, "taken" if x in taken else None)
                     for x in view.hand]
        else:
            known = views[seat].known[p]
            items = [(int(game.spec.card_face[x]), KNOWN, "known") for x in known]
            items += [(None, None, None)] * (len(view.hand) - len(known))
        hand_rows.append((p, label, items))
    # the other seats first, the viewer's hand last (at the bottom)
    for p, label, items in hand_rows[:-1] if seat is not None else hand_rows:
        y = _hand_row(c, y, p == cur and phase <= 2, label, items)
    # the middle: stock, discard pile, table
    c.text(12, y + 14, f"stock {int(s['stock_len'] - s['stock_ptr'])}", size=12)
    c.card(12, y + 20, None)
    pile = game.discard_pile(index)
    c.text(70, y + 14, "discard pile (bottom \u2192 top)" if pile else "discard pile: empty",
           size=12)
    c.cards(70, y + 20, [(int(game.spec.card_face[x]), None, None) for x in pile], step=18)
    y += ROW + 6
    melds = game.melds(index)
    c.text(12, y + 12, "table" + ("" if melds else ": no melds"), size=12, weight="bold")
    y += 18
    col_w = WIDTH // 2
    for i, m in enumerate(melds):
        x0 = 12 + (i % 2) * col_w
        if i % 2 == 0 and i:
            y += ROW
        owners = {names[o] for o in m["owners"]}
        c.parts.append(f'<g data-meld="m{m["slot"]}">')
        c.text(x0, y + 10, f"m{m['slot']} {m['kind']} \u2014 {names[m['founder']]}"
               + (f" (+{', '.join(sorted(owners - {names[m['founder']]}))})"
                  if len(owners) > 1 else ""), size=10, color="#555")
        c.cards(x0, y + 14, [_table_item(game, index, x) for x in m["cards"]], step=STEP)
        c.parts.append("</g>")
    if melds:
        y += ROW
    if seat is not None:
        p, label, items = hand_rows[-1]
        y = _hand_row(c, y + 4, p == cur and phase <= 2, label + " (you)", items)
    if last_move:
        c.text(12, y + 14, "last move: " + last_move, size=12)
        y += 20
    if phase > 2 or int(s["h_end_kind"]) != 0:
        sm = game.summary(index)
        c.text(12, y + 14, f"hand over: {sm.end}" + (f" by {names[sm.ender]}" if sm.ender >= 0
                                                       else "") + "; points "
               + ", ".join(f"{names[p]} {sm.hand_points[p]}" for p in range(n)), size=12,
               weight="bold")
        y += 20
    height = y + 12
    defs = f"<defs>{card_symbols(c.faces | {JOKER_FACE})}</defs>" if symbols else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif">'
            f'<rect width="{WIDTH}" height="{height}" fill="#1f6f43" opacity="0.12"/>'
            f'{defs}{"".join(c.parts)}</svg>')


def _hand_row(c: _Canvas, y: int, to_act: bool, label: str, items) -> int:
    c.text(12, y + 13, ("\u25b6 " if to_act else "") + label, size=12,
           weight="bold" if to_act else "normal")
    c.cards(12, y + 18, items)
    return y + ROW



def replay_html(record, views=None) -> str:
    """One self-contained HTML page that steps through game record ``record`` (a
    :class:`~mountain_rummy_env.records.GameRecord`): previous/next buttons, a slider, the
    arrow keys, a view selector (every card, or one seat's view: ``views`` limits which,
    default all), the move list in the project's action text and the result. Each step's
    drawing is made here, so the page needs no network and no server. Raises
    :class:`~mountain_rummy_env.records.RecordError` when the record does not replay."""
    import json

    from .core.state import EVENT_NONE
    from .records import RecordError, hand_result_lines, make_variant, replay

    try:
        variant = make_variant(record.variant, dict(record.config))
    except (ValueError, TypeError) as err:
        raise RecordError(f"invalid game record: {err}") from err
    seats = variant.num_players
    names = [f"P{p}" + (f" {record.players[p]}" if p < len(record.players) else "")
             for p in range(seats)]
    views = [None, *range(seats)] if views is None else list(views)
    for seat in views:
        if seat is not None and not 0 <= seat < seats:
            raise ValueError(f"view seat {seat} is not a seat of this {seats}-seat game")
    frames = {str(seat): [] for seat in views}
    moves = []

    def watch(game, action, before, player, event):
        if action is not None:
            moves.append(f"{names[player]}: {variant.action_text(action)}")
        redealt = event != EVENT_NONE and not game.done(0) and game.spec.episode_game
        for seat in views:
            said = "" if action is None else f"{names[player]}: " + (
                variant.action_text(action) if redealt else game.describe(0, action, before, seat))
            frames[str(seat)].append(draw(game, 0, seat, names=names, symbols=False,
                                          last_move=said))

    game, _ = replay(record, watch)
    result = (" ".join(hand_result_lines(game)) if game.done(0)
              else "The record stops before the game ends.")
    labels = {str(seat): "every card" if seat is None else f"{names[seat]}'s view"
              for seat in views}
    data = json.dumps({"frames": frames, "moves": moves, "labels": labels, "result": result})
    title = escape(f"{variant_title(variant.name)} replay, seed {record.seed}")
    return _PAGE.replace("{title}", title).replace("{defs}", card_symbols()).replace(
        "{data}", data.replace("</", "<\\/"))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; margin: 16px; color: #1d1d1f; }
#bar { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; }
#slider { flex: 1; }
#main { display: flex; gap: 16px; align-items: flex-start; }
#moves { max-height: 820px; overflow-y: auto; font-size: 13px; min-width: 240px; margin: 0; }
#moves li { cursor: pointer; padding: 1px 4px; }
#moves li.now { background: #ffe08a; }
#result { margin-top: 8px; font-weight: bold; }
</style></head><body>
<h2>{title}</h2>
<svg width="0" height="0" style="position:absolute"><defs>{defs}</defs></svg>
<div id="bar"><button id="prev" title="previous (left arrow)">&#9664;</button>
<input id="slider" type="range" min="0" value="0"><button id="next" title="next (right arrow)">&#9654;</button>
<span id="where"></span><label>view <select id="view"></select></label></div>
<div id="main"><div id="board"></div><ol id="moves" start="1"></ol></div>
<div id="result"></div>
<script>
const D = {data};
const views = Object.keys(D.frames);
const slider = document.getElementById("slider"), select = document.getElementById("view");
const list = document.getElementById("moves");
let step = 0, view = views[0];
for (const v of views) { const o = document.createElement("option"); o.value = v; o.textContent = D.labels[v]; select.appendChild(o); }
D.moves.forEach((m, i) => { const li = document.createElement("li"); li.textContent = m; li.onclick = () => show(i + 1); list.appendChild(li); });
slider.max = D.moves.length;
document.getElementById("result").textContent = D.result;
function show(k) {
  step = Math.max(0, Math.min(D.moves.length, k));
  slider.value = step;
  document.getElementById("board").innerHTML = D.frames[view][step];
  document.getElementById("where").textContent = "move " + step + " of " + D.moves.length;
  list.querySelectorAll("li").forEach((li, i) => li.classList.toggle("now", i + 1 === step));
  const now = list.children[step - 1]; if (now) now.scrollIntoView({block: "nearest"});
}
document.getElementById("prev").onclick = () => show(step - 1);
document.getElementById("next").onclick = () => show(step + 1);
slider.oninput = () => show(Number(slider.value));
select.onchange = () => { view = select.value; show(step); };
document.addEventListener("keydown", e => { if (e.key === "ArrowLeft") show(step - 1); if (e.key === "ArrowRight") show(step + 1); });
show(0);
</script></body></html>
"""
