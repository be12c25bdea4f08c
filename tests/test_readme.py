"""The README's Python examples run as written (the record example gets its game.json from
the `play` command it names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[b.splitlines()[0][:48] for b in BLOCKS])
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if "game.json" in code:
        from experiments.cli import main

        command = re.search(r"# game.json from: mountain-rummy (.*)", code).group(1).split()
        assert main(command) == 0
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
