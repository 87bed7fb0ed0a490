"""The corpus itself, without the compiler: inputs, launches, references, coverage.

The numpy references are the oracle every other test trusts, so here they
are checked a second way: element by element with plain Python integers and
numpy scalars, following the kernel's statements literally.
"""

from __future__ import annotations

import ast
import inspect
import math

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import CORPUS, PLANTED_BUGS, Tolerance, get
from warp_lab.examples.mathfuncs import MATH_ROWS
from warp_lab.lang.kernel import Func

IDS = [e.name for e in CORPUS]


def _copy(args):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("ex", CORPUS, ids=IDS)
def test_inputs_deterministic_and_reference_shapes(ex):
    args = ex.make_inputs()
    again = ex.make_inputs()
    assert len(args) == len(ex.param_names), "one argument per kernel parameter"
    for a, b in zip(args, again):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
    before = _copy(args)
    expected = ex.expected(args)
    for a, b in zip(args, before):                     # the reference must not write inputs
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    assert set(expected) == set(ex.outputs)
    for name, k in ex.output_indices().items():
        out = args[k]
        assert isinstance(out, np.ndarray), f"output {name} must be an array"
        assert expected[name].shape == out.shape, name
        assert expected[name].dtype == out.dtype, name
    launch = ex.launch(args)
    assert 0 < launch.threads <= 4096, "small inputs keep a CPU simulator launch short"
    grid, block = launch.grid_block()
    assert int(np.prod(block)) <= 1024


@pytest.mark.parametrize("ex", CORPUS, ids=IDS)
def test_check_accepts_reference_and_rejects_a_changed_element(ex):
    args = ex.make_inputs()
    after = _copy(args)
    expected = ex.expected(args)
    for name, k in ex.output_indices().items():
        after[k][...] = expected[name]
    ex.check(args, after)
    if not ex.outputs:
        pytest.skip("prints only")
    out = after[ex.output_indices()[ex.outputs[0]]]
    first = (0,) * out.ndim
    out[first] = (not out[first]) if out.dtype == bool else out[first] + 7
    with pytest.raises(AssertionError, match=ex.outputs[0]):
        ex.check(args, after)


@pytest.mark.parametrize("ex", CORPUS, ids=IDS)
def test_bench_size_keeps_types_and_fits(ex):
    small, bench = ex.make_inputs("small"), ex.make_inputs("bench")
    assert [type(a) for a in small] == [type(a) for a in bench]
    for a, b in zip(small, bench):
        if isinstance(a, np.ndarray):
            assert (a.dtype, a.ndim) == (b.dtype, b.ndim)
            assert b.size >= a.size
    assert sum(b.nbytes for b in bench if isinstance(b, np.ndarray)) < 2**28   # 256 MiB
    grid, block = ex.launch(bench).grid_block()
    assert max(grid[1:]) <= 65535 and int(np.prod(block)) <= 1024   # CUDA launch limits


def test_size_names():
    assert get("saxpy").launch(get("saxpy").make_inputs("bench")).threads > 1000
    with pytest.raises(ValueError, match="size"):
        get("saxpy").make_inputs("huge")


def test_tolerance_modes():
    exact = Tolerance()
    exact.check("x", np.array([1.0, np.nan], np.float32), np.array([1.0, np.nan], np.float32))
    with pytest.raises(AssertionError, match="dtype"):
        exact.check("x", np.zeros(2, np.float64), np.zeros(2, np.float32))
    with pytest.raises(AssertionError, match=r"first at \(1,\)"):
        exact.check("x", np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0000002], np.float32))
    Tolerance(rtol=1e-6).check("x", np.array([1.0, 2.0], np.float32),
                               np.array([1.0, 2.0000002], np.float32))
    with pytest.raises(AssertionError):
        exact.check("o", np.array([3, 1, 2]), np.array([1, 2, 3]))
    Tolerance(unordered=True).check("o", np.array([3, 1, 2]), np.array([1, 2, 3]))


# -- the references, checked a second way -------------------------------------------------
def _run(name):
    ex = get(name)
    args = ex.make_inputs()
    return args, ex.expected(args)


def _wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def test_floordiv_mod_reference_is_python_semantics():
    (a, b, *_), exp = _run("floordiv_mod")
    assert (a < 0).any() and (b < 0).any()
    for k in range(len(a)):
        x, y = int(a[k]), int(b[k])
        assert exp["q"][k] == x // y and exp["r"][k] == x % y
        assert exp["qc"][k] == x // 4 and exp["rc"][k] == x % -3
        assert exp["q64"][k] == (x * 100003) // y and exp["r64"][k] == (x * 100003) % y
    assert exp["q"].dtype == np.int32 and exp["q64"].dtype == np.int64


