"""Compile one benchmark kernel to PTX with each tool: warp_lab, NVRTC, Numba CUDA, Warp.

Every function returns ``(ptx, entry)``: the PTX text and the name of the
``.entry`` to report on. A peer that cannot run raises :class:`PeerUnavailable`
with the reason (not installed, no twin for this kernel, the tool failed);
the tables print "n/a" with that reason.

Flags, chosen so the comparison is like for like:

* warp_lab: ``wl.compile(kernel, arch=..., cache=False)``, default options
  (``opt=3``, no fast math).
* NVRTC: ``--gpu-architecture=compute_XX`` and nothing else, i.e. NVRTC's
  defaults (device optimisation level 3, ``-prec-div=true``,
  ``-prec-sqrt=true``, ``-ftz=false``, ``-fmad=true``), the same as
  ``nvcc -O3`` for device code; ``restrict=True`` adds
  ``-DRESTRICT=__restrict__`` (see :mod:`benchmarks.kernels.cuda_src`).
* Numba: ``numba.cuda.compile_ptx(fn, sig, cc=(X, Y))`` with its defaults
  (``opt=True``, no fast math, no line info).
* Warp: ``wp.compile_aot_module(module, arch=XX, use_ptx=True)`` into a
  fresh folder (Warp's own defaults: ``-O3``, no fast math).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import tempfile
from typing import Sequence

from benchmarks.kernels import cuda_src, warp_lab_kernel

__all__ = ["PeerUnavailable", "warp_lab_ptx", "nvrtc_ptx", "nvrtc_compile", "numba_ptx",
           "warp_ptx",
           "entry_names", "versions"]

_ENTRY_RE = re.compile(r"^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+([\w$.]+)\s*\(", re.M)


class PeerUnavailable(Exception):
    """A peer cannot compile this kernel here; ``str()`` says why (shown as "n/a: why")."""


def entry_names(ptx: str) -> list[str]:
    """Names of the ``.entry`` functions in a PTX module, in order."""
    return _ENTRY_RE.findall(ptx)


def _sm(arch: str) -> int:
    return int(arch.split("_")[1].rstrip("a"))


# -- warp_lab -----------------------------------------------------------------------------
def warp_lab_ptx(name: str, arch: str):
    """Compile the corpus kernel ``name`` with warp_lab (no cache).

    Returns:
        ``(ptx, entry, compiled_kernel)``.

    Raises:
        PeerUnavailable: warp_lab's compiler is not importable yet or rejects
            the kernel (the message carries warp_lab's own diagnostic).
    """
    try:
        import warp_lab as wl

        ck = wl.compile(warp_lab_kernel(name), arch=arch, cache=False)
    except Exception as exc:  # any failure is a row of the table, not a crash of the run
        raise PeerUnavailable(f"warp_lab: {type(exc).__name__}: {_first_line(exc)}") from None
    return ck.ptx, ck.entry, ck


# -- NVRTC ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def load_nvrtc():
    """``cuda.bindings.nvrtc`` with its library loaded (the ``bench`` extra's NVRTC wheel).

    Raises:
        PeerUnavailable: cuda.bindings or libnvrtc is missing, or NVRTC does not answer.
    """
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise PeerUnavailable(f"cuda.bindings.nvrtc not importable ({exc})") from None
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as exc:  # libnvrtc missing: a RuntimeError from the loader
        raise PeerUnavailable(f"libnvrtc not found (pip install nvidia-cuda-nvrtc): {exc}") \
            from None
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise PeerUnavailable(f"nvrtcVersion failed: {err}")
    return nvrtc


def nvrtc_ptx(name: str, arch: str, restrict: bool = False):
    """Compile the CUDA C++ twin of ``name`` with NVRTC to PTX for ``arch``.

    Args:
        name: benchmark kernel name.
        arch: ``"sm_80"``-style target; NVRTC gets ``compute_80``.
        restrict: define ``RESTRICT`` as ``__restrict__``.

    Returns:
        ``(ptx, entry)``.

    Raises:
        PeerUnavailable: NVRTC is missing, no twin exists, or NVRTC fails
            (with its log).
    """
    if name not in cuda_src.SOURCES:
        raise PeerUnavailable(f"no CUDA C++ twin for {name}")
    return nvrtc_compile(cuda_src.source_of(name), name, arch, restrict), name


def nvrtc_compile(source: str, name: str, arch: str, restrict: bool = False,
                  options: Sequence[str] = ()) -> str:
    """Compile one CUDA C++ translation unit with NVRTC to PTX text (see :func:`nvrtc_ptx`).

    ``options`` are more NVRTC flags (``"-lineinfo"``, ``"--use_fast_math"``).

    Raises:
        PeerUnavailable: NVRTC is missing or fails (with its log).
    """
    nvrtc = load_nvrtc()
    src = source.encode()
    opts = [f"--gpu-architecture=compute_{_sm(arch)}".encode()]
    if restrict:
        opts.append(b"-DRESTRICT=__restrict__")
    opts += [o.encode() for o in options]
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    err, prog = nvrtc.nvrtcCreateProgram(src, f"{name}.cu".encode(), 0, [], [])
    if err != ok:
        raise PeerUnavailable(f"nvrtcCreateProgram: {err}")
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != ok:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = bytearray(size)   # (b" " * 1 would be CPython's shared b" ": see nvrtc._text)
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise PeerUnavailable(f"NVRTC failed on {name}: "
                                  f"{bytes(log).rstrip(bytes(1)).decode(errors='replace')}")
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return bytes(buf).rstrip(b"\0").decode()


# -- Numba CUDA ----------------------------------------------------------------------------
def numba_ptx(name: str, arch: str):
    """Compile the Numba twin of ``name`` with ``numba.cuda.compile_ptx``.

    Returns:
        ``(ptx, entry)`` (the entry name is Numba's mangled one).

    Raises:
        PeerUnavailable: numba-cuda is missing, the CUDA simulator is
            switched on in this process, no twin exists, or Numba fails.
    """
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        raise PeerUnavailable("NUMBA_ENABLE_CUDASIM=1 in this process: no PTX from the simulator")
    try:
        from numba import cuda

        from benchmarks.kernels import numba_twins
    except ImportError as exc:
        raise PeerUnavailable(f"numba-cuda not importable ({exc})") from None
    if name not in numba_twins.TWINS:
        raise PeerUnavailable(f"no Numba twin for {name}")
    fn, sig = numba_twins.signature_of(name)
    sm = _sm(arch)
    try:
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(sm // 10, sm % 10))
    except Exception as exc:
        raise PeerUnavailable(f"Numba failed: {type(exc).__name__}: {_first_line(exc)}") \
            from None
    entries = entry_names(ptx)
    if not entries:
        raise PeerUnavailable("Numba's PTX has no .entry")
    return ptx, entries[0]


# -- Warp ------------------------------------------------------------------------------------
def warp_ptx(name: str, arch: str):
    """Generate PTX for the Warp twin of ``name`` ahead of time (no GPU needed).

    Returns:
        ``(ptx, entry)`` (the forward kernel; Warp appends a NUL byte, removed).

    Raises:
        PeerUnavailable: warp-lang is missing, Warp cannot express the
            kernel (:data:`benchmarks.kernels.warp_twins.MISSING`), or the
            AOT compile fails.
    """
    try:
        import warp as wp

        from benchmarks.kernels import warp_twins
    except ImportError as exc:
        raise PeerUnavailable(f"warp-lang not importable ({exc})") from None
    if name not in warp_twins.TWINS:
        raise PeerUnavailable(warp_twins.MISSING.get(name, f"no Warp twin for {name}"))
    kernel = warp_twins.TWINS[name]
    with tempfile.TemporaryDirectory(prefix="wl-bench-warp-") as tmp:
        try:
            wp.compile_aot_module(kernel.module, arch=_sm(arch), use_ptx=True, module_dir=tmp)
        except Exception as exc:
            raise PeerUnavailable(f"Warp AOT failed: {type(exc).__name__}: "
                                  f"{_first_line(exc)}") from None
        files = glob.glob(os.path.join(tmp, "*.ptx"))
        if not files:
            raise PeerUnavailable("Warp AOT wrote no .ptx")
        with open(files[0], "rb") as f:
            ptx = f.read().rstrip(b"\0").decode()
    entries = [e for e in entry_names(ptx) if e.endswith("_cuda_kernel_forward")]
    if not entries:
        raise PeerUnavailable("Warp's PTX has no forward entry")
    return ptx, entries[0]


# -- versions --------------------------------------------------------------------------------
def versions() -> dict[str, str]:
    """Version of each peer importable in this process (or why it is not)."""
    out = {}
    try:
        err, major, minor = load_nvrtc().nvrtcVersion()
        out["NVRTC"] = f"{major}.{minor}"
    except PeerUnavailable as exc:
        out["NVRTC"] = f"n/a: {exc}"
    for label, module in (("numba-cuda", "numba_cuda"), ("numba", "numba"),
                          ("warp-lang", "warp"), ("llvmlite", "llvmlite")):
        try:
            from importlib.metadata import version

            out[label] = version({"numba_cuda": "numba-cuda", "warp": "warp-lang"}
                                 .get(module, module))
        except Exception as exc:  # PackageNotFoundError and friends
            out[label] = f"n/a: {type(exc).__name__}"
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
