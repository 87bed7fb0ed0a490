"""``wl.compile`` of a CUDA C++ kernel (:class:`~warp_lab.lang.cuda.CudaKernel`).

    NVRTC (-lineinfo, name expressions) → PTX of the translation unit
      → the kernel's parameters (its mangled signature + the source's names), checked
        against the entry's PTX ``.param`` declarations
      → toolchain.make_cubin → toolchain.disassemble → linemap.build_line_map
      (into the SourceMap)
      → CompiledKernel (language "cuda", no LLVM IR: NVRTC does not expose its NVVM IR)

The translation unit is compiled once per set of options: its kernels share that PTX
(one module, every entry), each kernel's CompiledKernel naming its own entry.

The parameter types come from NVRTC itself: a probe ``template <typename F> __device__
int __wl_sig;`` is appended to the source (after its last line, so no line moves) and the
name expression ``&__wl_sig<decltype(KERNEL)>`` lowers to a mangled name that spells the
kernel's function type after the preprocessor, typedefs and template arguments
(:func:`~warp_lab.compiler.cuda_source.demangle_function_type`); the probe variables'
declarations are removed from the PTX before anything reads it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time

from warp_lab.compiler import abi, cuda_source, linemap, nvrtc, toolchain
from warp_lab.compiler.artifact import SHARED_DECL, CompiledKernel
from warp_lab.compiler.source_map import SharedArray, SourceMap
from warp_lab.errors import InternalCompilerError, KernelCompileError, ToolchainError
from warp_lab.lang import types as T
from warp_lab.lang.kernel import is_cell_file
from warp_lab.options import KERNEL_OPTION_DEFAULTS, CompileOptions, check_options

__all__ = ["compile_cuda", "nvrtc_options", "CudaCompileError", "param_types",
           "ptx_params", "SCALAR_TYPES", "VECTOR_TYPES"]

_PROBE = "__wl_sig"
_PROBE_DECL = f"\ntemplate <typename F> __device__ int {_PROBE} = 0;\n"
_FORMAT = 1


class CudaCompileError(KernelCompileError):
    """NVRTC refused a CUDA C++ source, or a kernel's signature is one warp_lab cannot
    launch (a struct by value, a reference): located at the cell's line and column, the
    source line quoted with a caret (:class:`~warp_lab.errors.KernelCompileError`).

    Attributes:
        log: NVRTC's whole log ("" for a signature error).
        diagnostics: every error of the log (:class:`~warp_lab.compiler.nvrtc.Diagnostic`),
            the first being the one this error locates.
    """

    def __init__(self, *args, log: str = "", diagnostics=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.log = log
        self.diagnostics = tuple(diagnostics)


#: C++ builtin type (as the mangled name spells it) -> warp_lab scalar. ``char`` is
#: signed on the platforms NVRTC targets; ``long`` is 64-bit (LP64).
SCALAR_TYPES = {
    "bool": T.bool_, "char": T.int8, "signed char": T.int8, "unsigned char": T.uint8,
    "short": T.int16, "unsigned short": T.uint16, "int": T.int32, "unsigned int": T.uint32,
    "long": T.int64, "unsigned long": T.uint64, "long long": T.int64,
    "unsigned long long": T.uint64, "float": T.float32, "double": T.float64,
    "__half": T.float16, "_Float16": T.float16, "half": T.float16,
}

#: CUDA's built-in vector types (CUDA Programming Guide, "Built-in Vector Types") as
#: array elements: name -> (component, count)
VECTOR_TYPES = {
    f"{prefix}{n}": (scalar, n)
    for prefix, scalar in (("char", T.int8), ("uchar", T.uint8), ("short", T.int16),
                           ("ushort", T.uint16), ("int", T.int32), ("uint", T.uint32),
                           ("long", T.int64), ("ulong", T.uint64), ("longlong", T.int64),
                           ("ulonglong", T.uint64), ("float", T.float32),
                           ("double", T.float64))
    for n in (1, 2, 3, 4)
}


def _element(ct: cuda_source.CType):
    """A pointer's element type, or None."""
    if ct.kind == "builtin":
        return SCALAR_TYPES.get(ct.name)
    if ct.kind == "class":
        if ct.name in ("__half",):
            return T.float16
        if ct.name == "__half2":
            return T.CudaVector(T.float16, 2, "__half2")
        # bfloat16 has no NumPy dtype: its arrays pass as their 16-bit patterns
        # (np.float32 values' upper halves: (f.view(np.uint32) >> 16).astype(np.uint16))
        if ct.name == "__nv_bfloat16":
            return T.uint16
        if ct.name == "__nv_bfloat162":
            return T.CudaVector(T.uint16, 2, "__nv_bfloat162")
        if ct.name in VECTOR_TYPES:
            scalar, n = VECTOR_TYPES[ct.name]
            return scalar if n == 1 else T.CudaVector(scalar, n, ct.name)
    return None


def param_types(kernel, ctypes: list, names: tuple) -> list[tuple[str, T.Type]]:
    """The ``(name, Type)`` parameters of a kernel from its C++ parameter types.

    Pointers to a scalar or a CUDA vector type become :class:`~warp_lab.lang.types.
    PointerType`; ``bool``, the integer types, ``float``, ``double`` and ``__half`` by value
    their scalar; a CUDA vector type by value (``float2 c``) its
    :class:`~warp_lab.lang.types.CudaVector` (a launch passes its components).

    Raises:
        CudaCompileError: a parameter of another type (a struct, union or vector by
            value, a reference, a pointer to a struct), at the kernel's line.
    """
    out = []
    if len(names) != len(ctypes):   # (a macro in the parameter list): positional names
        names = tuple(f"param_{k}" for k in range(len(ctypes)))
    for k, (ct, name) in enumerate(zip(ctypes, names)):
        name = name or f"param_{k}"
        if ct.kind == "pointer" and ct.target is not None:
            elem = _element(ct.target)
            if elem is not None:
                out.append((name, T.PointerType(elem, ct.target.const, ct.spelling())))
                continue
            why = f"a pointer to {ct.target.spelling()}, which has no NumPy dtype here"
        elif ct.kind == "builtin" and ct.name in SCALAR_TYPES:
            out.append((name, SCALAR_TYPES[ct.name]))
            continue
        elif ct.kind == "class" and ct.name == "__half":
            out.append((name, T.float16))
            continue
        elif ct.kind == "class" and isinstance(_element(ct), T.CudaVector) \
                and ct.name not in ("__half2", "__nv_bfloat162"):
            out.append((name, _element(ct)))   # float2 c: its components, CUDA-aligned
            continue
        elif ct.kind == "class":
            why = (f"{ct.spelling()} passed by value (a struct, or a vector type without a "
                   "NumPy dtype); a kernel here takes pointers, scalars and CUDA's float/int/"
                   "double vector types")
        elif ct.kind == "reference":
            why = f"a reference ({ct.spelling()}), which a kernel cannot take"
        else:
            why = f"of type {ct.spelling()}"
        src = kernel.source
        line, col = _parameter_at(src, kernel.decl.line, name)
        raise CudaCompileError(
            f"kernel {kernel.expression}: parameter {name!r} is {why}", src.filename,
            line, col, src.line(line),
            hint="pass the struct's fields as separate parameters, or a pointer to an array "
                 "of scalars or of CUDA vector types (float4*, int2*, ...)")
    return out


def _parameter_at(src, line: int, name: str) -> tuple[int, int]:
    """``(line, 1-based column)`` of parameter ``name`` in the signature starting at ``line``
    (the kernel's name line; the signature may run over the next lines), else ``(line, 0)``."""
    for k in range(line, line + 20):
        m = re.search(rf"\b{re.escape(name)}\b\s*(?=[,)=\[]|$)", src.line(k))
        if m:
            return k, m.start() + 1
    return line, 0


_PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.([busf])(\d+)\s+(?:\.ptr\s+"
                    r"(?:\.\w+\s+)*)?([\w$]+)(?:\[(\d+)\])?")


def ptx_params(ptx: str, entry: str) -> list[tuple[int, int]]:
    """``(size, align)`` of each ``.param`` of PTX entry ``entry`` (PTX ISA, "Kernel
    Function Parameters": ``.param .u64 p``, ``.param .align 2 .b8 h[2]``)."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((.*?)\)", ptx, re.S)
    if m is None:
        return []
    out = []
    for p in _PARAM.finditer(m.group(1)):
        bits = int(p.group(3))
        count = int(p.group(5)) if p.group(5) else 1
        align = int(p.group(1)) if p.group(1) else bits // 8
        out.append((bits // 8 * count, align))
    return out


def nvrtc_options(program, options: CompileOptions) -> list[str]:
    """The NVRTC command line of a compile: ``--gpu-architecture=compute_XX``,
    ``-lineinfo``, ``-G`` for ``debug``, ``--use_fast_math``, ``-Xnvvm -opt=N`` below
    NVVM's default 3, ``--std``, the ``-D`` defines and ``-I`` of the CUDA headers."""
    out = [f"--gpu-architecture=compute_{options.arch.split('_')[1]}"]
    if options.lineinfo:
        out.append("-lineinfo")
    if options.debug:
        out.append("-G")
    if options.fast_math:
        out.append("--use_fast_math")
    if options.opt != 3 and not options.debug:
        out += ["-Xnvvm", f"-opt={int(options.opt)}"]
    if program.std:
        out.append(f"--std={program.std}")
    out += [f"-D{k}" + ("" if v is None else f"={v}") for k, v in program.defines]
    out += [f"-I{d}" for d in nvrtc.include_directories()]
    return out


def _artifact_name(program, kernels) -> str:
    """The name the source has in the artifacts: a cell's content-derived name
    (``<cell of saxpy>``, as :func:`warp_lab.compiler.cache.artifact_files` names a
    Python cell), a real file's path as it is."""
    filename = program.source.filename
    if is_cell_file(filename) or not os.path.isabs(filename):
        first = kernels[0].decl.name if kernels else "source"
        return f"<cell of {re.sub(r'[^A-Za-z0-9_]', '_', first)}>"
    return filename


# the translation unit's PTX per (program text, options, ...): its kernels share one compile
_MODULES: dict[str, tuple] = {}
_MAX_MODULES = 64


def _module(kernel, options: CompileOptions, artifact: str, key: str, timings: dict):
    """``(ptx, lowered names, signatures, log)`` of ``kernel``'s translation unit, compiled
    once per key."""
    hit = _MODULES.get(key)
    if hit is not None:
        return hit
    from warp_lab.lang.cuda import _kernels

    program = kernel.program
    kernels = list(_kernels(program, {}).values())
    exprs = [k.expression for k in kernels]
    probes = {e: f"&{_PROBE}<decltype({e})>" for e in exprs}
    text = program.source.text
    t0 = time.perf_counter()
    try:
        res = nvrtc.compile_program(text + _PROBE_DECL, artifact, nvrtc_options(program, options),
                                    exprs + list(probes.values()))
    except nvrtc.NvrtcError as exc:
        raise _located(exc, program, artifact, len(text)) from None
    timings["nvrtc"] = time.perf_counter() - t0
    ptx = _clean_ptx(res.ptx, artifact)
    sigs = {}
    for e in exprs:
        try:
            sigs[e] = cuda_source.demangle_function_type(res.lowered[probes[e]])
        except (KeyError, ValueError) as exc:
            raise InternalCompilerError(f"cannot read the signature of CUDA kernel {e!r} "
                                        f"({exc})", "nvrtc", kernel=e) from exc
    out = (ptx, {e: res.lowered[e] for e in exprs}, sigs, res.log)
    if len(_MODULES) >= _MAX_MODULES:
        _MODULES.pop(next(iter(_MODULES)))
    _MODULES[key] = out
    return out


def _clean_ptx(ptx: str, artifact: str) -> str:
    """NVRTC's PTX without the signature probes' variables, its ``.file`` of the source
    named ``artifact`` (NVRTC prefixes a relative program name with the process's working
    folder, which would put the folder in the cache key and the panes)."""
    ptx = re.sub(r"^\s*\.global\s+\.align\s+\d+\s+\.u32\s+_Z\d+" + _PROBE + r"\w*;\n", "",
                 ptx, flags=re.M)
    ptx = re.sub(r'^(\s*\.file\s+\d+\s+")([^"]*)(")',
                 lambda m: m.group(1) + (artifact if m.group(2).endswith("/" + artifact)
                                         else m.group(2)) + m.group(3), ptx, flags=re.M)
    return ptx


def _located(exc: nvrtc.NvrtcError, program, artifact: str, length: int) -> CudaCompileError:
    """NVRTC's failure as a located :class:`CudaCompileError` at its first error in the
    user's source (the log's other errors in ``diagnostics`` and the hint)."""
    src = program.source
    errors = [d for d in exc.diagnostics if "error" in d.severity]
    own = [d for d in errors if d.filename in (artifact, src.filename)]
    probe = [d for d in errors if d.filename == "__nv_name_map"]
    if not own and probe:   # an instantiation or overload NVRTC cannot name
        d = probe[0]
        return CudaCompileError(
            f"NVRTC cannot name a kernel: {d.message}", src.filename, 0, hint=(
                "an --instantiate must name a kernel template with arguments it accepts; "
                "an overloaded __global__ function (two kernels of one name) is not "
                "supported: rename one"), log=exc.log, diagnostics=errors)
    first = (own or errors or [None])[0]
    if first is None:
        return CudaCompileError(f"NVRTC failed ({exc.result}): {exc.log.strip()[:2000]}",
                                src.filename, 0, log=exc.log)
    line = first.line if first in own else 0
    more = [f"line {d.line}: {d.message}" for d in own[1:6]]
    hint = ("also " + "; ".join(more) + (" ..." if len(own) > 6 else "")) if more else ""
    where = "" if first in own else f" (in {first.filename}, line {first.line})"
    # (the box says "error:" itself; NVRTC stops at a catastrophic one)
    tail = " (a catastrophic error: NVRTC stopped there)" if "catastrophic" in first.severity \
        else ""
    return CudaCompileError(f"{first.message}{where}{tail}", src.filename, line,
                            first.col if first in own else 0,
                            src.line(line) if line else "", hint, log=exc.log,
                            diagnostics=errors)