def test_int_intrinsics_reference_bit_by_bit():
    (a, b, u, *_), exp = _run("int_intrinsics")
    for k in range(len(a)):
        x = int(a[k]) & 0xFFFFFFFF
        bits = format(x, "032b")
        assert exp["out"][0, k] == bits.count("1")
        assert exp["out"][1, k] == (32 - x.bit_length())
        assert exp["out"][2, k] == ((x & -x).bit_length() if x else 0)
        assert exp["out"][3, k] == _wrap32(int(bits[::-1], 2))
        assert exp["out"][4, k] == (int(a[k]) * int(b[k])) >> 32
        w = int(u[k])
        assert exp["uout"][0, k] == format(w, "032b").count("1")
        assert exp["uout"][1, k] == int(format(w, "032b")[::-1], 2)
        assert exp["uout"][2, k] == (w * ((w + 12345) & 0xFFFFFFFF)) >> 32


def test_bit_ops_reference_bit_by_bit():
    (a, b, s, u, *_), exp = _run("bit_ops")
    for k in range(len(a)):
        x, y, sh, w = int(a[k]), int(b[k]), int(s[k]), int(u[k])
        want = [x & y, x | y, x ^ y, ~x, _wrap32(x << sh), x >> sh,
                _wrap32(x * 1103515245 + 12345), _wrap32(-x + y)]
        assert exp["out"][:, k].tolist() == want
        assert exp["uout"][:, k].tolist() == [w >> sh, (w * 2654435761) & 0xFFFFFFFF]
        wide = ((x << 33) ^ y) & (2**64 - 1)
        assert exp["wide"][k] == (wide - 2**64 if wide >= 2**63 else wide)


def test_casts_reference_by_element():
    (f, h, *_), exp = _run("casts")
    for k in range(0, len(f), 7):
        v = float(f[k])
        assert exp["to_i32"][k] == int(v)
        assert exp["to_i64"][k] == k * 10**9 + int(v)
        assert exp["to_u8"][k] == (k * 37) % 256
        assert exp["to_i8"][k] == ((k * 5 - 100 + 128) % 256) - 128
        assert exp["to_u64"][k] == k << 40
        assert exp["to_f16"][k] == np.float16(np.float32(h[k]) * np.float32(2))
        assert exp["to_bool"][k] == (v > 0)


def test_mandelbrot_reference_pixel_by_pixel():
    (counts, x0, y0, dx, max_iter), exp = _run("mandelbrot")
    f = np.float32
    h, w = counts.shape
    for i in range(0, h, 3):
        for j in range(0, w, 2):
            cr = f(x0) + f(j) * f(dx)
            ci = f(y0) + f(i) * f(dx)
            zr = zi = f(0.0)
            k = 0
            while k < max_iter and zr * zr + zi * zi <= f(4.0):
                zr, zi = zr * zr - zi * zi + cr, f(2.0) * zr * zi + ci
                k += 1
            assert exp["counts"][i, j] == k, (i, j)
    assert exp["counts"].max() == max_iter and len(np.unique(exp["counts"])) > 10


def test_scan_histogram_warp_references():
    (x, out, totals, n), exp = _run("block_scan")
    for blk in range(len(totals)):
        run = 0
        for t in range(128):
            run += int(x[blk * 128 + t]) if blk * 128 + t < n else 0
            if blk * 128 + t < n:
                assert exp["out"][blk * 128 + t] == run
        assert exp["totals"][blk] == run
    (data, hist, n), exp = _run("histogram")
    counts = [0] * 64
    for v in data.tolist():
        counts[v >> 2] += 1
    assert exp["hist"].tolist() == counts
    (x, *_), exp = _run("warp_scan_vote")
    for lane0 in range(0, len(x), 32):
        warp = [int(v) for v in x[lane0:lane0 + 32]]
        assert exp["bcast"][lane0 + 7] == warp[3]
        assert exp["scan"][lane0 + 31] == sum(warp) == exp["butterfly"][lane0]
        assert exp["ballot"][lane0] == sum(1 << ln for ln, v in enumerate(warp) if v > 0)
        assert exp["votes"][0, lane0] == any(v > 90 for v in warp)
        assert exp["votes"][1, lane0] == all(v > -90 for v in warp)
    assert exp["votes"][0].any() and not exp["votes"][0].all()
    assert exp["votes"][1].any() and not exp["votes"][1].all()


