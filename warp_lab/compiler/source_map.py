"""Where a compiled kernel's code came from: the :class:`SourceMap` inside ``CompiledKernel``.

One frozen record answers every question that ties the panes and findings back to the
user's code: which source line a PTX or SASS row came from (and back), which file or
notebook cell a line is in *in this run*, which Python array a ``.shared`` variable is,
and which element a byte offset in it falls on. The pipeline builds it once
(:func:`warp_lab.compiler.pipeline.compile`, :func:`warp_lab.compiler.cuda_pipeline.
compile_cuda`); ``runtime/``, ``notebook/`` and ``analysis/`` ask it instead of
re-deriving.

Three values:

* :class:`SourceLine` ``(file, line)``: a line of the user's code, ``file`` the file or
  cell as named in this run (``ck.source.filename`` for the kernel's own).
* a *line key* (an ``int``): the compact, JSON-able form of a :class:`SourceLine` the row
  maps, heat columns and per-line metrics are keyed by. The kernel's own lines are their
  line numbers; a line of another file or cell (a ``@wl.func`` of an earlier cell) is
  encoded here, and only here (:meth:`SourceMap.line`, :meth:`SourceMap.key`): nobody
  does arithmetic on a key.
* :class:`SharedArray`: everything known of one shared array (symbol, name, line, element
  type, shape, offset) in one record.

Cells: a cell's own name (``<cell 7>``) changes each time it runs, so the artifacts
(LLVM ``DIFile``, PTX ``.file``, SASS ``//## File``, debug-mode messages) name it by
content (``<cell of saxpy>``, :func:`warp_lab.compiler.cache.artifact_files`), and the
map's ``cells`` says what each such name stands for in this run (:meth:`SourceMap.cell`,
:meth:`SourceMap.renamed`); a cache hit gets a map for its run (:meth:`SourceMap.for_run`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Iterable, Mapping

__all__ = ["SourceLine", "SharedArray", "LineMap", "SourceMap", "file_keys"]

#: key offset between files of a line map: no file or cell has a million lines
_FILE_STRIDE = 1_000_000


@dataclass(frozen=True, order=True)
class SourceLine:
    """One line of the user's code.

    Attributes:
        file: the file or notebook cell as named in this run (``"<cell 7>"``,
            ``"/tmp/ipykernel_1/123.py"``, a module's path).
        line: its 1-based line in that file's own numbering.
    """

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class SharedArray:
    """One shared array a kernel (or a device function it calls) declares.

    Attributes:
        symbol: its PTX ``.shared`` variable (``k_tile_3``); every
            ``wl.dynamic_shared_array`` views the one ``__wl_dynamic_shared``.
        name: the Python (or C++) variable name; ``""`` for an array not assigned to a
            plain name.
        line: the line declaring it, in the numbering of the file or cell of the function
            that declares it.
        dtype: the element type as ``warp_lab.lang.types`` names it (``"float32"``,
            ``"vec4"``), None when not known (a CUDA C++ ``__shared__`` of a type warp_lab
            has no name for).
        itemsize: bytes per element (None with ``dtype``).
        shape: the static extents, row-major; None for a dynamic array or extents the
            source does not give (CUDA C++ sizes that do not match the PTX's bytes).
        offset: the byte offset of element 0 in the variable: 0 for a static array, a
            ``wl.dynamic_shared_array``'s ``offset`` (None when computed at run time).
    """

    symbol: str
    name: str
    line: int
    dtype: str | None = None
    itemsize: int | None = None
    shape: tuple | None = None
    offset: int | None = 0

    def element(self, byte_offset: int) -> tuple | None:
        """The index of the element whose first byte is ``byte_offset`` bytes into the
        array (row-major, as declared), or None: no static shape, not an element's first
        byte, or past the end."""
        if self.shape is None or not self.itemsize or byte_offset % self.itemsize:
            return None
        e = byte_offset // self.itemsize
        index = []
        for n in reversed(self.shape):
            if n <= 0:
                return None
            e, i = divmod(e, n)
            index.append(i)
        return tuple(reversed(index)) if e == 0 and byte_offset >= 0 else None

    def to_json(self) -> list:
        """The record as a JSON list (the disk cache's form); :meth:`from_json` undoes it."""
        return [self.symbol, self.name, self.line, self.dtype, self.itemsize,
                None if self.shape is None else list(self.shape), self.offset]

    @classmethod
    def from_json(cls, item: list) -> "SharedArray":
        """The record :meth:`to_json` wrote."""
        symbol, name, line, dtype, itemsize, shape, offset = item
        return cls(symbol, name, line, dtype, itemsize,
                   None if shape is None else tuple(shape), offset)


def _freeze(mapping) -> Mapping:
    return MappingProxyType({k: tuple(v) for k, v in mapping.items()})


@dataclass(frozen=True)
class LineMap:
    """Line key ↔ LLVM IR line ↔ PTX line ↔ SASS instruction: the row maps of a
    :class:`SourceMap` (which answers questions about them in the user's terms).

    LLVM and PTX lines are 1-based lines of ``llvm_ir_optimized`` and ``ptx``; SASS
    entries are byte offsets of instructions in the entry's ``.text`` section, as nvdisasm
    prints them (``/*0040*/``), and ``sass_lines`` the 1-based lines of the listing.

    Built once from the debug locations (``!DILocation`` in LLVM IR, ``.loc`` in PTX,
    nvdisasm's line info for SASS) by :func:`warp_lab.compiler.linemap.build_line_map`.
    The keys are line keys (module docstring); ``files`` are the debug-info names of the
    other files or cells lines came from, in key order.
    """

    llvm: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    ptx: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    sass: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    sass_lines: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("llvm", "ptx", "sass", "sass_lines"):
            object.__setattr__(self, name, _freeze(getattr(self, name)))
        object.__setattr__(self, "files", tuple(self.files))

    def location(self, key: int) -> tuple[str | None, int]:
        """``(file, line)`` of a line key: ``file`` None for the kernel's own file, else the
        debug-info name of the other file (``files``) the line is in.

        Raises:
            KeyError: the key names no file of this map.
        """
        k, line = divmod(int(key), _FILE_STRIDE)
        if k == 0:
            return None, line
        if k > len(self.files) or k < 0:
            raise KeyError(f"Python line key {key} names no file of this line map")
        return self.files[k - 1], line

    @staticmethod
    def _invert(m: Mapping[int, tuple[int, ...]]) -> dict[int, int]:
        return {x: py for py, xs in m.items() for x in xs}

    @functools.cached_property
    def ptx_to_python(self) -> Mapping[int, int]:
        """PTX line -> the line key it was generated from (``ptx`` inverted, once)."""
        return MappingProxyType(self._invert(self.ptx))

    @functools.cached_property
    def _sass_to_python(self) -> Mapping[int, int]:
        return self._invert(self.sass)

    def python_line_of_ptx(self, ptx_line: int) -> int | None:
        """The line key a PTX line was generated from, or None."""
        return self.ptx_to_python.get(ptx_line)

    def python_line_of_sass(self, offset: int) -> int | None:
        """The line key of the SASS instruction at byte ``offset``, or None."""
        return self._sass_to_python.get(offset)

    @property
    def python_lines(self) -> list[int]:
        """Every line key that produced code, in order: the kernel's file first."""
        return sorted(set(self.llvm) | set(self.ptx) | set(self.sass))


def file_keys(filename: str, others: Iterable[str]) -> dict[str, int]:
    """Debug-info file name -> the key offset of its lines: 0 for the kernel's own
    ``filename``, one stride per file of ``others`` (in order): what
    :func:`~warp_lab.compiler.linemap.build_line_map` adds to each line number."""
    return {filename: 0, **{f: (k + 1) * _FILE_STRIDE for k, f in enumerate(others)}}


#: the panes' row maps: pane -> the :class:`LineMap` field of its rows
_PANE_ROWS = {"llvm": "llvm", "ptx": "ptx", "sass": "sass_lines", "sass_offsets": "sass"}


@dataclass(frozen=True)
class SourceMap:
    """Where one compile's code came from, and how this run names it (frozen).

    Attributes:
        rows: the :class:`LineMap` (line key -> LLVM/PTX/SASS rows).
        filename: the kernel's own file or cell as named in this run
            (``CompiledKernel.source.filename``).
        cells: artifact file name -> the notebook cell it stands for in this run
            (``{"<cell of saxpy>": "<cell 7>"}``); real files are not in it.
        arrays: one :class:`SharedArray` per shared array declaration, in declaration
            order (several for the dynamic shared memory).
        ptx_shared: the ``.shared`` variables the PTX declares (LLVM's pieces of a split
            one, ``k_tile_3_$_0``, included), in PTX order.
    """

    rows: LineMap = field(default_factory=LineMap)
    filename: str = field(default="", compare=False)
    cells: Mapping[str, str] = field(default_factory=dict, compare=False)
    arrays: tuple[SharedArray, ...] = ()
    ptx_shared: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "cells", MappingProxyType(dict(self.cells)))
        object.__setattr__(self, "arrays", tuple(self.arrays))
        object.__setattr__(self, "ptx_shared", tuple(self.ptx_shared))

    def for_run(self, filename: str, cells: Mapping[str, str]) -> "SourceMap":
        """This map with the kernel's file and the cells as named in another run (a cache
        hit of the same text under new cell names)."""
        return replace(self, filename=filename, cells=cells)

    # -- files and cells ---------------------------------------------------------------

    def cell(self, name: str) -> str:
        """The file or cell an artifact file name (a ``.file``, a ``DIFile``, a
        simulator location's) stands for in this run; ``name`` when it is a real file."""
        return self.cells.get(name, name)

    @property
    def artifact_filename(self) -> str:
        """The name the kernel's own file or cell has in the debug info."""
        return next((a for a, f in self.cells.items() if f == self.filename), self.filename)

    @property
    def other_files(self) -> tuple[str, ...]:
        """The other files or cells lines came from (device functions defined elsewhere),
        as named in this run, in key order."""
        return tuple(self.cell(f) for f in self.rows.files)

    def is_other_file(self, filename: str | None) -> bool:
        """Whether ``filename`` (as named in this run) is a file or cell other than the
        kernel's own."""
        return bool(filename) and filename != self.filename

    def renamed(self, text: str, label=None, quoted: bool = False) -> str:
        """``text`` (a pane, a trap's message) with each cell's artifact name replaced by
        ``label(cell)`` (default: the cell's name in this run); ``quoted``: only the
        names in double quotes (``.file 1 "<cell of k>"``), so line numbers stay."""
        for name, cell in self.cells.items():
            said = label(cell) if label else cell
            text = text.replace(f'"{name}"', f'"{said}"') if quoted else \
                text.replace(name, said)
        return text

    # -- line keys ---------------------------------------------------------------------

    def line(self, key: int) -> SourceLine:
        """The :class:`SourceLine` of line key ``key``.

        Raises:
            KeyError: the key names no file of this map.
        """
        name, line = self.rows.location(key)
        return SourceLine(self.filename if name is None else self.cell(name), line)

    def key(self, line: SourceLine) -> int | None:
        """The line key of ``line``; None when its file is none of this map's."""
        if not self.is_other_file(line.file):
            return line.line
        files = self.other_files
        if line.file not in files:
            return None
        return (files.index(line.file) + 1) * _FILE_STRIDE + line.line

    def is_own(self, key: int) -> bool:
        """Whether line key ``key`` is a line of the kernel's own file or cell."""
        return 0 <= key < _FILE_STRIDE

    @property
    def keys(self) -> list[int]:
        """Every line key that produced code, in order: the kernel's own file first, then
        each other file's (:attr:`other_files`)."""
        return self.rows.python_lines

    def keys_in(self, filename: str) -> list[int]:
        """The keys of :attr:`keys` whose lines are in ``filename`` (as named in this run)."""
        out = []
        for key in self.keys:
            if self.line(key).file == filename:
                out.append(key)
        return out

    def own_lines(self, pane: str = "ptx") -> list[int]:
        """The lines of the kernel's own file or cell that have rows in ``pane``, sorted."""
        return sorted(k for k in self.rows_of(pane) if self.is_own(k))

    # -- rows --------------------------------------------------------------------------

    def rows_of(self, pane: str) -> Mapping[int, tuple[int, ...]]:
        """Line key -> rows of ``pane``: ``"llvm"`` (optimised IR lines), ``"ptx"``,
        ``"sass"`` (listing lines) or ``"sass_offsets"`` (instruction byte offsets).

        Raises:
            KeyError: no such pane.
        """
        return getattr(self.rows, _PANE_ROWS[pane])

    def rows_for(self, pane: str, key: int) -> tuple[int, ...]:
        """The rows of ``pane`` line key ``key`` produced (``()`` for none)."""
        return self.rows_of(pane).get(key, ())

    def pane_keys(self, pane: str) -> dict[int, int]:
        """Row of ``pane`` -> the line key it came from (``rows_of`` inverted)."""
        return {x: k for k, xs in self.rows_of(pane).items() for x in xs}

    @property
    def ptx_keys(self) -> Mapping[int, int]:
        """PTX line -> line key (inverted once)."""
        return self.rows.ptx_to_python

    def key_of_ptx(self, ptx_line: int) -> int | None:
        """The line key a PTX line was generated from, or None."""
        return self.rows.python_line_of_ptx(ptx_line)

    def key_of_sass(self, offset: int) -> int | None:
        """The line key of the SASS instruction at byte ``offset``, or None."""
        return self.rows.python_line_of_sass(offset)

    def line_of_ptx(self, ptx_line: int) -> SourceLine | None:
        """The :class:`SourceLine` a PTX line was generated from, or None."""
        key = self.key_of_ptx(ptx_line)
        try:
            return None if key is None else self.line(key)
        except KeyError:
            return None

    # -- shared arrays -----------------------------------------------------------------

    def array(self, symbol: str) -> SharedArray | None:
        """The first :class:`SharedArray` declared as ``symbol`` (a piece LLVM split off,
        ``k_tile_3_$_0``, as the whole), or None."""
        whole = re.sub(r"_\$_\d+$", "", symbol)
        return next((a for a in self.arrays if a.symbol == whole), None)

    def shaped(self, symbol: str) -> SharedArray | None:
        """The :class:`SharedArray` of ``symbol`` with a static shape, or None."""
        return next((a for a in self.arrays if a.symbol == symbol and a.shape is not None),
                    None)

    def array_lines(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """Shared variable symbol the PTX declares -> (Python array name, the lines that
        declare it).

        The ``.shared`` variable of ``tile = wl.shared_array(...)`` is named ``tile`` at
        its line, so a finding about ``k_tile_3`` can say "shared array tile (line 7)"; the
        dynamic shared memory (``__wl_dynamic_shared``) maps to every array assigned from
        ``wl.dynamic_shared_array`` (names joined by ``, ``). A variable LLVM split into
        pieces (``k_tile_3_$_0``) maps like the whole. Arrays not assigned to a plain name
        are left out.
        """
        found: dict[str, tuple[list, list]] = {}
        for a in self.arrays:
            names, lines = found.setdefault(a.symbol, ([], []))
            if a.name and a.name not in names:
                names.append(a.name)
                lines.append(a.line)
        out = {}
        for sym in set(self.ptx_shared):
            names, lines = found.get(re.sub(r"_\$_\d+$", "", sym), ((), ()))
            if names:
                out[sym] = (", ".join(names), tuple(lines))
        return out

    # -- the disk cache's form ---------------------------------------------------------

    def to_json(self) -> dict:
        """The map without this run's names (``filename``, ``cells``: a cache hit gets its
        own, :meth:`for_run`) as JSON."""
        lm = self.rows
        return {**{f: {str(k): list(v) for k, v in getattr(lm, f).items()}
                   for f in ("llvm", "ptx", "sass", "sass_lines")},
                "files": list(lm.files), "arrays": [a.to_json() for a in self.arrays],
                "ptx_shared": list(self.ptx_shared)}

    @classmethod
    def from_json(cls, d: dict, filename: str = "", cells: Mapping[str, str] = None):
        """The map :meth:`to_json` wrote, named for a run (``filename``, ``cells``)."""
        rows = LineMap(**{f: {int(k): v for k, v in d[f].items()}
                          for f in ("llvm", "ptx", "sass", "sass_lines")},
                       files=tuple(d["files"]))
        return cls(rows, filename, cells or {},
                   tuple(SharedArray.from_json(a) for a in d["arrays"]),
                   tuple(d["ptx_shared"]))
