"""The record every corpus kernel comes with: inputs, launch, reference, tolerance.

An :class:`Example` is what the compiler, simulator, runtime and benchmark
tests need to use a kernel without knowing it: how to make its arguments
(numpy, fixed seed), how to launch it, which arguments it writes, what numpy
says those outputs must be, and how closely they must agree.

References are written with numpy, independently of the kernel's Python
body (which is never executed on the host).

Exactness rules used by the corpus (see :class:`Tolerance`):

* integer work, copies, and float32 work whose operations are ``.rn``
  rounded in the same order as the numpy reference: exact;
* products and sums on *dyadic* inputs (:func:`dyadic`: small multiples of
  1/256) are exact in float32 whatever the order or contraction into FMA,
  so kernels such as saxpy or the tiled matmul are compared exactly;
* libdevice math, approximate instructions, and reductions whose order
  differs from numpy's: ``rtol``/``atol``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

__all__ = ["Launch", "Tolerance", "Example", "PlantedBug", "EXACT", "rng", "dyadic", "pick"]


@dataclass(frozen=True)
class Launch:
    """How to launch an example.

    Either ``dim`` (a ``wl.launch(kernel, dim=...)`` launch: an int, or a
    tuple ``(n0, n1[, n2])`` whose last entry is the fastest index, mapped to
    ``x``) with ``block_dim`` threads per block, or an explicit ``grid`` and
    ``block`` (``(x, y, z)`` tuples, CUDA order).

    Attributes:
        dim: launch extent(s) for ``wl.tid()``, or None.
        grid: blocks per grid ``(x, y, z)``, or None.
        block: threads per block ``(x, y, z)``, or None.
        block_dim: threads per block of a ``dim=`` launch (default 256).
        shared_mem: dynamic shared memory per block, bytes (for kernels that
            use ``wl.dynamic_shared_array``).
    """

    dim: int | tuple[int, ...] | None = None
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    block_dim: int = 256
    shared_mem: int = 0

    def __post_init__(self):
        if (self.dim is None) == (self.grid is None):
            raise ValueError("give either dim= or grid=/block=")
        if self.grid is not None and self.block is None:
            raise ValueError("grid= needs block=")

    def kwargs(self) -> dict:
        """Keyword arguments for ``wl.launch`` (``dim``/``block_dim`` or ``grid``/``block``,
        and ``shared_mem`` when there is dynamic shared memory)."""
        extra = {"shared_mem": self.shared_mem} if self.shared_mem else {}
        if self.dim is not None:
            return {"dim": self.dim, "block_dim": self.block_dim, **extra}
        return {"grid": self.grid, "block": self.block, **extra}

    @property
    def threads(self) -> int:
        """Threads the launch starts (a ``dim=`` launch: the ``dim`` product)."""
        if self.dim is not None:
            return int(np.prod(self.dim))
        return int(np.prod(self.grid)) * int(np.prod(self.block))

    def grid_block(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """The explicit ``(grid, block)`` this launch runs as, ``(x, y, z)`` each.

        A ``dim=`` launch is shaped by the runtime's own rule
        (:func:`warp_lab.runtime.launch.launch_geometry`), so a test that
        needs block and thread indices (e.g. of a planted bug) sees the ones
        ``wl.launch`` uses.
        """
        if self.grid is not None:
            return tuple(self.grid), tuple(self.block)
        from warp_lab.runtime.launch import launch_geometry

        ndim = 1 if isinstance(self.dim, int) else len(self.dim)
        grid, block, _ = launch_geometry(ndim, dim=self.dim, block_dim=self.block_dim)
        return tuple(grid), tuple(block)


@dataclass(frozen=True)
class Tolerance:
    """How an output is compared with its reference.

    Attributes:
        rtol: relative tolerance (``numpy.testing.assert_allclose``).
        atol: absolute tolerance.
        unordered: compare sorted values (outputs whose order depends on
            thread scheduling, e.g. slots handed out by ``atomic_add``).

    ``rtol == atol == 0`` means exact: equal values, NaNs equal, dtype and
    shape equal.
    """

    rtol: float = 0.0
    atol: float = 0.0
    unordered: bool = False

    @property
    def exact(self) -> bool:
        return self.rtol == 0.0 and self.atol == 0.0

    def check(self, name: str, actual, expected) -> None:
        """Assert that ``actual`` matches ``expected``.

        Raises:
            AssertionError: with the output name, the first mismatching
                index and both values.
        """
        actual = np.asarray(actual)
        expected = np.asarray(expected)
        if actual.shape != expected.shape:
            raise AssertionError(f"{name}: shape {actual.shape}, expected {expected.shape}")
        if actual.dtype != expected.dtype:
            raise AssertionError(f"{name}: dtype {actual.dtype}, expected {expected.dtype}")
        if self.unordered:
            actual = np.sort(actual, axis=None)
            expected = np.sort(expected, axis=None)
        if self.exact:
            same = (actual == expected) | _both_nan(actual, expected)
        else:
            same = np.isclose(actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=True)
        if not np.all(same):
            bad = np.argwhere(~np.asarray(same))
            first = tuple(int(k) for k in bad[0])
            raise AssertionError(
                f"{name}: {len(bad)} of {same.size} elements differ "
                f"({'exact' if self.exact else f'rtol={self.rtol}, atol={self.atol}'}); "
                f"first at {first}: got {actual[first]!r}, expected {expected[first]!r}")


def _both_nan(a, b):
    if a.dtype.kind == "f":
        return np.isnan(a) & np.isnan(b)
    return np.zeros(a.shape, dtype=bool)


EXACT = Tolerance()


@dataclass(frozen=True)
class Example:
    """One corpus kernel with everything needed to run and check it.

    Attributes:
        name: unique name (usually the kernel's).
        kernel: the ``@wl.kernel``.
        make_inputs: ``make_inputs(size="small") -> list`` of arguments in
            parameter order (numpy arrays, possibly non-contiguous views, and
            Python scalars). ``"small"`` keeps a CPU simulator launch well
            under a second; ``"bench"`` is a realistic size for benchmarks.
            Deterministic: the same call returns equal arrays.
        launch: ``launch(args) -> Launch`` for those arguments.
        reference: ``reference(*args) -> {output name: expected array}``,
            numpy only, given (copies of) the arguments before the launch.
        outputs: the parameter names the kernel writes (checked), in order.
        tolerance: per-output :class:`Tolerance`; outputs not listed use
            ``default_tolerance``.
        default_tolerance: tolerance of outputs not in ``tolerance`` (exact).
        printed: for kernels that print, ``printed(args) -> list of lines``
            the launch must print, in any order (None when it prints nothing).
        description: one line on what the kernel shows.
        min_sm: the oldest SM the kernel compiles for (an instruction it uses, e.g.
            ``redux.sync`` from sm_80); tests skip older architectures.
    """

    name: str
    kernel: object
    make_inputs: Callable[..., list]
    launch: Callable[[list], Launch]
    reference: Callable[..., Mapping[str, np.ndarray]]
    outputs: tuple[str, ...]
    tolerance: Mapping[str, Tolerance] = field(default_factory=dict)
    default_tolerance: Tolerance = EXACT
    printed: Callable[[list], list[str]] | None = None
    description: str = ""
    min_sm: int = 50

    @property
    def param_names(self) -> list[str]:
        """The kernel's parameter names, in order."""
        return list(inspect.signature(self.kernel.fn).parameters)

    def output_indices(self) -> dict[str, int]:
        """Output name -> position in the argument list."""
        names = self.param_names
        return {o: names.index(o) for o in self.outputs}

    def tolerance_of(self, output: str) -> Tolerance:
        return self.tolerance.get(output, self.default_tolerance)

    def expected(self, args) -> dict[str, np.ndarray]:
        """Run the numpy reference on copies of ``args`` (the inputs are not touched)."""
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        return dict(self.reference(*copies))

    def check(self, args_before, args_after) -> None:
        """Assert that a launch's outputs match the reference.

        Args:
            args_before: the arguments as :attr:`make_inputs` made them (or
                a copy taken before the launch).
            args_after: the same arguments after the launch (numpy arrays,
                or anything ``numpy.asarray`` reads, e.g. ``wl.array``).

        Raises:
            AssertionError: naming the output and the first mismatch.
        """
        expected = self.expected(args_before)
        for name, k in self.output_indices().items():
            self.tolerance_of(name).check(f"{self.name}.{name}", np.asarray(args_after[k]),
                                          expected[name])


@dataclass(frozen=True)
class PlantedBug:
    """A kernel with a deliberate bug that the simulator's checks must report.

    Attributes:
        name: unique name.
        kernel: the ``@wl.kernel``.
        make_inputs: ``make_inputs() -> list`` of arguments.
        launch: ``launch(args) -> Launch``.
        check: which check finds it: ``"memcheck"``, ``"racecheck"``,
            ``"initcheck"`` (uninitialised shared memory), ``"barrier"``
            (divergent barrier) or ``"budget"`` (runaway loop).
        kind: what the report should say happened, e.g.
            ``"out-of-bounds write"``, ``"out-of-bounds read"``,
            ``"read-after-write hazard"``, ``"uninitialized shared read"``,
            ``"divergent barrier"``, ``"instruction budget exceeded"``.
        marker: a substring of the offending source line (the line the
            report must name); see :meth:`line`.
        block: the block ``(x, y, z)`` of the first offending thread, or None
            when every thread offends.
        thread: its thread index in the block ``(x, y, z)``, or None.
        description: the bug in one sentence.
    """

    name: str
    kernel: object
    make_inputs: Callable[[], list]
    launch: Callable[[list], Launch]
    check: str
    kind: str
    marker: str
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    description: str = ""

    def line(self) -> int:
        """File line of the offending statement (the one containing :attr:`marker`).

        Raises:
            LookupError: the marker is missing or not unique.
        """
        return source_line(self.kernel, self.marker)


def source_line(kernel, marker: str) -> int:
    """File (or cell) line of the unique line of ``kernel``'s source containing ``marker``.

    Args:
        kernel: a ``Kernel`` or ``Func`` (anything with ``.source``).
        marker: a substring of exactly one source line.

    Raises:
        LookupError: the marker occurs on no line or on several.
    """
    src = kernel.source
    hits = [k for k, text in enumerate(src.text.splitlines()) if marker in text]
    if len(hits) != 1:
        raise LookupError(f"marker {marker!r} occurs on {len(hits)} lines of {kernel.name}")
    return src.first_line + hits[0]


def rng(name: str) -> np.random.Generator:
    """A generator seeded from ``name``, so every example's inputs are fixed."""
    return np.random.default_rng(sum(name.encode()) * 7919 + len(name))


def dyadic(gen: np.random.Generator, shape, scale: int = 2048, denom: int = 256,
           dtype=np.float32) -> np.ndarray:
    """Random multiples of ``1/denom`` in ``(-scale/denom, scale/denom)``.

    Their products have at most 24 significant bits, and sums of a few
    hundred of them stay exact in float32: results are exact whatever the
    summation order or FMA contraction.
    """
    return (gen.integers(-scale, scale, size=shape) / denom).astype(dtype)


def pick(size: str, small, bench):
    """``small`` or ``bench`` by the ``size`` name.

    Raises:
        ValueError: ``size`` is neither ``"small"`` nor ``"bench"``.
    """
    if size == "small":
        return small
    if size == "bench":
        return bench
    raise ValueError(f"size must be 'small' or 'bench', not {size!r}")