def _shared(kernel, ptx: str, entry: str) -> tuple[SharedArray, ...]:
    """One :class:`~warp_lab.compiler.source_map.SharedArray` per ``__shared__`` array in
    entry ``entry`` (as a Python kernel's source map has them): the PTX symbol, the C++
    name (:func:`~warp_lab.compiler.cuda_source.local_name`), the declaring line, the
    element type when warp_lab names it and the extents when the source's declaration
    gives them and they match the PTX's byte size."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(.*?\)\s*\{", ptx, re.S)
    if m is None:
        return ()
    body_end = ptx.find("\n}", m.end())
    body = ptx[m.end(): body_end if body_end > 0 else len(ptx)]
    symbols = [(s.group(1), s.group(0)) for s in SHARED_DECL.finditer(body)]
    symbols += [(s.group(1), s.group(0)) for s in SHARED_DECL.finditer(ptx[: m.start()])
                if s.group(1) in body]
    program = kernel.program
    decls = cuda_source.shared_declarations(program.source.text, kernel.decl.body,
                                            program.defines_dict)
    decls += cuda_source.shared_declarations(program.source.text, None,
                                             program.defines_dict)
    arrays = []
    seen = set()
    for sym, text in symbols:
        if sym in seen:
            continue
        seen.add(sym)
        name = cuda_source.local_name(sym) or sym
        d = next((d for d in decls if d.name == name), None)
        if d is None:
            continue
        elem = SCALAR_TYPES.get(d.ctype) or _element(cuda_source.CType("class", d.ctype))
        nbytes = re.search(re.escape(sym) + r"\[(\d+)\]", ptx)
        shape = None
        if elem is not None and d.dims and nbytes:
            count = 1
            for n in d.dims:
                count *= n
            if count * elem.size == int(nbytes.group(1)):
                shape = tuple(d.dims)
        arrays.append(SharedArray(sym, name, d.line, elem and elem.name, elem and elem.size,
                                  shape, 0 if elem is not None else None))
    return tuple(arrays)


def _key(kernel, options: CompileOptions, artifact: str, versions: dict) -> str:
    from warp_lab.compiler.cache import compiler_sources_hash

    p = kernel.program
    h = hashlib.sha256()
    for part in (f"cuda format={_FORMAT}", compiler_sources_hash(), p.source.text, artifact,
                 json.dumps([list(d) for d in p.defines]), str(p.std),
                 json.dumps(list(p.instantiate)), kernel.expression,
                 json.dumps(dataclasses.asdict(options), sort_keys=True),
                 json.dumps(versions, sort_keys=True)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile_cuda(kernel, arch=None, opt=None, fast_math=None, debug=None, lineinfo=True,
                 maxrregcount=None, cache: bool = True, sass: bool = True,
                 life_ranges: bool = False) -> CompiledKernel:
    """Compile one CUDA C++ kernel (what ``wl.compile`` does for a
    :class:`~warp_lab.lang.cuda.CudaKernel`).

    Args:
        kernel: the :class:`~warp_lab.lang.cuda.CudaKernel`.
        arch, opt, fast_math, debug, lineinfo, maxrregcount: as for ``wl.compile``; None
            takes the kernel's own (``kernel.options``), else the default. ``opt`` is
            NVVM's level (``-Xnvvm -opt=N``), ``debug`` NVRTC's ``-G``.
        cache, sass, life_ranges: as for ``wl.compile``.

    Returns:
        the :class:`CompiledKernel` (``language`` ``"cuda"``, ``llvm_ir`` empty,
        ``missing["llvm_ir"]`` saying why).

    Raises:
        CudaCompileError: NVRTC refused the source (its first error located in the
            source), or a parameter type cannot be launched.
        ValueError: an option out of range.
        ToolchainError: NVRTC is not installed.
    """
    from warp_lab.compiler import cache as _cache
    from warp_lab.compiler.pipeline import (_NOT_REQUESTED, _complete, _disassemble,
                                            _from_cache, toolchain_versions)

    own = {**KERNEL_OPTION_DEFAULTS, **kernel.options}
    arch = own["arch"] if arch is None else arch
    opt = own["opt"] if opt is None else opt
    fast_math = own["fast_math"] if fast_math is None else fast_math
    debug = own["debug"] if debug is None else debug
    maxrregcount = own["maxrregcount"] if maxrregcount is None else maxrregcount
    try:
        check_options(arch=arch, opt=opt, maxrregcount=maxrregcount, fast_math=fast_math,
                      debug=debug, lineinfo=lineinfo, cache=cache, sass=sass,
                      life_ranges=life_ranges)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    options = CompileOptions(arch=arch, opt=int(opt), fast_math=bool(fast_math),
                             debug=bool(debug), lineinfo=bool(lineinfo),
                             maxrregcount=None if maxrregcount is None else int(maxrregcount),
                             entry_guard=False, read_only_cache=False)
    t_start = time.perf_counter()
    from warp_lab.lang.cuda import _kernels

    artifact = _artifact_name(kernel.program, list(_kernels(kernel.program, {}).values()))
    files = {artifact: kernel.source.filename} if artifact != kernel.source.filename else {}
    versions = {**toolchain_versions(arch), "nvrtc": nvrtc.version(),
                "headers": list(nvrtc.include_directories())}
    key = _key(kernel, options, artifact, versions)
    if cache:
        hit = _from_cache(key, sass, life_ranges)
        if hit is not None:
            return dataclasses.replace(
                hit, timings={**hit.timings, "cache": time.perf_counter() - t_start},
                source=kernel.source, kernel=kernel,
                source_map=hit.source_map.for_run(kernel.source.filename, files))
    timings: dict[str, float] = {}
    # the translation unit is compiled once for all its kernels: keyed without the kernel
    module_key = _key(_ModuleKey(kernel), options, artifact, versions)
    ptx, lowered, sigs, log = _module(kernel, options, artifact, module_key, timings)
    entry = lowered[kernel.expression]
    params = param_types(kernel, sigs[kernel.expression], kernel.decl.param_names)
    layout = abi.param_layout(params, hidden=False)
    declared = ptx_params(ptx, entry)
    if [(s.size, s.align) for s in layout] != declared:
        raise InternalCompilerError(
            f"the parameters of CUDA kernel {kernel.expression} ({', '.join(repr(t) for _, t in params)}) "
            f"lay out as {[(s.size, s.align) for s in layout]} but the PTX declares {declared}",
            "nvrtc", kernel=kernel.expression)

    missing: dict[str, str] = {"llvm_ir": "NVRTC does not expose its NVVM IR: a CUDA C++ "
                                          "kernel has CUDA C++, PTX and SASS"}
    cubin = sass_text = ranges = resources = None
    t3 = time.perf_counter()
    try:
        cubin, resources, _ = toolchain.make_cubin(ptx, options, entry)
    except ToolchainError as exc:
        missing["cubin"] = missing["resources"] = missing["sass"] = str(exc)
    t4 = time.perf_counter()
    timings["ptxas"] = t4 - t3
    if cubin is not None and (sass or life_ranges):
        sass_text, ranges = _disassemble(cubin, arch, resources, sass, life_ranges, missing)
        timings["nvdisasm"] = time.perf_counter() - t4
    if cubin is not None and not sass:
        missing["sass"] = _NOT_REQUESTED
    others = sorted({f for f in re.findall(r'^\s*\.file\s+\d+\s+"([^"]*)"', ptx, re.M)}
                    - {artifact})
    source_map = SourceMap(linemap.build_line_map("", ptx, sass_text, artifact, others),
                           kernel.source.filename, files, _shared(kernel, ptx, entry),
                           tuple(SHARED_DECL.findall(ptx)))
    timings["total"] = time.perf_counter() - t_start
    ck = CompiledKernel(
        name=kernel.name, entry=entry, source=kernel.source, options=options,
        params=tuple(params), param_layout=layout, launch_ndim=1, llvm_ir="",
        llvm_ir_optimized="", ptx=ptx, cubin=cubin, sass=sass_text, life_ranges=ranges,
        resources=resources, source_map=source_map, timings=timings, missing=missing,
        toolchain=versions, cache_key=key if cache else "", entry_guard=False,
        written_params=tuple(n for n, t in params
                             if isinstance(t, T.PointerType) and not t.const),
        kernel=kernel, language="cuda")
    if cache and _complete(ck.missing):
        _cache.default_cache().put(key, ck)
    return ck


@dataclasses.dataclass(frozen=True)
class _ModuleKey:
    """A kernel's program under the expression "" (its translation unit's module key)."""

    kernel: object

    @property
    def program(self):
        return self.kernel.program

    expression = ""
