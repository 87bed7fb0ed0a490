"""wl.compile's cache: hits, misses, the on-disk format, and SASS added on demand."""

import json
import math
import os

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler import cache as C
from warp_lab.compiler import pipeline
from warp_lab.compiler.source_map import SourceLine
from warp_lab.examples import get


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "_default", C.KernelCache(str(tmp_path)))
    return tmp_path


def _kernel(src: str, name: str, tmp_path):
    """A kernel from a real file, so its source (and so its cache key) is under test control."""
    path = tmp_path / f"{name}.py"
    path.write_text("import warp_lab as wl\nSCALE = 2.0\n" + src)
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns[name]


SRC = '''
@wl.kernel
def scale(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = x[i] * SCALE
'''


def test_hit_miss_and_disk_round_trip(fresh_cache, tmp_path):
    k = _kernel(SRC, "scale", tmp_path)
    a = wl.compile(k)
    b = wl.compile(k)
    assert "cache" in b.timings and "cache" not in a.timings
    assert b.ptx == a.ptx and b.cubin == a.cubin
    assert wl.compile(k, opt=2).cache_key != a.cache_key          # options are in the key
    assert wl.compile(k, arch="sm_80").cache_key != a.cache_key
    # the disk holds plain JSON + the cubin; a new process (a new cache object) reads it back
    files = sorted(os.listdir(fresh_cache))
    assert f"{a.cache_key}.json" in files and f"{a.cache_key}.cubin" in files
    with open(fresh_cache / f"{a.cache_key}.json") as f:
        assert json.load(f)["ptx"] == a.ptx
    again = C.KernelCache(str(fresh_cache)).get(a.cache_key)
    assert again.ptx == a.ptx and again.cubin == a.cubin and again.resources == a.resources
    assert again.param_layout == a.param_layout and again.source_map == a.source_map


SHARED_SRC = '''
@wl.func
def half(v: wl.float32):
    hb = wl.shared_array(64, wl.float16)
    hb[wl.tid() % 64] = wl.float16(v)
    return wl.float32(hb[0])

@wl.kernel
def tiles(x: wl.array(dtype=wl.float32)):
    tile = wl.shared_array((4, 8), wl.float32)
    vv = wl.shared_array(8, wl.vec4)
    dyn = wl.dynamic_shared_array(wl.int32, offset=16)
    i = wl.tid()
    tile[i % 4, i % 8] = x[i]
    vv[i % 8] = wl.vec4(x[i])
    dyn[i % 8] = i
    x[i] = tile[0, 0] + vv[1][2] + wl.float32(dyn[3]) + half(x[i])
'''


def test_shared_array_element_types_are_recorded_and_kept_on_disk(fresh_cache, tmp_path):
    """The debugger shows a shared array's values: it needs each array's element type
    (and a dynamic array's offset), which only the compiler knows."""
    a = wl.compile(_kernel(SHARED_SRC, "tiles", tmp_path))
    arrays = a.source_map.arrays
    syms = {x.name: x.symbol for x in arrays}
    assert [(x.symbol, x.name, x.dtype, x.offset) for x in arrays] == [
        (syms["tile"], "tile", "float32", 0), (syms["vv"], "vv", "vec4", 0),
        ("__wl_dynamic_shared", "dyn", "int32", 16), (syms["hb"], "hb", "float16", 0)]
    again = C.KernelCache(str(fresh_cache)).get(a.cache_key)
    assert again.source_map.arrays == arrays

def test_source_and_captured_constants_change_the_key(fresh_cache, tmp_path):
    k1 = _kernel(SRC, "scale", tmp_path)
    k2 = _kernel(SRC.replace("x[i] * SCALE", "x[i] * SCALE + 1.0"), "scale", tmp_path)
    assert wl.compile(k1).cache_key != wl.compile(k2).cache_key
    k1.globals["SCALE"] = 3.0
    assert wl.compile(k1).cache_key != wl.compile(k2).cache_key
    assert "0f40400000" in wl.compile(k1).ptx  # 3.0f baked into the PTX