def test_array_references_by_loops():
    (a, b, c), exp = _run("matmul_tiled")
    for i, j in [(0, 0), (39, 23), (17, 5)]:
        acc = np.float32(0)
        for k in range(a.shape[1]):
            acc = acc + a[i, k] * b[k, j]
        assert exp["c"][i, j] == acc
    (u, out), exp = _run("stencil_2d")
    h, w = u.shape
    for i in range(h):
        for j in range(w):
            if i in (0, h - 1) or j in (0, w - 1):
                want = u[i, j]
            else:
                want = np.float32(0.25) * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            assert exp["out"][i, j] == want
    (rp, ci, vals, x, y), exp = _run("spmv_csr")
    for r in range(len(y)):
        s = np.float32(0)
        for k in range(rp[r], rp[r + 1]):
            s = s + vals[k] * x[ci[k]]
        assert exp["y"][r] == s
    (src, scaled, rs), exp = _run("strided_rows")
    assert not src.flags.c_contiguous and not scaled.flags.c_contiguous
    s = np.float32(0)
    for v in src[3]:
        s = s + v
    assert exp["row_sum"][3] == s and np.array_equal(exp["scaled"][3], src[3] * np.float32(3))
    args, exp = _run("atomics_all")
    assert exp["acc"][8] == 1 and exp["acc"][9] == len(args[0])


def test_math_references_against_python_math():
    (u, p, q, special, *_), exp = _run("math_f64")
    names = MATH_ROWS
    scalar = {"sqrt": lambda a, b, c: math.sqrt(b), "exp": lambda a, b, c: math.exp(c),
              "erf": lambda a, b, c: math.erf(c), "atan2": lambda a, b, c: math.atan2(a, c),
              "round": lambda a, b, c: float(math.floor(abs(c) + 0.5)) * math.copysign(1, c),
              "clamp": lambda a, b, c: min(max(c, -1.0), 1.0),
              "pow": lambda a, b, c: b ** c,
              "cbrt": lambda a, b, c: math.copysign(abs(c) ** (1 / 3), c)}
    for fname, fn in scalar.items():
        row = names.index(fname)
        for k in range(0, len(u), 5):
            want = fn(float(u[k]), float(p[k]), float(q[k]))
            assert math.isclose(exp["out"][row, k], want, rel_tol=1e-14, abs_tol=1e-15), fname
    assert exp["flags"][:, 0].tolist() == [1, 0, 0]      # nan
    assert exp["flags"][:, 1].tolist() == [0, 1, 0]      # inf
    assert exp["flags"][:, 3].tolist() == [0, 0, 1]      # 0.0


def test_vector_references_statement_by_statement():
    (a, b, m, *_), exp = _run("vec_mat")
    for i in range(0, len(a), 9):
        u, v, mat = (x.astype(float).tolist() for x in (a[i], b[i], m[i]))
        cross = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
        np.testing.assert_allclose(exp["crossed"][i], cross, rtol=1e-6, atol=1e-6)
        norm_v = math.sqrt(sum(c * c for c in v))
        np.testing.assert_allclose(exp["unit"][i], [c / norm_v for c in v], rtol=1e-6)
        mv = [sum(mat[r][c] * u[c] for c in range(3)) for r in range(3)]
        np.testing.assert_allclose(exp["mv"][i], mv, rtol=1e-5, atol=1e-6)
        assert exp["mt"][i].tolist() == [[mat[c][r] for c in range(3)] for r in range(3)]
        w = [u[0] * 2 + v[0] - 1.0, u[1] * 2 + v[1], u[2] * 2 + v[2] + 1.0]
        np.testing.assert_allclose(exp["combo"][i], w, rtol=1e-6, atol=1e-6)
        r = [v[0] + 2 * v[1], 3 * v[0] + 4 * v[1]]
        want = [sum(x * y for x, y in zip(u, v)), math.sqrt(sum(x * x for x in u)),
                mat[1][0] + mat[2][0], w[0] + w[1] + u[2], u[0] + 2 * u[1] + 3 * u[2] + 4,
                r[0] - r[1]]
        np.testing.assert_allclose(exp["scalars"][i], want, rtol=1e-5, atol=1e-6)
    (pts, out, m, shift, scale), exp = _run("affine")
    for i in range(0, len(pts), 7):
        p = pts[i].astype(float).tolist()
        want = [sum(float(m[r, c]) * p[c] for c in range(3)) * scale + float(shift[r])
                for r in range(3)]
        np.testing.assert_allclose(exp["out"][i], want, rtol=1e-6, atol=1e-7)


