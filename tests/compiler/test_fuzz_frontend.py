"""Fuzzing the front end: mutated kernels either compile to valid IR or raise KernelCompileError.

Hypothesis mutates the sources of the valid seed kernels below, at the token
level (replace, delete, duplicate tokens) and at the AST level (swap in
another expression, drop or duplicate a statement), then compiles the
mutant through ``make_typed_ast`` and ``make_llvm_ir``. Every failure must
be a :class:`~warp_lab.errors.KernelCompileError` with a line inside the
kernel; every success must give LLVM IR that llvmlite parses and verifies.
Examples are capped so the whole file runs in well under 30 s.
"""

from __future__ import annotations

import ast
import copy
import io
import math
import tokenize
import warnings

import llvmlite.binding as llvm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warp_lab as wl
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import make_llvm_ir
from warp_lab.errors import KernelCompileError
from warp_lab.lang.kernel import Kernel, Source

N = 64
SCALE = wl.constant(0.5)


@wl.func
def sq(v):
    return v * v


@wl.func
def pair(a: float, b: int):
    if a > 0.0:
        return a, b
    return -a, b + 1


@wl.kernel
def seed_saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]


@wl.kernel
def seed_loops(x: wl.array2d(wl.float32), out: wl.array(dtype=wl.int32), n: int):
    i, j = wl.tid()
    acc = 0.0
    for k in range(0, n, 2):
        if k % 3 == 0 and k > 1:
            continue
        acc += sq(x[i, k]) * SCALE
    m = 0
    while m < n:
        m += 1
        if m > 10:
            break
    s, t = pair(acc, m)
    out[j] = int(s) + t if 0 < j < n else -1 // 2


@wl.kernel
def seed_shared(x: wl.array(dtype=wl.float32), h: wl.array(dtype=wl.int32)):
    s = wl.shared_array(N, wl.float32)
    t = wl.thread_idx.x
    s[t] = x[wl.block_idx.x * wl.block_dim.x + t]
    wl.syncthreads()
    v = s[N - 1 - t]
    v += wl.shfl_down_sync(wl.FULL_MASK, v, 1)
    wl.atomic_add(h, t % 4, 1)
    x[t] = wl.sqrt(wl.abs(v)) + math.pi + wl.max(v, 1.0) ** 2


@wl.kernel
def seed_vec(p: wl.array(dtype=wl.vec3), m: wl.array(dtype=wl.mat33),
             out: wl.array(dtype=wl.float64)):
    i = wl.tid()
    v = p[i] * 2.0
    w = m[i] @ v
    w.x = wl.dot(v, w)
    out[i] = wl.float64(wl.length(wl.cross(v, w))) + 1.0
    print("v", i, w[0])
    loc = wl.local_array((2, 3), wl.int64)
    loc[1, 2] = wl.int64(i) << 40
    out[0] = float(loc[1, 2] % 7) - wl.float64(wl.popc(i)) / 3


SEEDS = [seed_saxpy, seed_loops, seed_shared, seed_vec]

#: replacement tokens and expressions: names of the seeds, literals, operators, keywords
TOKENS = ["x", "i", "j", "n", "v", "s", "wl.tid()", "1.5", "0", "-1", "True", "None", "(", ")",
          "[", "]", ",", ":", ".", "lambda", "class", "for", "while", "return", "yield", "not",
          "and", "or", "**", "//", "%", "<<", "@", "is", "in", "==", "=", "+=", "wl.vec3",
          "wl.float64", "wl.int8", "range", "len", "print", "N", "SCALE", "sq", "pair",
          "math.pi", "wl.shared_array", "1e40", "2**70", "'s'", ".x", ".shape", "wl.atomic_add",
          "break", "continue", "pass", "if", "else", "wl", "math", "seed_saxpy", "x[i, j]",
          "wl.mat33()", "(1, 2)", "-0.0", "~", "abs", "min", "wl.select"]
EXPRS = [ast.parse(e, mode="eval").body for e in (
    "1", "1.5", "x[i]", "wl.tid()", "wl.vec3(1.0)", "(i, j)", "x", "n // 0", "sq(1)",
    "pair(1.0, 2)", "wl.thread_idx.x", "s[0]", "wl.sqrt(n)", "i if n else 2.0", "not x",
    "wl.mat33() @ wl.vec3()", "1 < n < 3", "wl.int64(1) << 70", "-(2 ** 31)", "print(x)",
    "wl.shfl_sync(-1, 1.0, 0)", "wl.atomic_max(x, 0, 1)", "len(x)", "x.shape[0]", "'str'")]


def token_mutant(text: str, data) -> str:
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    editable = [k for k, t in enumerate(toks) if t.type in (tokenize.NAME, tokenize.OP,
                                                             tokenize.NUMBER, tokenize.STRING)]
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        k = data.draw(st.sampled_from(editable), label="token")
        how = data.draw(st.sampled_from(["replace", "delete", "dup"]), label="how")
        t = toks[k]
        new = {"replace": lambda: data.draw(st.sampled_from(TOKENS), label="with"),
               "delete": lambda: "", "dup": lambda: t.string + " " + t.string}[how]()
        toks[k] = t._replace(string=new)
    return tokenize.untokenize(toks)