def test_module_attributes_and_numpy_scalars_are_in_the_key(fresh_cache, tmp_path):
    import types as pytypes
    src = SRC.replace("x[i] * SCALE", "x[i] * cfg.FACTOR + OFFSET")
    k = _kernel(src, "scale", tmp_path)
    k.globals["cfg"] = pytypes.ModuleType("cfg")
    k.globals["cfg"].FACTOR = 2.0
    k.globals["OFFSET"] = np.float32(1.0)
    first = wl.compile(k).cache_key
    k.globals["cfg"].FACTOR = 4.0
    second = wl.compile(k).cache_key
    k.globals["OFFSET"] = np.float32(2.0)
    third = wl.compile(k).cache_key
    assert len({first, second, third}) == 3


@pytest.mark.parametrize("body, before, after", [
    # a print() format, a NumPy scalar type, a math function and a wl builtin, each
    # compiled in by the front end under a global name
    ("    print(MSG, i)", "a=%d", "b=%d"),
    ("    x[i] = wl.float32(DT(x[i]) / DT(3.0))", np.float32, np.float64),
    ("    x[i] = F(x[i])", math.sin, math.cos),
    ("    OP(x, 0, x[i])", wl.atomic_add, wl.atomic_max),
])
def test_every_kind_of_value_the_front_end_compiles_in_is_in_the_key(fresh_cache, tmp_path,
                                                                    body, before, after):
    name = next(n for n in ("MSG", "DT", "F", "OP") if n in body)
    src = SRC.replace("    x[i] = x[i] * SCALE", body)
    k = _kernel(src, "scale", tmp_path)
    k.globals[name] = before
    first = wl.compile(k, sass=False)
    k.globals[name] = after
    second = wl.compile(k, sass=False)
    assert "cache" not in second.timings and second.cache_key != first.cache_key
    # the reference: the same kernel compiled from scratch, which the change does change
    fresh = wl.compile(k, sass=False, cache=False)
    assert fresh.ptx == second.ptx != first.ptx


def test_a_value_of_a_nested_module_is_in_the_key(fresh_cache, tmp_path):
    # pkg.sub.FACTOR: the front end follows modules attribute by attribute; a key that
    # looked one module deep served the PTX of the old FACTOR
    import types as pytypes
    k = _kernel(SRC.replace("x[i] * SCALE", "x[i] * pkg.sub.FACTOR"), "scale", tmp_path)
    pkg = pytypes.ModuleType("pkg")
    pkg.sub = pytypes.ModuleType("pkg.sub")
    pkg.sub.pkg = pkg  # a cycle: pkg.sub.pkg.sub... is followed once
    pkg.sub.FACTOR = 2.0
    k.globals["pkg"] = pkg
    first = wl.compile(k, sass=False)
    pkg.sub.FACTOR = 5.0
    second = wl.compile(k, sass=False)
    assert "cache" not in second.timings and second.cache_key != first.cache_key
    assert wl.compile(k, sass=False, cache=False).ptx == second.ptx != first.ptx


def test_a_device_function_reached_through_a_module_is_in_the_key(fresh_cache, tmp_path,
                                                                    monkeypatch):
    import importlib
    helper = tmp_path / "rev11_helpers.py"
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(op):
        helper.write_text("import warp_lab as wl\n\n@wl.func\ndef f(v: wl.float32) -> "
                          f"wl.float32:\n    return v {op} 3.0\n")

    write("*")
    import rev11_helpers
    k = _kernel(SRC.replace("x[i] * SCALE", "helpers.f(x[i])"), "scale", tmp_path)
    k.globals["helpers"] = rev11_helpers
    first = wl.compile(k, sass=False)
    write("+")  # the module edited and reloaded, as in a notebook
    importlib.invalidate_caches()
    k.globals["helpers"] = importlib.reload(rev11_helpers)
    second = wl.compile(k, sass=False)
    assert "cache" not in second.timings and second.cache_key != first.cache_key
    assert wl.compile(k, sass=False, cache=False).ptx == second.ptx != first.ptx


def test_corrupt_disk_entry_is_a_miss(fresh_cache, tmp_path):
    k = _kernel(SRC, "scale", tmp_path)
    key = wl.compile(k).cache_key
    (fresh_cache / f"{key}.json").write_text("{not json")
    assert C.KernelCache(str(fresh_cache)).get(key) is None


