"""The register heat columns of the kernel view: live registers per Python and SASS line.

Kept apart from :mod:`warp_lab.notebook.widgets` (the occupancy widget, which imports
ipywidgets and matplotlib, 0.3 s and more), so the first ``%%warp_kernel`` cell of a
notebook, whose view has these columns, imports neither.
"""

from __future__ import annotations

import re

__all__ = ["register_heat"]

_SASS_OFFSET = re.compile(r"/\*([0-9a-fA-F]{4,})\*/")


def register_heat(ck) -> tuple[dict[int, int], dict[int, int]] | None:
    """Live registers per Python line and per SASS pane line (the register heat columns).

    Read from :func:`warp_lab.analysis.registers.register_pressure` (nvdisasm's
    register life ranges): the Python column is its ``per_line`` maximum, the
    SASS column the count at each instruction, placed on the SASS text line
    that prints that instruction's ``/*offset*/``.

    Returns:
        ``(python line -> registers, SASS pane line -> registers)``, or None
        when there is no cubin/SASS or the analysis cannot run.
    """
    from warp_lab.errors import WarpLabError

    if ck.cubin is None or ck.sass is None:
        return None
    try:
        from warp_lab.analysis.registers import register_pressure
        pressure = register_pressure(ck)
    except (ImportError, WarpLabError):
        return None
    by_offset = pressure.per_instruction
    sass_lines = {}
    for k, line in enumerate(ck.sass.splitlines(), 1):
        m = _SASS_OFFSET.search(line)
        if m and int(m.group(1), 16) in by_offset:
            sass_lines[k] = by_offset[int(m.group(1), 16)]
    return dict(pressure.per_line), sass_lines