def test_nbody_and_softmax_references_by_loops():
    (pos, vel, mass, _, _, dt, eps2), exp = _run("nbody_step")
    for i in (0, 17, 63):
        acc = [0.0, 0.0, 0.0]
        for j in range(len(pos)):
            d = [float(pos[j, c]) - float(pos[i, c]) for c in range(3)]
            r2 = sum(x * x for x in d) + eps2
            for c in range(3):
                acc[c] += d[c] * float(mass[j]) / r2 ** 1.5
        v = [float(vel[i, c]) + acc[c] * dt for c in range(3)]
        np.testing.assert_allclose(exp["new_vel"][i], v, rtol=1e-6)
        np.testing.assert_allclose(exp["new_pos"][i], [float(pos[i, c]) + v[c] * dt
                                                       for c in range(3)], rtol=1e-6)
    (x, y), exp = _run("softmax_rows")
    for r in range(x.shape[0]):
        row = [float(v) for v in x[r]]
        e = [math.exp(v - max(row)) for v in row]
        np.testing.assert_allclose(exp["y"][r], [v / sum(e) for v in e], rtol=1e-6)


def test_branchy_references_by_loops():
    (x, cls, mag, lo, hi, flip), exp = _run("classify")
    for k, v in enumerate(x.tolist()):
        c = 0
        if v < lo:
            c = -1
        elif lo <= v < hi:
            c = 0 if v < 0.0 else 1
        if v >= hi:
            c = 2
        if flip and not c == 2:
            c = -c
        assert exp["cls"][k] == c and exp["mag"][k] == abs(np.float32(v))
    (x, flags, n), exp = _run("short_circuit")
    for i in range(n):
        rising = i + 1 < n and x[i + 1] > x[i]
        peak = i == 0 or x[i - 1] < x[i]
        assert exp["flags"][i] == int(rising) + 2 * int(peak)
    (out,), exp = _run("block_coords")
    (gx, gy, gz), (bx, by, bz) = get("block_coords").launch([out]).grid_block()
    for z in range(gz * bz):
        for y in range(gy * by):
            for x in range(gx * bx):
                t = ((z % bz) * by + y % by) * bx + x % bx
                b = ((z // bz) * gy + y // by) * gx + x // bx
                assert exp["out"][z, y, x].tolist() == [t, b]
    (vals, acc, lock, order, facc), exp = _run("atomics_all")
    state = acc.astype(np.int64).tolist()
    for i, v in enumerate(vals.tolist()):
        state[0] += v
        state[1] -= v
        state[2] = min(state[2], v)
        state[3] = max(state[3], v)
        state[4] &= v | 0x100
        state[5] |= v & 0xFF0
        state[6] ^= v
        state[7] = 42
        state[8] += i == 0          # thread 0 wins the CAS when threads run in order
        state[9] += 1
    assert exp["acc"].tolist() == state
    (x, out), exp = _run("local_sort")
    assert all(exp["out"][k].tolist() == sorted(x[k].tolist()) for k in range(len(x)))


def test_printf_expected_lines():
    ex = get("hello_printf")
    assert ex.printed(ex.make_inputs()) == [
        "thread 0: x=1.000000", "thread 1: x=1.500000", "thread 2: x=2.000000",
        "thread 3: x=2.500000", "hello from thread 0"]


# -- coverage of the language ------------------------------------------------------------
#: what issue 2 says the language has; every name must appear in some corpus kernel
REQUIRED_WL = {
    "tid", "thread_idx", "block_idx", "block_dim", "grid_dim", "lane_id", "warp_size",
    "syncthreads", "syncwarp", "shared_array", "local_array", "printf", "select", "constant",
    *(f"atomic_{op}" for op in ("add", "sub", "min", "max", "and", "or", "xor", "exch", "cas")),
    "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "any_sync",
    "all_sync",
    "sqrt", "rsqrt", "cbrt", "exp", "exp2", "log", "log2", "log10", "pow", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf", "floor", "ceil", "trunc",
    "round", "abs", "min", "max", "clamp", "fma", "copysign", "isnan", "isinf", "isfinite",
    "popc", "clz", "ffs", "brev", "mulhi",
    "dot", "cross", "length", "normalize", "transpose",
    "vec2", "vec3", "vec4", "mat22", "mat33",
    "array", "array2d", "array3d", "kernel", "func",
    "int8", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "bool_",
}
REQUIRED_SYNTAX = {
    "FloorDiv", "Mod", "Pow", "Div", "MatMult", "BitAnd", "BitOr", "BitXor", "LShift", "RShift",
    "Invert", "USub", "UAdd", "Not", "And", "Or", "chained-compare", "IfExp", "AugAssign",
    "tuple-unpack", "If", "elif", "While", "For", "range1", "range2", "range3", "Break",
    "Continue", "Return", "Pass", "Assert", "print", "int()", "float()", "func-calls-func",
    "func-returns-value", "unannotated-func-param", "bool-param", "while-True",
}


def _functions():
    funcs = set()
    for ex in CORPUS:
        funcs.add(ex.kernel)
        funcs.update(v for v in ex.kernel.globals.values() if isinstance(v, Func))
    return funcs


def _used(funcs):
    wl_names, syntax = set(), set()
    for fn in funcs:
        tree = ast.parse(fn.source.text)
        fdef = tree.body[0]
        wl_names.add("kernel" if isinstance(fn, wl.Kernel) else "func")
        if isinstance(fn, Func):
            called = {n.func.id for n in ast.walk(fdef) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name)}
            if called & {f.name for f in funcs if isinstance(f, Func)}:
                syntax.add("func-calls-func")
            if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fdef)):
                syntax.add("func-returns-value")
            if any(a.annotation is None for a in fdef.args.args):
                syntax.add("unannotated-func-param")
        for a in fdef.args.args:
            if isinstance(a.annotation, ast.Name) and a.annotation.id == "bool":
                syntax.add("bool-param")
        for node in ast.walk(fdef):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "wl":
                wl_names.add(node.attr)
            if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.AugAssign)):
                syntax.add(type(node.op).__name__)
            if isinstance(node, ast.Compare) and len(node.ops) > 1:
                syntax.add("chained-compare")
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
                syntax.add("tuple-unpack")
            if isinstance(node, ast.If) and len(node.orelse) == 1 \
                    and isinstance(node.orelse[0], ast.If):
                syntax.add("elif")
            if isinstance(node, ast.While) and isinstance(node.test, ast.Constant):
                syntax.add("while-True")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "math":
                syntax.add(f"math.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                syntax.add(f"py:{name}")
                if name == "range":
                    syntax.add(f"range{len(node.args)}")
                elif name in ("print", "int", "float"):
                    syntax.add(name if name == "print" else f"{name}()")
            syntax.add(type(node).__name__)
    for ex in CORPUS:      # module constants made with wl.constant(...)
        if any(isinstance(v, wl.Constant) for v in ex.kernel.globals.values()):
            wl_names.add("constant")
    return wl_names, syntax


def test_corpus_uses_every_language_feature():
    wl_names, syntax = _used(_functions())
    assert REQUIRED_WL - wl_names == set()
    assert REQUIRED_SYNTAX - syntax == set()
    assert len(CORPUS) >= 25


def test_corpus_uses_every_builtin_of_the_language_table():
    """Beyond issue 2's list: whatever lang/builtins.py offers, some corpus kernel calls."""
    from warp_lab.lang import builtins as table

    wl_names, syntax = _used(_functions())
    assert set(table.BUILTINS) | set(table.DIM3S) | {"warp_size"} <= wl_names
    assert {f"py:{name}" for name in table.PYTHON_BUILTINS} <= syntax
    assert any(s.startswith("math.") for s in syntax)


def test_every_example_documented_and_named_after_its_kernel_module():
    for ex in CORPUS:
        assert ex.description, ex.name
        assert inspect.getmodule(ex.kernel.fn).__name__.startswith("warp_lab.examples.")


# -- planted bugs -------------------------------------------------------------------------
@pytest.mark.parametrize("bug", PLANTED_BUGS, ids=[b.name for b in PLANTED_BUGS])
def test_planted_bug_records(bug):
    line = bug.line()
    text = bug.kernel.source.line(line)
    assert bug.marker in text and "BUG" in text
    args = bug.make_inputs()
    assert len(args) == len(inspect.signature(bug.kernel.fn).parameters)
    launch = bug.launch(args)
    assert launch.threads <= 1024
    assert bug.check in ("memcheck", "racecheck", "initcheck", "barrier", "budget")
    if bug.thread is not None:
        grid, block = launch.grid_block()
        assert all(t < b for t, b in zip(bug.thread, block))
        assert all(k < g for k, g in zip(bug.block, grid))
    assert bug.name not in {e.name for e in CORPUS}


def test_planted_out_of_bounds_thread_is_the_first_past_the_end():
    bug = get("oob_write")
    y, n = bug.make_inputs()
    (grid, block) = bug.launch([y, n]).grid_block()
    assert bug.block[0] * block[0] + bug.thread[0] == n == len(y)
    bug = get("off_by_one_read")
    x, y = bug.make_inputs()
    _, block = bug.launch([x, y]).grid_block()
    assert bug.block[0] * block[0] + bug.thread[0] == len(x) - 1
