"""Every notebook under notebooks/ runs from top to bottom without error and displays its
figures (an ``image/png`` output)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    import nbclient  # in the test extra: a missing one must fail, not skip
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # issue 19 A.7: the notebook shows its figures inline (not only draws them off screen)
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name}: no figure displayed (no image/png output)"


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS
