"""Executes ``notebooks/quickstart.ipynb`` end to end at small sizes (the docs must run).

The notebook runs in a fresh ``python3`` kernel whose working directory is the repository
root; ``QUICKSTART_*`` environment variables shrink the tournament and the throughput loop.
A cell that raises fails the test. Nothing is written back to the notebook file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (dev extra)")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (dev extra: nbmake)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed: no python3 kernel to run the notebook")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def _outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield from cell.get("outputs", [])


def _texts(nb):
    for out in _outputs(nb):
        if out.get("output_type") == "stream":
            yield out.get("text", "")
        for value in out.get("data", {}).values():
            if isinstance(value, str):
                yield value


def test_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, \
                "store the notebook with outputs cleared"


def test_quickstart_notebook_runs(monkeypatch):
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.skip("no 'python3' Jupyter kernel spec installed")

    monkeypatch.setenv("QUICKSTART_DEALS", "4")
    monkeypatch.setenv("QUICKSTART_NUM_ENVS", "16")
    monkeypatch.setenv("QUICKSTART_BENCH_SECONDS", "0.3")
    monkeypatch.setenv("MPLBACKEND", "Agg")

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError naming the cell if any cell fails

    errors = [o for o in _outputs(nb) if o.get("output_type") == "error"]
    assert not errors, errors

    text = "\n".join(_texts(nb))
    assert "Bradley-Terry" in text, "the tournament's markdown table is missing"
    assert "legal of 1845" in text  # the AEC section printed the action mask
    assert "greedy (P0) vs rules (P1)" in text
    if importlib.util.find_spec("matplotlib") is not None:
        assert any("image/png" in o.get("data", {}) for o in _outputs(nb)), \
            "the ratings plot was not displayed"
