"""``mountain-rummy serve``: a local web table where a person plays any variant against agents.

The page (``experiments/web/table.html``, no build step, no network) asks the JSON API below;
each table is a game of its own, under its own id, so many tables are played at once.

==============================  ===================================================
request                         what
==============================  ===================================================
``POST /api/tables``            a new table; answers its state
``GET /api/tables/ID``          the table's state
``POST /api/tables/ID/act``     ``{"move": N, "action": "meld 5H 6H 7H"}``: the person's move
``POST /api/tables/ID/step``    ``{"move": N}``: the agent to move plays one move
``POST /api/tables/ID/next``    ``{"move": N}``: after the reveal, the next hand (or game)
``POST /api/tables/ID/hint``    ``{"move": N}``: the ``--hint`` agent's choice, played by no one
==============================  ===================================================

``move`` is the table's move number from the state it answers to: a request made from an
older state (another tab moved meanwhile) is refused as stale. Out-of-turn, illegal, stale
and malformed requests get a 4xx answer ``{"error": "..."}`` and change nothing.

Safe by construction: every state sent is made by :meth:`Table.state` from what the person's
seat may know: the seat's drawing (:func:`~mountain_rummy_env.drawing.draw`), the hand's
log as that seat's (:class:`~mountain_rummy_env.records.Recorder` with ``viewer``: other
seats' stock draws without the card, face-down cards hidden), and the legal moves only on
the seat's own turn; the reveal, every card face up, only once the hand is over. It holds no
card ids, only card names (``tests/test_serve.py`` re-deals the hidden cards and requires
identical states).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections import OrderedDict
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from agents import make_agent
from agents.human import HumanAgent
from experiments.play import Referee
from mountain_rummy_env import player_view
from mountain_rummy_env.core.state import EVENT_NONE
from mountain_rummy_env.drawing import card_symbols, draw
from mountain_rummy_env.records import Recorder
from mountain_rummy_env.registry import variant_title
from mountain_rummy_env.variant import ActionError, Variant

PAGE = Path(__file__).with_name("web") / "table.html"
MAX_TABLES = 64          # beyond this, a new table closes the one left unused longest
MAX_BODY = 4096          # bytes of a request body


class RequestError(Exception):
    """A request refused with HTTP ``status`` and a message; nothing was changed."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Settings:
    """What every table of a server plays: ``specs[p]`` seats seat ``p`` (``human`` at
    ``seat``); ``hint`` is the agent spec of the hints (None: no hints); finished games are
    saved in ``records`` (None: not saved); ``seed`` is the first game's seed (None: random)."""

    variant: Variant
    seat: int
    specs: tuple[str, ...]
    hint: str | None = None
    records: Path | None = None
    seed: int | None = None


