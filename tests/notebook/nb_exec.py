"""Running a list of cells in a real Jupyter kernel (nbclient) and reading their outputs."""

from __future__ import annotations

import nbformat


def execute_cells(cells: list[str], workdir) -> nbformat.NotebookNode:
    """A notebook of ``cells`` executed by a fresh ``python3`` kernel in ``workdir``.

    Errors do not stop the run (``allow_errors``): each cell's outputs say what happened.
    """
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def cell_output_text(cell) -> str:
    """A cell's outputs as text: streams, ``TRACEBACK <ename>: <evalue>`` for an error,
    and the ``text/plain`` of rich outputs."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"TRACEBACK {o.ename}: {o.evalue}")
        else:
            out.append(str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)