@pytest.mark.parametrize("field,value", [
    ("ptx", {"a": 1}), ("ptx", [[1]]), ("ptx", None), ("sass", 7), ("timings", None),
    ("timings", {"ptxas": "slow"}), ("toolchain", {"ptxas": 3}), ("launch_ndim", True),
    ("entry_guard", "yes"), ("resources", []), ("params", {}),
])
def test_a_field_of_the_wrong_json_type_under_a_valid_digest_is_a_miss(fresh_cache, tmp_path,
                                                                       field, value):
    # (the stress suite's attack: "timings": null under a recomputed digest raised
    # TypeError out of the cache hit, a dict as "ptx" was returned as the kernel's PTX)
    k = _kernel(SRC, "scale", tmp_path)
    ck = wl.compile(k)
    path = fresh_cache / f"{ck.cache_key}.json"
    d = json.loads(path.read_bytes())
    d[field] = value
    raw = json.dumps({"digest": C._NO_DIGEST.decode(),
                      **{k: v for k, v in d.items() if k != "digest"}}).encode()
    path.write_bytes(raw[:C._DIGEST_SPAN.start] + C._digest(raw, ck.cubin).encode()
                     + raw[C._DIGEST_SPAN.stop:])
    assert C.KernelCache(str(fresh_cache)).get(ck.cache_key) is None
    C._default.clear()
    assert wl.compile(k).ptx == ck.ptx      # rebuilt, not loaded


def test_sass_skipped_then_added_from_the_cached_cubin(fresh_cache):
    k = get("vector_add").kernel
    lean = pipeline.compile(k, sass=False)
    assert lean.sass is None and "sass=True" in lean.missing["sass"]
    assert lean.cubin is not None and lean.source_map.rows_of("sass_offsets") == {}
    full = pipeline.compile(k)
    assert full.sass and "/*0000*/" in full.sass and "sass" not in full.missing
    assert full.cubin == lean.cubin and "cache" in full.timings
    assert full.source_map.rows_of("sass_offsets") and full.source_map.rows_of("ptx") == lean.source_map.rows_of("ptx")


@pytest.mark.parametrize("kwargs, message", [
    (dict(arch="sm_91"), "unsupported architecture 'sm_91'"),
    (dict(opt=4), "opt must be 0, 1, 2 or 3"),
    (dict(opt=True), "opt must be 0, 1, 2 or 3"),
    (dict(fast_math="yes"), "fast_math must be True or False"),
    (dict(sass=None), "sass must be True or False"),
    (dict(maxrregcount=0), "maxrregcount must be 1..255"),
    (dict(maxrregcount=2.5), "maxrregcount must be 1..255"),
])
def test_compile_options_are_checked_before_anything_runs(kwargs, message):
    with pytest.raises(ValueError, match=message):
        wl.compile(get("saxpy").kernel, **kwargs)


def test_life_ranges_added_from_the_cached_cubin_and_kept_on_disk(fresh_cache):
    from warp_lab.analysis import registers
    from warp_lab.analysis.liveness import parse_life_ranges
    from warp_lab.compiler import toolchain

    k = get("matmul_tiled").kernel
    plain = pipeline.compile(k)
    assert plain.life_ranges is None
    full = pipeline.compile(k, life_ranges=True)
    assert "cache" in full.timings and full.sass == plain.sass and full.cubin == plain.cubin
    # nvdisasm's wide life-range table of the same cubin is the reference
    wide = parse_life_ranges(toolchain.make_sass(full.cubin, "sm_90", ("--print-life-ranges",)))
    assert [(r.offset, r.gpr) for r in parse_life_ranges(full.life_ranges)] == \
        [(r.offset, r.gpr) for r in wide]
    # register_pressure reads the kept table: no nvdisasm run of its own
    registers._sass_with_life_ranges.cache_clear()
    pressure = registers.register_pressure(full)
    assert registers._sass_with_life_ranges.cache_info().misses == 0
    assert pressure.per_instruction == {r.offset: r.gpr for r in wide}
    assert pressure.max_live <= full.resources.registers
    # stored with the entry: a new process gets it from disk, and a fresh compile asks for it
    again = C.KernelCache(str(fresh_cache)).get(full.cache_key)
    assert again.life_ranges == full.life_ranges
    both = pipeline.compile(k, cache=False, life_ranges=True)
    assert both.life_ranges == full.life_ranges and both.sass == full.sass
    lean = pipeline.compile(k, cache=False, sass=False, life_ranges=True)
    assert lean.sass is None and lean.life_ranges == full.life_ranges