class Table:
    """One person's table: a game of ``settings.variant`` played through a
    :class:`Recorder` (its record saved when the game ends), the agents of the other seats
    (refereed: a failing agent forfeits the hand to a random stand-in, as in tournaments),
    and the move number that guards against stale requests. Every public method takes the
    table's lock, so concurrent requests see one move at a time."""

    def __init__(self, table_id: str, settings: Settings, next_seed):
        self.id, self.settings, self.next_seed = table_id, settings, next_seed
        self.lock = threading.Lock()
        self.move = 0
        self.games = 0
        self.saved: str | None = None
        v = settings.variant
        self.names = [f"P{p}" if p == settings.seat else f"P{p} {spec[:20]}"
                      for p, spec in enumerate(settings.specs)]
        self.multi_hand = bool(v.spec.episode_game)
        self._new_game()

    # -- the game ----------------------------------------------------------------------

    def _new_game(self) -> None:
        s, v = self.settings, self.settings.variant
        seed = self.next_seed()
        self.games += 1
        self.rec = Recorder(v, seed, players=list(s.specs), viewer=s.seat)
        self.agents = [None if p == s.seat else make_agent(spec, seed=seed + p, variant=v.name)
                       for p, spec in enumerate(s.specs)]
        self.hinter = None if s.hint is None else make_agent(s.hint, seed=seed, variant=v.name)
        self.referee = Referee(seed=seed)
        self.saved = None
        self._new_hand(list(self.rec.view_log))

    def _new_hand(self, lines: list[str]) -> None:
        for agent in (*self.agents, self.hinter):
            if agent is not None:
                agent.reset()
        self.referee.begin(self.settings.variant.num_players)
        self.lines = lines            # this hand's log, as the person's seat may know it
        self.reported = 0             # forfeits already in the log
        self.paused = False           # the hand is over: its reveal shows until ``next``
        self.next_deal: str | None = None

    def _play(self, action: int) -> None:
        """Play ``action`` for the seat to move; log it and, at the hand's end, pause."""
        rec = self.rec
        shown = len(rec.view_log)
        event = rec.play(action)
        new = rec.view_log[shown:]
        forfeits = self.referee.forfeits[self.reported:]
        self.reported += len(forfeits)
        self.lines += [f"P{f.seat}'s agent forfeits the hand ({f.kind}: {f.reason}); a random "
                       f"stand-in plays on" for f in forfeits]
        if event != EVENT_NONE:
            self.paused = True
            if not rec.game.done(0):          # the engine dealt the next hand: hold it back
                self.next_deal, new = new[-1], new[:-1]
            else:
                self._save()
        self.lines += new
        self.move += 1

    def _save(self) -> None:
        folder = self.settings.records
        if folder is None or not self.rec.record.actions:
            return
        path = folder / f"{self.id}-{self.games}.json"
        self.rec.record.save(path)
        self.saved = str(path)

    def close(self) -> None:
        """Save an unfinished game as such (the server stops, or the table is closed)."""
        with self.lock:
            if not self.rec.game.done(0) and self.rec.record.actions:
                self.rec.stop()
                self._save()

    # -- requests ----------------------------------------------------------------------

    def _check(self, move, want: str) -> None:
        """Refuse a request made from another state than the current one, or at a moment
        it does not fit: ``want`` is the state it needs (``you``, ``agent`` or ``hand over``)."""
        if move != self.move:
            raise RequestError(409, f"stale request: it was made at move {move}, the table is "
                                    f"at move {self.move}; reload the table")
        now = self.phase()
        if now != want:
            said = {"you": "it is your move", "agent": f"P{self.rec.game.current_player(0)} is "
                    "to move, not you", "hand over": "the hand is over: ask for the next hand"}
            raise RequestError(409, said[now])

    def phase(self) -> str:
        """``hand over`` (the reveal shows), ``you`` (the person's move) or ``agent``."""
        if self.paused:
            return "hand over"
        return "you" if self.rec.game.current_player(0) == self.settings.seat else "agent"

    def act(self, move: int, text: str) -> None:
        """The person's move, by its text (as the state lists it, or canonical)."""
        with self.lock:
            self._check(move, "you")
            v = self.settings.variant
            try:
                action = v.parse_action(text)
            except ActionError as err:
                raise RequestError(422, f"cannot read the move {text!r}: {err}") from None
            if not self.rec.game.masks[0][action]:
                raise RequestError(422, f"{v.action_text(action)!r} is not legal now")
            self._play(action)

    def step(self, move: int) -> None:
        """The agent to move plays one move."""
        with self.lock:
            self._check(move, "agent")
            game = self.rec.game
            p = game.current_player(0)
            self._play(self.referee.decide(p, self.agents[p], player_view(game, 0, p),
                                           game.masks[0]))

    def next(self, move: int) -> None:
        """After the reveal: the game's next hand, or a new game once it is over."""
        with self.lock:
            self._check(move, "hand over")
            if self.rec.game.done(0):
                self._new_game()
            else:
                self._new_hand([self.next_deal])
            self.move += 1

    def hint(self, move: int) -> str:
        """The hint agent's move for the person, as text; nothing is played."""
        with self.lock:
            if self.hinter is None:
                raise RequestError(404, "this table gives no hints (start serve with --hint SPEC)")
            self._check(move, "you")
            view = player_view(self.rec.game, 0, self.settings.seat)
            return HumanAgent.move_text(view, int(self.hinter.act(view, self.rec.game.masks[0])))

    def state(self) -> dict:
        """Everything the page shows, from what the person's seat may know (module docstring)."""
        with self.lock:
            game, seat, v = self.rec.game, self.settings.seat, self.settings.variant
            phase = self.phase()
            state = {"table": self.id, "title": variant_title(v.name), "seat": seat,
                     "names": self.names, "move": self.move, "game": self.games,
                     "phase": phase, "log": list(self.lines), "legal": [], "result": None,
                     "hint": self.hinter is not None}
            if phase == "hand over":
                end = self.rec.hand_end
                summary = end.summary(0)
                state["svg"] = draw(end, 0, None, names=self.names, symbols=False)
                state["result"] = {
                    "hand_points": list(summary.hand_points), "totals": list(summary.totals),
                    "next": "new game" if self.multi_hand and game.done(0) else "next hand",
                    "record": self.saved}
                return state
            last = self.lines[-1] if len(self.lines) > 1 else ""
            state["svg"] = draw(game, 0, seat, names=self.names, symbols=False, last_move=last)
            state["to_move"] = self.names[game.current_player(0)]
            if phase == "you":
                view = player_view(game, 0, seat)
                state["legal"] = [{"family": v.action_family(a),
                                   "text": HumanAgent.move_text(view, a)}
                                  for a in game.legal_actions(0)]
            return state


