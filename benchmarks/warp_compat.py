"""Warp compatibility harness: warp-lang's own kernels on warp_lab's simulator vs Warp's CPU.

    python -m benchmarks.warp_compat [--subset | --files test_bool.py,...] [--json F.json]
                                     [--md-out F.md] [--from-json F.json]

The whole corpus takes about 8 minutes on a quiet 2-core machine (25 on a busy one);
``--subset`` runs the fixed :data:`SUBSET` (what ``python -m benchmarks`` runs unless given
``--warp-compat full``).

For each file of the installed wheel's ``warp/examples/core/*.py`` and ``warp/tests/*.py``:
its top-level imports, simple constants, ``@wp.func``/``@wp.kernel``/``@wp.struct``
definitions are cut out (the unittest scaffolding is left behind), written twice, once
with ``import warp as wp`` and once with ``import warp_lab.warp as wp``; a worker process
(warp-lang can crash on a bad input) makes inputs for every kernel from its annotations
(seeded random arrays of 16 elements per axis, ints in [0, 4), scalars 2 / 0.5), launches
it on Warp's CPU device and saves inputs and outputs; then the same inputs run on
warp_lab's simulator (with one thread per block, as Warp's CPU device runs them, in files
that read ``wp.block_dim()``) and every array argument is compared (floats to 1e-5 relative,
NaNs equal). Kernels that use meshes, volumes, BVHs or autodiff are excluded; kernels
Warp itself cannot run with such inputs (generic ``Any`` kernels, structs as parameters)
have no reference and are counted apart. Failures are grouped by class.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np

__all__ = ["corpus_files", "extract", "is_excluded", "run_file", "summarise", "table", "main",
           "EXCLUDE_TOKENS", "SUBSET", "TARGET_MATCH"]

#: source tokens of the features left out this round (issue 19)
EXCLUDE_TOKENS = ("wp.mesh_", "wp.Mesh", "wp.volume_", "wp.Volume", "wp.bvh_", "wp.Bvh",
                  "wp.Tape", "requires_grad", "wp.adjoint", "adj_", ".grad")


def is_excluded(src: str) -> bool:
    """Whether a kernel's source uses a feature left out this round (:data:`EXCLUDE_TOKENS`)."""
    return any(t in src for t in EXCLUDE_TOKENS)


def warp_root() -> str | None:
    """The installed warp-lang package folder, or None."""
    import importlib.util
    spec = importlib.util.find_spec("warp")
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def corpus_files(root: str) -> list[str]:
    """``examples/core/*.py`` and ``tests/test_*.py`` of the wheel, sorted."""
    out = []
    for sub, pat in (("examples/core", "example_"), ("tests", "test_")):
        folder = os.path.join(root, sub)
        out += [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                if f.startswith(pat) and f.endswith(".py")]
    return out


def _decorated(node, names) -> bool:
    for d in node.decorator_list:
        text = ast.unparse(d)
        if any(text == n or text.startswith(n + "(") for n in names):
            return True
    return False


def _guarded(text: str, name: str) -> str:
    """``text`` (a def) run so that its failure is recorded, not fatal to the module."""
    import textwrap
    return (f"try:\n{textwrap.indent(text, '    ')}\nexcept Exception as _exc:\n"
            f"    WPC_ERRORS[{name!r}] = f'{{type(_exc).__name__}}: {{_exc}}'")


