"""The web table in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by selenium) plays a hand of Mountain Rummy at a live
``mountain-rummy serve``: it clicks a draw, cards and their meld, a discard, reads the table
and checks that the scores shown at the end are the saved record's; then it steps through
that record's ``replay --html`` page. Outside CI it skips where Chromium is not installed;
under CI (which installs it: ``.ci/run``) it never skips.

``WEB_SCREENSHOTS=docs python -m pytest tests/test_web_browser.py`` also saves the
screenshots of docs/web.md (``web_table.png``, ``web_replay.png``) in that folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
if os.environ.get("CI"):       # .ci/run installs them: never skip there
    assert CHROMIUM and DRIVER, "CI must install Debian's chromium and chromium-driver"
elif not (CHROMIUM and DRIVER):
    pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)
if not os.environ.get("CI"):
    pytest.importorskip("selenium", reason="selenium is not installed (pip install -e '.[dev]')")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking --disable-component-update --disable-sync "
         "--window-size=1400,1000").split()
SHOTS = os.environ.get("WEB_SCREENSHOTS")


def cli(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "experiments.cli", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


@pytest.fixture
def server(tmp_path):
    """A live ``serve`` on a free port: (its address, its records folder)."""
    records = tmp_path / "records"
    proc = cli("serve", "--agents", "greedy", "--seed", "3", "--port", "0",
               "--records", str(records))
    line = proc.stdout.readline()
    url = re.search(r"http://\S+/", line)
    assert url, f"serve did not start: {line}{proc.stdout.read() if proc.poll() is not None else ''}"
    yield url.group(0), records, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'chromium'}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def page_state(d) -> tuple[str, int]:
    return d.execute_script("return [document.body.dataset.phase, Number(document.body.dataset.move)]")


def settled(d, after: int = -1, seconds: float = 30) -> str:
    """Wait until the person is to move or the hand is over, past move ``after``."""
    def ready(d):
        phase, move = page_state(d)
        return phase in ("you", "hand over") and move > after and phase

    return WebDriverWait(d, seconds).until(ready)


def buttons(d) -> dict:
    return {b.text: b for b in d.find_elements(By.CSS_SELECTOR, "#moves button")}


def pick_cards(d, move: str) -> None:
    """Click the hand's cards a meld names (the hand is drawn last: the last matches)."""
    for word in move.split()[1:]:
        name = "XX" if word.startswith("XX") else word
        free = [el for el in d.find_elements(By.CSS_SELECTOR, f'#board [data-card="{name}"]')
                if "sel" not in (el.get_attribute("class") or "")]
        free[-1].click()


def test_a_person_plays_a_hand_in_chromium(server, browser, tmp_path):
    url, records, proc = server
    d = browser
    d.get(url + "?pace=0")
    # the first table compiles the rules and the agents' kernels unless numba's cache is
    # warm (a fresh CI machine, or beside other tests on 2 cores): minutes, not seconds
    phase, families = settled(d, seconds=300), []
    title = d.find_element(By.ID, "title").text
    assert title.startswith("Mountain Rummy, game 1")
    while phase != "hand over":
        assert d.find_element(By.ID, "status").text == "your move"
        board = d.find_element(By.ID, "board").text
        assert "Mountain Rummy \u2014 hand 1" in board
        assert re.search(r"P1 greedy( \(dealer\))? \u2014 \d+ cards?", board)
        move = page_state(d)[1]
        legal = buttons(d)
        melds = [t for t in legal if t.startswith("meld ")]
        if melds:
            pick_cards(d, melds[0])
            assert melds[0] in buttons(d) and len(buttons(d)) < len(legal)   # narrowed
            assert d.find_element(By.ID, "picked").text.startswith("selected: ")
            if SHOTS:
                d.save_screenshot(str(Path(SHOTS) / "web_table.png"))
            choice = melds[0]
        else:
            choice = next((t for t in legal if t == "draw stock"), None) or \
                next((t for t in legal if t.startswith("discard ")), next(iter(legal)))
        buttons(d)[choice].click()
        families.append(choice.split()[0])
        phase = settled(d, move)
    assert {"draw", "meld", "discard"} <= set(families)
    log = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#log li")]
    assert log[0].startswith("Hand 1, dealer") and any(t.startswith("Hand ends by") for t in log)
    # the scores shown are the saved record's
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in d.find_elements(By.CSS_SELECTOR, "#scores tr")[1:]]
    saved = d.find_element(By.ID, "record").text.removeprefix("record saved: ")
    record = json.loads(Path(saved).read_text())
    assert [int(r[1]) for r in rows] == record["result"]["last_hand"]["hand_points"]
    assert [int(r[2]) for r in rows] == record["result"]["scores"]
    assert len(record["actions"]) == page_state(d)[1]
    # the next hand is a new game (one hand a game); stopping the server saves it unfinished
    move = page_state(d)[1]
    d.find_element(By.ID, "next").click()
    settled(d, move)
    assert d.find_element(By.ID, "title").text.startswith("Mountain Rummy, game 2")
    move = page_state(d)[1]
    next(iter(buttons(d).values())).click()
    settled(d, move)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    unfinished = [json.loads(p.read_text()) for p in records.glob("*-2.json")]
    assert len(unfinished) == 1 and unfinished[0]["unfinished"]

    # the record's replay page, stepped with the arrow keys and seen from seat 1
    page = tmp_path / "replay.html"
    replay = cli("replay", saved, "--html", str(page))
    assert replay.wait(timeout=120) == 0, replay.stdout.read()
    d.get(page.as_uri())
    for _ in range(6):
        d.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    assert d.find_element(By.ID, "where").text == f"move 6 of {len(record['actions'])}"
    Select(d.find_element(By.ID, "view")).select_by_visible_text("P1 greedy's view")
    assert "seen by P1 greedy" in d.find_element(By.ID, "board").text
    if SHOTS:
        d.save_screenshot(str(Path(SHOTS) / "web_replay.png"))
