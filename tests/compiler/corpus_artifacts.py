"""Compile corpus kernels once per test session; shared by the corpus, ABI and line-map tests.

Two ways, both with real tools and the artifact cache bypassed (so every
session really compiles):

* :func:`compiled` runs ``wl.compile`` (the whole pipeline, nvdisasm
  included);
* :func:`assembled` runs the documented stages up to ptxas
  (``frontend.make_typed_ast → lower.make_llvm_ir → nvptx.make_ptx →
  toolchain.make_cubin``), for architecture sweeps that need PTX, a cubin and
  resources but not SASS. nvdisasm costs about 0.85 s per call on the 2-core
  machine (nvdisasm 13.5, even for a tiny cubin), ptxas 30-250 ms, which is
  why the sweeps stop at ptxas.
"""

from __future__ import annotations

from dataclasses import dataclass

import warp_lab as wl
from warp_lab.compiler import frontend, lower, nvptx, toolchain
from warp_lab.compiler.artifact import Resources
from warp_lab.options import CompileOptions

_COMPILED: dict = {}
_ASSEMBLED: dict = {}


def compiled(ex, arch: str = "sm_90", opt: int = 3):
    """``wl.compile(ex.kernel, arch=arch, opt=opt, cache=False)``, once per session."""
    key = (ex.name, arch, opt)
    if key not in _COMPILED:
        _COMPILED[key] = wl.compile(ex.kernel, arch=arch, opt=opt, cache=False)
    return _COMPILED[key]


@dataclass(frozen=True)
class Assembled:
    """PTX, cubin and resources of one kernel for one arch (no SASS)."""

    entry: str
    ptx: str
    cubin: bytes
    resources: Resources
    params: tuple


def assembled(ex, arch: str, opt: int = 3) -> Assembled:
    """The pipeline's stages up to ptxas, once per session (reuses :func:`compiled`)."""
    key = (ex.name, arch, opt)
    if key in _COMPILED:
        ck = _COMPILED[key]
        return Assembled(ck.entry, ck.ptx, ck.cubin, ck.resources, ck.params)
    if key not in _ASSEMBLED:
        options = CompileOptions(arch=arch, opt=opt)
        lowered = lower.make_llvm_ir(frontend.make_typed_ast(ex.kernel, options), options)
        _, ptx = nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry)
        cubin, resources, _ = toolchain.make_cubin(ptx, options, lowered.entry)
        _ASSEMBLED[key] = Assembled(lowered.entry, ptx, cubin, resources, tuple(lowered.params))
    return _ASSEMBLED[key]