def extract(path: str) -> tuple[str, list[tuple[str, str]]]:
    """The file's kernel module text (``import warp as wp`` kept) and its top-level
    kernels as ``(name, source)``."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    keep, kernels = [], []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mod = getattr(node, "module", "") or ""
            names = [a.name for a in node.names]
            if mod.startswith("warp") or any(n.startswith("warp.") for n in names) or \
                    mod in ("unittest",) or "unittest" in names:
                if any(a.name == "warp" for a in node.names) and not mod:
                    keep.append("import warp as wp")
                continue
            keep.append(ast.unparse(node))
        elif isinstance(node, ast.Assign) and not any(
                isinstance(n, ast.Call) and "device" in ast.unparse(n) for n in ast.walk(node)):
            text = ast.unparse(node)
            if len(text) < 400 and "get_test_devices" not in text:
                keep.append(f"try:\n    {text}\nexcept Exception:\n    pass")
        elif isinstance(node, ast.FunctionDef) and _decorated(
                node, ("wp.kernel", "wp.func", "wp.func_native", "wp.overload")):
            keep.append(_guarded(ast.unparse(node), node.name))
            if _decorated(node, ("wp.kernel",)):
                kernels.append((node.name, ast.unparse(node)))
        elif isinstance(node, ast.ClassDef) and _decorated(node, ("wp.struct",)):
            keep.append(_guarded(ast.unparse(node), node.name))
    text = ("import numpy as np\nimport warp as wp\nWPC_ERRORS = {}\n" + "\n\n".join(keep)
            + "\n")
    return text, kernels


_WORKER = r'''
import json, sys, traceback, zlib
import numpy as np
import warp as wp
wp.config.quiet = True
wp.init()
import importlib.util
path, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("wpc_ref", path)
mod = importlib.util.module_from_spec(spec)
sys.modules["wpc_ref"] = mod
spec.loader.exec_module(mod)
names = json.loads(sys.argv[3])
report = {}
saved = {}
def lab_type(t):
    if t in (int, wp.int32): return ["scalar", "int32"]
    if t in (float, wp.float32): return ["scalar", "float32"]
    if t in (bool, wp.bool): return ["scalar", "bool"]
    if t in wp._src.types.scalar_types:
        return ["scalar", t.__name__]
    if wp.types.is_array(t):
        return ["array", t.ndim] + lab_type(t.dtype)
    if hasattr(t, "_length_") and hasattr(t, "_shape_") and len(t._shape_) == 2:
        return ["matrix", list(t._shape_), t._wp_scalar_type_.__name__]
    if hasattr(t, "_length_"):
        return ["vector", t._length_, t._wp_scalar_type_.__name__]
    if t in wp._src.types.scalar_types:
        return ["scalar", t.__name__]
    if isinstance(t, wp._src.codegen.Struct):
        return ["struct", [[n, lab_type(v.type)] for n, v in t.vars.items()]]
    raise TypeError(f"parameter type {t}")
def fill(v, rng):
    """Random fields of a numpy structured array (each scalar kind as an array's)."""
    for n in v.dtype.names:
        f = v[n]
        if f.dtype.names:
            fill(f, rng)
        elif f.dtype.kind == "f":
            v[n] = rng.uniform(-1, 1, f.shape).astype(f.dtype)
        elif f.dtype.kind == "b":
            v[n] = rng.integers(0, 2, f.shape).astype(np.bool_)
        else:
            v[n] = rng.integers(0, 4, f.shape).astype(f.dtype)
def struct_value(t, s, key, rng, arrays, shape):
    """An instance of struct ``t`` with random fields; its arrays go to ``arrays``."""
    inst = t()
    for (fname, var), (_, fs) in zip(t.vars.items(), s[1]):
        k = key + "." + fname
        ft = var.type
        if fs[0] == "struct":
            setattr(inst, fname, struct_value(ft, fs, k, rng, arrays, shape))
        elif fs[0] == "array":
            v = random_array(ft.dtype, (16,) * fs[1] if fs[1] <= 2 else (4,) * fs[1], rng)
            a = wp.array(v, dtype=ft.dtype, device="cpu")
            setattr(inst, fname, a)
            saved[k] = v
            arrays.append((k, a))
        elif fs[0] == "scalar":
            val = 0.5 if "float" in fs[1] else (True if fs[1] == "bool" else 2)
            setattr(inst, fname, val)
            saved[k] = np.array(val)
        else:
            v = rng.uniform(-1, 1, (fs[1],) if fs[0] == "vector" else tuple(fs[1])).astype(np.float32)
            setattr(inst, fname, ft(*v.reshape(-1).tolist()))
            saved[k] = v
    return inst
def random_array(dt, shape, rng):
    if isinstance(dt, wp._src.codegen.Struct):
        v = np.zeros(shape, dtype=dt.numpy_dtype())
        fill(v, rng)
        return v
    comp = getattr(dt, "_wp_scalar_type_", dt)
    ext = tuple(getattr(dt, "_shape_", ())) if hasattr(dt, "_length_") else ()
    full = shape + ext
    if comp in (float, wp.float16, wp.float32, wp.float64):
        return rng.uniform(-1, 1, full).astype(wp._src.types.warp_type_to_np_dtype[comp])
    if comp is wp.bfloat16:   # uint16 bit patterns of values in [-1, 1), as wp.array takes
        return wp._src.types._np_float32_to_bfloat16_bits(rng.uniform(-1, 1, full).astype(np.float32))
    if comp is wp.bool:
        return rng.integers(0, 2, full).astype(np.bool_)
    return rng.integers(0, 4, full).astype(wp._src.types.warp_type_to_np_dtype[comp])
for name in names:
    try:
        k = getattr(mod, name)
        params = [(a.label, a.type) for a in k.adj.args]
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        specs = [lab_type(t) for _, t in params]
        args, inputs, in_structs = [], [], []
        dim = None
        for j, ((pname, t), s) in enumerate(zip(params, specs)):
            if s[0] == "array":
                ndim = s[1]
                shape = (16,) * ndim if ndim <= 2 else (4,) * ndim
                dim = dim or shape
                dt = t.dtype
                v = random_array(dt, shape, rng)
                args.append(wp.array(v, dtype=dt, device="cpu"))
                inputs.append(v)
            elif s[0] == "struct":
                arrays = []
                args.append(struct_value(t, s, f"{name}__in{j}", rng, arrays, None))
                inputs.append(None)
                in_structs += arrays
                if arrays and dim is None:
                    dim = tuple(arrays[0][1].shape)
            elif s[0] == "scalar":
                v = 0.5 if "float" in s[1] else (True if s[1] == "bool" else 2)
                args.append(v); inputs.append(np.array(v))
            else:
                v = rng.uniform(-1, 1, (s[1],) if s[0] == "vector" else tuple(s[1])).astype(np.float32)
                args.append(t(*v.reshape(-1).tolist())); inputs.append(v)
        dim = dim or 16
        wp.launch(k, dim=dim, inputs=args, device="cpu")
        wp.synchronize()
        for j, a in enumerate(args):
            if inputs[j] is not None:
                saved[f"{name}__in{j}"] = inputs[j]
            if isinstance(a, wp.array):
                saved[f"{name}__out{j}"] = a.numpy()
        for key, a in in_structs:   # arrays held in struct arguments
            saved[key.replace("__in", "__out", 1)] = a.numpy()
        report[name] = {"ok": True, "specs": specs, "dim": list(dim) if isinstance(dim, tuple) else dim}
    except Exception as e:
        report[name] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[-1][:200] if str(e) else ''}"}