class Tables:
    """The server's tables by id; past :data:`MAX_TABLES` a new one closes the table
    left unused longest. Seeds come from one counter: game k of the server has seed
    ``settings.seed + k`` (or a random one), so every record names its own."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.tables: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self.games = 0

    def next_seed(self) -> int:
        if self.settings.seed is None:
            return int.from_bytes(os.urandom(4), "little")
        with self.lock:
            self.games += 1
            return self.settings.seed + self.games - 1

    def create(self) -> Table:
        with self.lock:
            table_id = secrets.token_hex(6)
            closing = []
            while len(self.tables) >= MAX_TABLES:
                closing.append(self.tables.popitem(last=False)[1])
        for old in closing:
            old.close()
        table = Table(table_id, self.settings, self.next_seed)
        with self.lock:
            self.tables[table_id] = table
        return table

    def get(self, table_id: str) -> Table:
        with self.lock:
            table = self.tables.get(table_id)
            if table is None:
                raise RequestError(404, f"no table {table_id!r} (the server restarted, or it "
                                        "was closed): start a new table")
            self.tables.move_to_end(table_id)
            return table

    def close(self) -> None:
        for table in list(self.tables.values()):
            table.close()


VERBS = {"act": Table.act, "step": Table.step, "next": Table.next, "hint": Table.hint}


async def _body(request: Request) -> dict:
    """The request's JSON object: ``move`` (an integer) and, for ``act``, ``action`` (text)."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise RequestError(413, f"request body over {MAX_BODY} bytes")
    try:
        body = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RequestError(400, "the request body is not JSON") from None
    want = {"move", "action"} if request.path_params.get("verb") == "act" else {"move"}
    if not isinstance(body, dict) or set(body) != want:
        raise RequestError(400, "the request body must be a JSON object with exactly the "
                                f"field(s) {', '.join(sorted(want))}")
    if isinstance(body["move"], bool) or not isinstance(body["move"], int):
        raise RequestError(400, f"'move' must be the table's move number, got {body['move']!r}")
    if "action" in want and not isinstance(body["action"], str):
        raise RequestError(400, f"'action' must be a move's text, got {body['action']!r}")
    return body


def create_app(settings: Settings) -> Starlette:
    """The ASGI app of a server whose tables play ``settings``."""
    tables = Tables(settings)
    page = PAGE.read_text().replace("<!--CARD-DEFS-->", card_symbols())

    def guarded(handler):
        async def endpoint(request: Request):
            try:
                return await handler(request)
            except RequestError as err:
                return JSONResponse({"error": str(err)}, status_code=err.status)
        return endpoint

    async def index(request):
        return HTMLResponse(page)

    async def new_table(request):
        table = await run_in_threadpool(tables.create)
        return JSONResponse(await run_in_threadpool(table.state), status_code=201)

    async def show(request):
        return JSONResponse(await run_in_threadpool(tables.get(request.path_params["id"]).state))

    async def verb(request):
        name = request.path_params["verb"]
        if name not in VERBS:
            raise RequestError(404, f"no request {name!r}; the requests: {', '.join(VERBS)}")
        table = tables.get(request.path_params["id"])
        body = await _body(request)
        if name == "hint":
            return JSONResponse({"hint": await run_in_threadpool(table.hint, body["move"])})
        args = (body["move"], body["action"]) if name == "act" else (body["move"],)
        await run_in_threadpool(VERBS[name], table, *args)
        return JSONResponse(await run_in_threadpool(table.state))

    @asynccontextmanager
    async def lifespan(app):
        yield
        await run_in_threadpool(tables.close)

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/tables", guarded(new_table), methods=["POST"]),
        Route("/api/tables/{id}", guarded(show)),
        Route("/api/tables/{id}/{verb}", guarded(verb), methods=["POST"]),
    ], lifespan=lifespan)
    app.state.tables = tables
    return app