def ast_mutant(text: str, data) -> str:
    tree = ast.parse(text)
    exprs = [n for n in ast.walk(tree) if isinstance(n, ast.expr)
             and not isinstance(n, ast.expr_context)]
    stmts_lists = [n.body for n in ast.walk(tree) if hasattr(n, "body")
                   and isinstance(n.body, list) and n.body]
    how = data.draw(st.sampled_from(["expr", "drop", "dup"]), label="ast edit")
    if how == "expr":
        target = data.draw(st.sampled_from(exprs), label="target")
        repl = copy.deepcopy(data.draw(st.sampled_from(EXPRS + exprs), label="replacement"))
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, repl)
                elif isinstance(value, list) and target in value:
                    value[value.index(target)] = repl
    else:
        body = data.draw(st.sampled_from(stmts_lists), label="body")
        k = data.draw(st.integers(0, len(body) - 1), label="stmt")
        if how == "drop" and len(body) > 1:
            del body[k]
        else:
            body.insert(k, body[k])
    return ast.unparse(ast.fix_missing_locations(tree))


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_mutated_kernels_fail_only_with_kernel_compile_errors(data):
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    mutate = data.draw(st.sampled_from([token_mutant, ast_mutant]), label="mutator")
    try:
        text = mutate(seed.source.text, data)
    except (tokenize.TokenError, SyntaxError, ValueError, IndentationError):
        return  # the mutation itself produced no text; nothing to compile
    mutant = Kernel(seed.fn, Source(text, seed.source.filename, seed.source.first_line))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lowered = make_llvm_ir(make_typed_ast(mutant))
        except KernelCompileError as err:
            n_lines = len(text.splitlines())
            in_kernel = seed.source.first_line <= err.line <= seed.source.first_line + n_lines
            in_func = "was called at" in err.hint  # an error inside sq() or pair()
            assert err.filename == seed.source.filename and (in_kernel or in_func), err
            assert not err.message.startswith("cannot compile this construct"), err  # a bug
            return
    llvm.parse_assembly(lowered.llvm_ir).verify()


def test_every_seed_compiles_unmutated():
    for k in SEEDS:
        llvm.parse_assembly(make_llvm_ir(make_typed_ast(k)).llvm_ir).verify()


# -- generated kernels: every scalar type, operator and common builtin, nested ---------------
@wl.kernel
def gen_base(a: wl.array(dtype=wl.int32), f: wl.array(dtype=wl.float32),
             d: wl.array(dtype=wl.float64), u: wl.array(dtype=wl.uint32),
             q: wl.array(dtype=wl.int64), h: wl.array(dtype=wl.float16),
             b: wl.array(dtype=wl.bool_), v: wl.array(dtype=wl.vec3), n: int, s: float):
    pass


LEAVES = st.sampled_from(["a[i]", "f[i]", "d[i]", "u[i]", "q[i]", "h[i]", "b[i]", "n", "s", "i",
                          "1", "-3", "0.5", "True", "x", "y", "wl.int8(3)", "wl.uint8(200)",
                          "wl.float16(1.5)", "wl.uint64(5)", "v[i].y"])
CALL1 = ["wl.sqrt", "abs", "wl.floor", "int", "float", "bool", "wl.float64", "wl.int64",
         "wl.uint32", "wl.popc", "wl.clz", "wl.exp", "wl.isnan", "wl.sign", "round", "sq"]
CALL2 = ["min", "max", "pow", "wl.atan2", "wl.mulhi", "wl.copysign"]


def _combine(children):
    bin_ = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<<", ">>",
                                                "&", "|", "^"]), children)
    cmp_ = st.tuples(children, st.sampled_from(["<", "<=", ">", "==", "!="]), children,
                     st.sampled_from(["<", ">="]), children)
    return st.one_of(
        bin_.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        cmp_.map(lambda t: f"({t[0]} {t[1]} {t[2]} {t[3]} {t[4]})"),
        st.tuples(children, st.sampled_from(["and", "or"]), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(st.sampled_from(CALL1), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(CALL2), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(st.sampled_from(["-", "~", "not "]), children).map(lambda t: f"({t[0]}{t[1]})"))


EXPR = st.recursive(LEAVES, _combine, max_leaves=8)
TARGETS = st.sampled_from(["a[i]", "f[i]", "d[i]", "u[i]", "q[i]", "h[i]", "b[i]", "x", "y",
                           "v[i].x", "v[i][2]"])
STMT = st.one_of(
    st.tuples(TARGETS, EXPR).map(lambda t: [f"{t[0]} = {t[1]}"]),
    st.tuples(TARGETS, st.sampled_from(["+", "*", "//", "%", "<<", "|"]), EXPR).map(
        lambda t: [f"{t[0]} {t[1]}= {t[2]}"]),
    st.tuples(EXPR, TARGETS, EXPR).map(
        lambda t: [f"if {t[0]}:", f"    {t[1]} = {t[2]}", "else:", "    x += 1"]),
    st.tuples(st.sampled_from(["n", "0, n, 2", "n, 0, -1", "0, 10, n"]), TARGETS, EXPR).map(
        lambda t: [f"for k in range({t[0]}):", f"    {t[1]} = {t[2]}", "    x += k"]),
    st.tuples(st.sampled_from(["a", "f", "d", "u", "q"]), EXPR).map(
        lambda t: [f"wl.atomic_add({t[0]}, i % 4, {t[1]})"]))


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(STMT, min_size=1, max_size=4))
def test_generated_kernels_compile_or_fail_cleanly(stmts):
    body = ["i = wl.tid()", "x = 0", "y = 0.0"] + [line for s in stmts for line in s]
    head = gen_base.source.text.split("\n    pass")[0]
    text = head + "\n" + "".join(f"    {line}\n" for line in body)
    mutant = Kernel(gen_base.fn, Source(text, "<generated>", 1))
    try:
        lowered = make_llvm_ir(make_typed_ast(mutant))
    except KernelCompileError as err:
        assert not err.message.startswith("cannot compile this construct"), err
        in_func = "was called at" in err.hint  # an error inside sq()
        assert in_func or (1 <= err.line <= len(text.splitlines()) and err.col >= 1), err
        return
    llvm.parse_assembly(lowered.llvm_ir).verify()