np.savez(out + ".npz", **saved)
json.dump(report, open(out + ".json", "w"))
'''


def _is_bf16(a: np.ndarray) -> bool:
    """A bfloat16 array: ``ml_dtypes.bfloat16`` (Warp's ``.numpy()``), or the 2-byte void
    that dtype becomes through ``np.savez``/``np.load`` (the worker's saved arrays)."""
    from warp_lab.lang.bf16 import ML_DTYPES
    return (a.dtype.kind == "V" and not a.dtype.names and a.dtype.itemsize == 2) or \
        (ML_DTYPES is not None and a.dtype == ML_DTYPES)


def _plain(a: np.ndarray) -> np.ndarray:
    """A saved array as warp_lab takes it: a bfloat16 one as its uint16 bit patterns."""
    return a.view(np.uint16) if _is_bf16(a) else a


def _same(got: np.ndarray, ref: np.ndarray) -> bool:
    """Floats to 1e-5 relative (NaNs equal), the rest exactly; a structured array (of
    structs) field by field, so the padding between fields is not compared; bfloat16 as the
    float32 values of its bits."""
    if _is_bf16(ref) or _is_bf16(got):
        from warp_lab.lang.bf16 import f32_from_bits
        got, ref = (f32_from_bits(_plain(x)) if _is_bf16(x) else x for x in (got, ref))
    if ref.dtype.names:
        return got.dtype.names == ref.dtype.names and all(
            _same(got[n], ref[n]) for n in ref.dtype.names)
    if ref.dtype.kind == "f":
        return got.shape == ref.shape and np.allclose(got, ref, rtol=1e-5, atol=1e-6,
                                                      equal_nan=True)
    return np.array_equal(got, ref)


def _lab_struct(wp, st, spec, key, saved, arrays):
    """warp_lab's instance of struct type ``st`` holding the worker's saved field inputs
    (``KEY.field``); its arrays are recorded in ``arrays`` under their keys."""
    inst = st()
    for (fname, ft), (_, fs) in zip(st.fields, spec[1]):
        k = f"{key}.{fname}"
        if fs[0] == "struct":
            setattr(inst, fname, _lab_struct(wp, ft, fs, k, saved, arrays))
        elif fs[0] == "array":
            a = wp.array(saved[k].copy(), dtype=ft.dtype)
            arrays[k] = a
            setattr(inst, fname, a)
        elif fs[0] == "scalar":
            setattr(inst, fname, saved[k].item())
        else:
            setattr(inst, fname, saved[k].astype(ft.elem.numpy))
    return inst


def _lab_type(wp, spec):
    kind = spec[0]
    if kind == "scalar":
        return getattr(wp, spec[1])
    if kind == "array":
        return _lab_type(wp, spec[2:])
    if kind == "vector":
        return wp.types.vector(length=spec[1], dtype=getattr(wp, spec[2]))
    return wp.types.matrix(shape=tuple(spec[1]), dtype=getattr(wp, spec[2]))


#: simulator findings that make a kernel's result undefined in C++ as well (Warp's CPU
#: device reads past an array silently, and a race's winner is an accident of order)
_UNDEFINED = {"out_of_bounds": "out-of-bounds accesses", "global_conflict": "a data race",
              "race_raw": "a data race", "race_war": "a data race", "race_waw": "a data race",
              "uninitialized": "uninitialised reads", "division_by_zero": "a division by 0"}


def _classify(exc: BaseException) -> str:
    """A failure class: the error's type and its message with names and numbers blanked."""
    msg = getattr(exc, "message", None) or (str(exc).splitlines() or [""])[0]
    msg = re.sub(r"\b\d+\b", "N", msg)
    return f"{type(exc).__name__}: {msg[:110]}"


def run_file(path: str, workdir: str, timeout: float = 300) -> dict:
    """Run one corpus file's kernels on both sides; ``{kernel: record}`` where a record
    has ``status`` (``excluded``, ``no_reference``, ``compile_failed``, ``launch_failed``,
    ``mismatch``, ``undefined``: the inputs read out of bounds or race, ``matched``) and ``why``."""
    import importlib.util

    import warp_lab as wl
    import warp_lab.warp as wp

    text, kernels = extract(path)
    stem = "wpc_" + re.sub(r"\W", "_", os.path.basename(path)[:-3])
    out: dict = {}
    todo = []
    for name, src in kernels:
        if is_excluded(src):
            out[name] = {"status": "excluded", "why": "mesh/volume/bvh/autodiff"}
        else:
            todo.append(name)
    if not todo:
        return out
    ref_path = os.path.join(workdir, stem + "_ref.py")
    open(ref_path, "w").write(text)
    res = os.path.join(workdir, stem)
    try:
        proc = subprocess.run([sys.executable, "-c", _WORKER, ref_path, res, json.dumps(todo)],
                              capture_output=True, text=True, timeout=timeout)
        report = json.load(open(res + ".json"))
        saved = np.load(res + ".npz")
    except (subprocess.TimeoutExpired, OSError, ValueError) as exc:
        for name in todo:
            out[name] = {"status": "no_reference", "why": f"warp-lang worker failed: "
                         f"{type(exc).__name__} {getattr(proc, 'returncode', '')}"[:120]}
        return out
    lab_path = os.path.join(workdir, stem + "_lab.py")
    open(lab_path, "w").write(text.replace("import warp as wp", "import warp_lab.warp as wp"))
    try:
        spec = importlib.util.spec_from_file_location(stem + "_lab", lab_path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[stem + "_lab"] = mod
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - the module's own top level
        for name in todo:
            if report.get(name, {}).get("ok"):
                out[name] = {"status": "compile_failed", "why": "module: " + _classify(exc)}
            else:
                out[name] = {"status": "no_reference", "why": report.get(name, {}).get("error")}
        return out
    # Warp's CPU device runs one thread per block (context._resolve_block_dim: CPU blocks
    # of more are opt-in, config.enable_cpu_blocks), which a kernel reading wp.block_dim()
    # sees: warp_lab's simulator gets the same launch for those files, where the GPU's
    # default (256) would give other values than the reference for the same source
    block = {"block_dim": 1} if "block_dim()" in text else {}
    for name in todo:
        rec = report.get(name, {})
        if not rec.get("ok"):
            out[name] = {"status": "no_reference", "why": rec.get("error", "")}
            continue
        if name in getattr(mod, "WPC_ERRORS", {}):
            out[name] = {"status": "compile_failed", "why": "definition: " +
                         _classify(RuntimeError(mod.WPC_ERRORS[name].splitlines()[0]))}
            continue
        try:
            k = getattr(mod, name)
            ck = wl.compile(k)
        except Exception as exc:  # noqa: BLE001 - classified
            out[name] = {"status": "compile_failed", "why": _classify(exc)}
            continue
        args, arrays = [], {}
        for j, s in enumerate(rec["specs"]):
            key = f"{name}__in{j}"
            if s[0] == "struct":
                args.append(_lab_struct(wp, ck.params[j][1], s, key, saved, arrays))
                continue
            v = _plain(saved[key])
            if s[0] == "array":
                a = wp.array(v.copy(), dtype=_lab_type(wp, s) if s[2] != "struct"
                             else ck.params[j][1].dtype)
                arrays[key] = a
                args.append(a)
            elif s[0] == "scalar":
                args.append(v.item())
            else:
                args.append(v.astype(_lab_type(wp, s).elem.numpy))
        dim = tuple(rec["dim"]) if isinstance(rec["dim"], list) else rec["dim"]
        try:
            r = wl.launch(k, dim=dim, inputs=args, device="sim", max_instructions=50_000_000,
                          **block)
        except Exception as exc:  # noqa: BLE001 - classified
            out[name] = {"status": "launch_failed", "why": _classify(exc)}
            continue
        bad = [key for key, a in arrays.items()
               if not _same(a.numpy(), saved[key.replace("__in", "__out", 1)])]
        finding = r.findings[0].kind if getattr(r, "findings", None) else ""
        if bad and finding in _UNDEFINED:
            # the generated inputs make the kernel read past an array or race: what Warp's
            # CPU device computed is undefined too (it reads whatever memory lies there)
            out[name] = {"status": "undefined", "why": f"{_UNDEFINED[finding]} with the "
                         "generated inputs (simulator finding: " + finding + ")"}
        elif bad:
            out[name] = {"status": "mismatch", "why": "outputs differ" +
                         (f" (simulator finding: {finding})" if finding else "")}
        else:
            out[name] = {"status": "matched", "why": ""}
    return out


def summarise(results: dict) -> dict:
    """Counts over ``{file: {kernel: record}}``: kernels, statuses, failure classes."""
    status = Counter(r["status"] for recs in results.values() for r in recs.values())
    why = Counter(f"{r['status']}: {r['why']}" for recs in results.values()
                  for r in recs.values() if r["status"] not in ("matched", "excluded"))
    counted = sum(status.values()) - status["excluded"] - status["no_reference"] \
        - status["undefined"]
    compiled = counted - status["compile_failed"]
    return {"files": len(results), "kernels": sum(status.values()), "status": dict(status),
            "counted": counted, "compiled": compiled, "matched": status["matched"],
            "classes": why.most_common()}


#: the fixed subset ``python -m benchmarks`` runs by default (``--warp-compat subset``), about
#: 3-4 minutes on a shared 2-core machine: picked from the whole corpus's run of 2026-12-02
#: (per-file times and outcomes) for files of 10-40 s whose kernels show every outcome of
#: the corpus: matched, each failure kind (compile, launch, outputs), no reference,
#: undefined inputs and an excluded (mesh) kernel.
SUBSET = (
    "examples/core/example_fdtd_3d.py",
    "examples/core/example_fft_poisson_navier_stokes_2d.py",
    "examples/core/example_mesh.py",
    "examples/core/example_spin_lock.py",
    "examples/core/example_wave.py",
    "tests/test_bool.py",
    "tests/test_conditional.py",
    "tests/test_constant_precision.py",
    "tests/test_copy.py",
    "tests/test_generics.py",
    "tests/test_launch.py",
    "tests/test_lvalue.py",
)

#: issue 19's target: the share of the counted kernels that compile and match
TARGET_MATCH = 0.85

_STATUS_LABEL = {"compile_failed": "compile failed", "launch_failed": "launch failed",
                 "mismatch": "outputs differ"}


def table(summary: dict, command: str, date: str | None = None) -> list[str]:
    """The Markdown section of ``docs/benchmarks.md``: counts, the match rate against
    :data:`TARGET_MATCH`, and every failure class with its count.

    Args:
        summary: :func:`summarise`'s result.
        command: the command line that produced it (quoted).
        date: when it ran (``YYYY-MM-DD HH:MM UTC``), or None to leave it out.
    """
    s, st = summary, summary["status"]
    rate = s["matched"] / s["counted"] if s["counted"] else 0.0
    failed = s["counted"] - s["matched"]
    when = f" ({date})" if date else ""
    out = ["## Warp compatibility (warp-lang 1.19's own kernels)", "",
           f"`{command}`{when}: top-level kernels of `warp/examples/core/*.py` and "
           "`warp/tests/test_*.py`, run on warp_lab's simulator with `import warp_lab.warp "
           "as wp` and on warp-lang's CPU device with the same inputs.", "",
           "| files | kernels | excluded (mesh/volume/bvh/autodiff) | no reference (Warp "
           "cannot run them with generated inputs) | undefined (the generated inputs read "
           "out of bounds or race) | counted | compiled | matched | failed |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
           f"| {s['files']} | {s['kernels']} | {st.get('excluded', 0)} | "
           f"{st.get('no_reference', 0)} | {st.get('undefined', 0)} | {s['counted']} | "
           f"{s['compiled']} | {s['matched']} ({100 * rate:.0f}%) | {failed} |", "",
           f"Target (issue 19): ≥ {100 * TARGET_MATCH:.0f}% of the counted kernels compile "
           f"and match: {100 * rate:.0f}% ({s['matched']}/{s['counted']}), "
           f"{'met' if s['counted'] and rate >= TARGET_MATCH else 'not met'}.", ""]
    fails = [(cls, n) for cls, n in s["classes"]
             if not cls.startswith(("no_reference", "undefined"))]
    if fails:
        out += ["| failed: class | kernels |", "|---|---:|"]
        for cls, n in fails:
            status, _, why = cls.partition(": ")
            out.append(f"| {_STATUS_LABEL.get(status, status)}: {why.replace('|', '/')} "
                       f"| {n} |")
        out.append("")
    return out


def _utc(ts: float | None = None) -> str:
    import datetime

    t = datetime.datetime.fromtimestamp(time.time() if ts is None else ts,
                                        datetime.timezone.utc)
    return f"{t:%Y-%m-%d %H:%M} UTC"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="", help="comma list of corpus file names (default: all)")
    ap.add_argument("--subset", action="store_true",
                    help="the fixed subset of python -m benchmarks (SUBSET), a few minutes")
    ap.add_argument("--json", default="", help="write the per-kernel records here")
    ap.add_argument("--from-json", default="",
                    help="make the table from the records a run wrote with --json (dated by "
                         "that file's time), running nothing")
    ap.add_argument("--command", default="",
                    help="with --from-json: the command that wrote it, quoted in the table")
    ap.add_argument("--out", default="", help="append the Markdown table to this file")
    ap.add_argument("--md-out", default="", help="write the Markdown table to this file")
    args = ap.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        lines = table(summarise(results), args.command or "python -m benchmarks.warp_compat",
                      _utc(os.path.getmtime(args.from_json)))
        return _write(lines, args)
    root = warp_root()
    if root is None:
        print("warp-lang is not installed (pip install warp-lang): no reference")
        return 1
    files = corpus_files(root)
    if args.subset:
        files = [f for f in files if os.path.relpath(f, root) in SUBSET]
    elif args.files:
        want = set(args.files.split(","))
        files = [f for f in files if os.path.basename(f) in want]
    results = {}
    with tempfile.TemporaryDirectory(prefix="wl_warp_compat_") as work:
        for f in files:
            rel = os.path.relpath(f, root)
            t0 = time.perf_counter()
            try:
                results[rel] = run_file(f, work)
            except Exception as exc:  # noqa: BLE001 - one file's trouble is its row
                results[rel] = {"<file>": {"status": "compile_failed",
                                           "why": "harness: " + _classify(exc)}}
            n = Counter(r["status"] for r in results[rel].values())
            print(f"{rel}: {dict(n)} {time.perf_counter() - t0:.1f} s", file=sys.stderr,
                  flush=True)
    command = "python -m benchmarks.warp_compat" + (
        " --subset" if args.subset else f" --files {args.files}" if args.files else "")
    lines = table(summarise(results), command, _utc())
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    return _write(lines, args)


def _write(lines: list[str], args) -> int:
    print("\n".join(lines))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write("\n" + "\n".join(lines))
    if args.md_out:
        with open(args.md_out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