def test_register_heat_of_a_kernel_compiled_without_its_listing():
    # wl.launch compiles with sass=False; the per-line view must still have its lines
    from warp_lab.analysis.registers import register_pressure

    k = get("matmul_tiled").kernel
    lean = pipeline.compile(k, cache=False, sass=False, life_ranges=True)
    full = pipeline.compile(k, cache=False, life_ranges=True)
    assert lean.sass is None and full.sass
    assert register_pressure(lean).per_line == register_pressure(full).per_line != {}
    with pytest.raises(ValueError, match="life_ranges must be True or False"):
        pipeline.compile(k, life_ranges="yes")


# -- notebook cells: a name that changes with every run is not in the key or the artifacts ---

CELL = '''import warp_lab as wl

@wl.func
def twice(v: float) -> float:
    return v * 2.0

@wl.kernel
def k_cell(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = twice(x[i])
'''


def _cell(name: str, text: str, ns=None) -> dict:
    """Run ``text`` as IPython runs a cell: registered in linecache without a modification
    time, compiled under ``name``."""
    import linecache

    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {} if ns is None else ns
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own cell text
    return ns


def test_the_same_cell_run_again_is_a_cache_hit_named_after_the_new_run(fresh_cache):
    first = wl.compile(_cell("<cell 3>", CELL)["k_cell"])
    assert "cache" not in first.timings and first.source_map.cells == {"<cell of k_cell>": "<cell 3>"}
    # the artifacts name the cell by content; the helper of the same cell shares its name
    assert '.file\t1 "<cell of k_cell>"' in first.ptx and "<cell 3>" not in first.ptx
    assert '//## File "<cell of k_cell>", line 5' in first.sass
    assert set(first.source_map.rows_of("ptx")) == {5, 8, 9, 10}  # twice's return and the kernel
    assert first.source_map.rows.files == ()
    again = wl.compile(_cell("<cell 7>", CELL)["k_cell"])
    assert "cache" in again.timings and again.cache_key == first.cache_key
    assert again.source.filename == "<cell 7>" and again.source_map.cells == {"<cell of k_cell>": "<cell 7>"}
    assert again.ptx == first.ptx and again.source_map == first.source_map
    # from disk (a new process): the JSON entry, named after the run that asked for it
    C._default = C.KernelCache(str(fresh_cache))
    disk = wl.compile(_cell("/tmp/ipykernel_1/42.py", CELL)["k_cell"])
    assert "cache" in disk.timings and disk.source.filename == "/tmp/ipykernel_1/42.py"
    assert disk.source_map.cells == {"<cell of k_cell>": "/tmp/ipykernel_1/42.py"}
    # a launch's findings and the simulator's per-line metrics name the current cell
    x = np.zeros(8, np.float32)
    res = wl.launch(disk, dim=8, inputs=[x], device="sim")
    assert {f for f, _ in res.metrics.per_source_line} == {"/tmp/ipykernel_1/42.py"}


def test_what_the_artifacts_depend_on_stays_in_the_key(fresh_cache):
    base = wl.compile(_cell("<cell 1>", CELL)["k_cell"], sass=False).cache_key
    # the same text two lines lower: other .loc lines, another key
    lower = wl.compile(_cell("<cell 2>", "\n\n" + CELL)["k_cell"], sass=False).cache_key
    # the helper in another cell at the same lines: two files in the artifacts, another key
    ns = _cell("<cell 4>", CELL.split("@wl.kernel")[0])
    split = _cell("<cell 5>", "\n" * CELL[:CELL.index("@wl.kernel")].count("\n")
                  + CELL[CELL.index("@wl.kernel"):], ns)["k_cell"]
    ck = wl.compile(split, sass=False)
    assert len({base, lower, ck.cache_key}) == 3
    assert ck.source_map.cells == {"<cell of k_cell>": "<cell 5>", "<cell of twice>": "<cell 4>"}
    assert '"<cell of twice>"' in ck.ptx and '"<cell of k_cell>"' in ck.ptx
    # the kernel's own lines are mapped as they are, the other cell's helper's line 5 under
    # a key of its file; in every pane, and through the disk cache
    sm = ck.source_map
    helper = sm.key(SourceLine("<cell 4>", 5))
    assert sm.rows.files == ("<cell of twice>",) and sm.other_files == ("<cell 4>",)
    assert sm.line(helper) == SourceLine("<cell 4>", 5) and not sm.is_own(helper)
    assert set(sm.rows_of("ptx")) == {8, 9, 10, helper} and sm.line(9) == SourceLine("<cell 5>", 9)
    assert helper in sm.rows_of("llvm")
    full = wl.compile(split)
    assert helper in full.source_map.rows_of("sass_offsets")
    assert full.source_map.rows.files == sm.rows.files
    back = C.KernelCache(str(fresh_cache)).get(full.cache_key)
    assert back.source_map == full.source_map and back.source_map.cells == full.source_map.cells


def test_a_real_file_keeps_its_path_in_the_artifacts(fresh_cache, tmp_path):
    k = _kernel(SRC, "scale", tmp_path)
    ck = wl.compile(k)
    assert ck.source_map.cells == {} and ck.artifact_filename == str(tmp_path / "scale.py")
    assert f'"{tmp_path / "scale.py"}"' in ck.ptx


@pytest.mark.parametrize("body, message", [
    ("x[i + 1] = twice(x[i])", ":10: index 8 out of bounds"),
    ("for j in range(0, 4, int(x[i])):\n        x[i] = twice(x[i])",
     ":10: range() arg 3 must not be zero"),
])
def test_a_debug_trap_message_names_the_current_cell(fresh_cache, body, message):
    text = CELL.replace("x[i] = twice(x[i])", body)
    first = wl.compile(_cell("<cell 1>", text)["k_cell"], debug=True)
    # no text of the compile names the cell: a later run of it reuses every byte
    assert not any("<cell 1>" in t for t in (first.llvm_ir, first.llvm_ir_optimized, first.ptx,
                                             first.sass))
    ck = wl.compile(_cell("<cell 8>", text)["k_cell"], debug=True)
    assert "cache" in ck.timings
    x = np.zeros(8, np.float32)
    res = wl.launch(ck, dim=8, inputs=[x], device="sim")
    assert res.printed.startswith("In[8]" + message), res.printed   # as the notebook says
    assert res.findings[0].source_file == "<cell 8>" and res.findings[0].source_line == 10


def test_remove_all_removes_only_the_caches_own_files_and_the_next_compile_is_a_miss(
        tmp_path, monkeypatch):
    import warp_lab.warp as wp

    folder = tmp_path / "cache"
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))

    @wl.kernel
    def removed_entry(x: wl.array(dtype=wl.float32)):
        x[wl.tid()] = 2.0

    ck = wl.compile(removed_entry, arch="sm_80")
    entries = sorted(p.name for p in folder.iterdir())
    assert entries and all(C._ENTRY_NAME.fullmatch(n) for n in entries)
    (folder / "notes.txt").write_text("mine")                  # not the cache's: stays
    (folder / "sub").mkdir()
    (folder / "sub" / ("0" * 64 + ".json")).write_text("{}")   # in a subfolder: stays
    wp.clear_kernel_cache()                                     # Warp's name for it
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "sub"]
    assert (folder / "sub" / ("0" * 64 + ".json")).exists()
    again = wl.compile(removed_entry, arch="sm_80")
    assert again is not ck and again.ptx == ck.ptx              # compiled again, the same
    assert sorted(p.name for p in folder.iterdir()) == sorted(entries + ["notes.txt", "sub"])
