"""What ``print(*r.findings)`` says after ``wl.launch(..., device="sim")``: findings in the
user's terms (the Python array and its line, not the PTX symbol), as the notebook's HTML
view shows them. Real kernels, compiled by LLVM and run on the simulator."""

import dataclasses

import numpy as np

import warp_lab as wl
from warp_lab.examples import source_line
from warp_lab.runtime.finding_text import merge_by_line

ALL = ("memcheck", "racecheck", "initcheck", "barrier")


@wl.kernel
def neighbour(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(64, wl.float32)  # marker: buf
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    y[wl.tid()] = buf[(t + 1) % 64]


@wl.kernel
def shifted(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(32, wl.float32)  # marker: tile
    t = wl.thread_idx.x
    tile[t] = x[wl.tid()]
    wl.syncthreads()
    y[wl.tid()] = tile[t + 1]


@wl.kernel
def forgot_shared_mem(x: wl.array(dtype=wl.float32)):
    dyn = wl.dynamic_shared_array(wl.float32)  # marker: dyn
    dyn[wl.thread_idx.x] = 1.0
    x[wl.tid()] = dyn[0]


def _one(kernel, n, block, checks=ALL, inputs=None):
    inputs = inputs or [np.arange(n, dtype=np.float32), np.zeros(n, np.float32)]
    r = wl.launch(kernel, dim=n, inputs=inputs, block_dim=block, device="sim", checks=checks)
    assert r.findings, kernel.name
    return r.findings


def test_shared_memory_findings_name_the_python_array_and_its_line():
    # a race (no barrier), an out-of-bounds read (tile[32]) and a dynamic array the launch
    # gave no memory: each names the array as the kernel does, the symbol stays in details
    for kernel, name, checks, inputs in (
            (neighbour, "buf", ALL, None),
            (shifted, "tile", ("memcheck",), None),
            (forgot_shared_mem, "dyn", ("memcheck",), [np.zeros(32, np.float32)])):
        line = source_line(kernel, f"# marker: {name}")
        for f in _one(kernel, 64 if kernel is neighbour else 32, 64 if kernel is neighbour
                      else 32, checks, inputs):
            text = str(f)
            assert kernel.name not in f.message and "__wl_dynamic" not in text, text
            if kernel is forgot_shared_mem:
                assert f"(wl.dynamic_shared_array dyn, line {line}, the launch's shared_mem=0 " \
                       "bytes" in text, text
            elif kernel is shifted:   # thread 31 reads tile[32]
                assert f"(tile[32] is past the end of tile (32 elements), the shared array " \
                       f"of line {line}; the block has 128 bytes" in text, text
            else:   # a race: thread t reads buf[t + 1], which thread t + 1 writes
                assert f"buf[{f.thread[0] + 1}], the shared array of line {line}:" in text, text
                sym = f.details.get("variable", "")
                assert sym.startswith(f"{kernel.name}_{name}_"), f.details


@wl.kernel
def race_2d(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array((8, 32), wl.float32)  # marker: race tile
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    tile[ty, tx] = x[ty * 32 + tx]  # marker: tile write
    y[ty * 32 + tx] = tile[(ty + 1) % 8, tx]  # marker: tile read


@wl.kernel
def race_component(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    pts = wl.shared_array(64, wl.vec3)
    t = wl.thread_idx.x
    pts[t] = wl.vec3(x[wl.tid()], 0.0, 0.0)
    y[wl.tid()] = pts[(t + 1) % 64].y


@wl.kernel
def race_dynamic(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    dyn = wl.dynamic_shared_array(wl.float32)  # marker: race dyn
    t = wl.thread_idx.x
    dyn[t] = x[wl.tid()]
    y[wl.tid()] = dyn[(t + 1) % 64]


def _race(kernel, n, block, **launch):
    x = np.arange(n, dtype=np.float32)
    r = wl.launch(kernel, grid=1, block=block, inputs=[x, np.zeros_like(x)], device="sim",
                  checks=("racecheck",), **launch)
    (f,) = r.findings
    assert f.kind == "race_raw", str(f)
    return f


def test_races_say_the_element_and_the_other_accesss_python_line():
    # neighbour: thread t reads buf[t + 1] (no barrier), which thread t + 1 wrote at line 17
    x = np.arange(64, dtype=np.float32)
    r = wl.launch(neighbour, grid=1, block=64, inputs=[x, np.zeros_like(x)], device="sim",
                  checks=("racecheck",))
    (f,) = r.findings
    buf = source_line(neighbour, "# marker: buf")
    write = buf + 2
    t = f.thread[0]
    assert f.details["other_thread"] == (t + 1, 0, 0)
    assert (f"read-after-write hazard at buf[{t + 1}], the shared array of line {buf}: this "
            f"access races with thread ({t + 1}, 0, 0) of the same block at line {write} "
            "(buf[t] = x[wl.tid()]), with no barrier between them") in f.message, f.message
    assert "byte" not in f.message and "PTX line" not in f.message, f.message
    assert (f.details["array"], f.details["index"]) == ("buf", (t + 1,))
    # details keep the simulator's terms: the other access's PTX line is on the write's line
    ck = r.compiled
    assert ck.source_map.key_of_ptx(f.details["other_ptx_line"]) == write
    assert f.details["shared_offset"] == 4 * (t + 1)
    # 2-D: thread (tx, ty) reads tile[(ty + 1) % 8, tx], written by thread (tx, ty + 1)
    f = _race(race_2d, 256, (32, 8))
    ox, oy, _ = f.details["other_thread"]
    tx, ty, _ = f.thread
    assert (ox, oy) == (tx, (ty + 1) % 8), f.details
    line = source_line(race_2d, "# marker: race tile")
    assert f"hazard at tile[{oy}, {ox}], the shared array of line {line}: " in f.message, \
        f.message
    assert f"at line {source_line(race_2d, '# marker: tile write')} (tile[ty, tx] = " \
        "x[ty * 32 + tx]  # marker: tile write)," in f.message, f.message
    assert f.source_line == source_line(race_2d, "# marker: tile read")


def test_races_inside_an_element_or_in_dynamic_shared_memory_keep_the_bytes():
    # pts[t + 1].y: 4 bytes into a 12-byte vec3, not a whole element
    f = _race(race_component, 64, 64)
    t = f.thread[0]
    assert f"at shared offset {12 * (t + 1) + 4} (byte {12 * (t + 1) + 4} of shared array " \
        "pts (line" in f.message, f.message
    assert "array" not in f.details and "pts[" not in f.message.split(":")[0]
    # a wl.dynamic_shared_array: its views may differ in dtype, so the byte is the place
    f = _race(race_dynamic, 64, 64, shared_mem=256)
    line = source_line(race_dynamic, "# marker: race dyn")
    t = f.thread[0]
    assert f"at shared offset {4 * (t + 1)} (byte {4 * (t + 1)} of shared array dyn (line " \
        f"{line})): this access races with thread ({t + 1}, 0, 0) of the same block at line " \
        f"{line + 2} (dyn[t] = x[wl.tid()])" in f.message, f.message


@wl.kernel
def shift_right(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i + 1]


@wl.kernel
def shift_left(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i - 1]


@wl.kernel
def up_left(src: wl.array(dtype=wl.float32, ndim=2), dst: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    dst[i, j] = src[i - 1, j - 1] + src[i, j]


@wl.kernel
def right(src: wl.array(dtype=wl.float32, ndim=2), dst: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    dst[i, j] = src[i, j + 1]


@wl.kernel
def next_y(x: wl.array(dtype=wl.vec3), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i + 1].y


def _oob(kernel, dim, src, dst):
    r = wl.launch(kernel, dim=dim, inputs=[src, dst], device="sim", checks=("memcheck",))
    (f,) = r.findings
    assert f.kind == "out_of_bounds" and r.partial, str(f)
    return f


def test_out_of_bounds_global_accesses_say_the_element_index():
    # x[i + 1] at i = 99 read "0 bytes past the end of 'x'", which sounds in bounds
    x, y = np.ones(100, np.float32), np.zeros(100, np.float32)
    f = _oob(shift_right, 100, x, y)
    assert f.thread == (99, 0, 0)
    assert f.message.endswith(": x[100] is past the end of x (100 elements)"), f.message
    assert (f.details["array"], f.details["index"]) == ("x", (100,))
    assert "bytes past" not in f.message
    f = _oob(shift_left, 100, x, y)
    assert f.thread == (0, 0, 0)
    assert f.message.endswith(": x[-1] is before the start of x (100 elements)"), f.message
    # 2-D: src[-1, -1] is also src[-2, 95] (96 columns); the thread's own index decides
    src = np.ones((64, 96), np.float32)
    f = _oob(up_left, src.shape, src, np.zeros_like(src))
    assert f.message.endswith(": src[-1, -1] is outside src (shape (64, 96))"), f.message
    assert "388 bytes before" not in f.message
    # src[0, 96] lies inside src (src[1, 0]): memcheck's index check, not the address's
    f = _oob(right, src.shape, src, np.zeros_like(src))
    assert f.details["index"] == (0, 96) and f.details["check"] == "index", f.message
    # a strided view: its own shape and strides (every other column of src)
    f = _oob(right, (64, 48), src[:, ::2], np.zeros((64, 48), np.float32))
    assert f.message.endswith(": src[0, 48] is outside src (shape (64, 48))"), f.message


def test_an_access_inside_an_element_keeps_the_byte_offsets():
    # x[100].y of a vec3 array: 4 bytes into element 100, not a whole element
    x, y = np.ones((100, 3), np.float32), np.zeros(100, np.float32)
    f = _oob(next_y, 100, x, y)
    assert "4 bytes past the end of 'x' (1200 bytes at" in f.message, f.message
    assert "array" not in f.details


@wl.kernel
def tile_up_left(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array((8, 32), wl.float32)  # marker: 2-D tile
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    tile[ty, tx] = x[ty * 32 + tx]
    wl.syncthreads()
    y[ty * 32 + tx] = tile[ty - 1, tx - 1]


def test_out_of_bounds_shared_accesses_say_the_element_index():
    # thread (0, 0) reads tile[-1, -1]: 132 bytes below the array, a wrapped 32-bit offset
    x = np.ones(256, np.float32)
    r = wl.launch(tile_up_left, grid=1, block=(32, 8), inputs=[x, np.zeros_like(x)],
                  device="sim", checks=("memcheck",))
    (f,) = r.findings
    line = source_line(tile_up_left, "# marker: 2-D tile")
    assert f.thread == (0, 0, 0)
    assert f.message.endswith(f": tile[-1, -1] is outside tile (shape (8, 32)), the shared "
                              f"array of line {line}"), f.message
    assert (f.details["array"], f.details["index"]) == ("tile", (-1, -1))


@wl.kernel
def sum_tree(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    wl.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] = buf[t] + buf[t + s]
        wl.syncthreads()
        s = s // 2
    if t == 0:
        wl.atomic_add(out, 0, buf[0])


@wl.kernel
def sum_shuffle(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    v = x[wl.tid()]
    offset = 16
    while offset > 0:
        v = v + wl.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset = offset // 2
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, v)


@wl.kernel
def sum_shuffle_own_return(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                           n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    if i >= n:
        return
    v = x[i]
    offset = 16
    while offset > 0:
        v = v + wl.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset = offset // 2
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, v)


def _sum(kernel, n, **launch):
    x, out = np.ones(n, np.float32), np.zeros(1, np.float32)
    inputs = [x, out] + ([n] if kernel is sum_shuffle_own_return else [])
    return wl.launch(kernel, inputs=inputs, device="sim", checks=ALL, **launch).findings


def test_findings_of_threads_the_dim_guard_removed_say_so():
    # dim=1000 in blocks of 256: threads 1000..1023 (lanes 8..31 of the last warp) return
    # at the kernel's entry, so the shuffles name exited lanes and buf[232..255] of the
    # last block is never written
    (f,) = found = _sum(sum_shuffle, 1000, dim=1000)   # 5 unrolled shuffles, one finding
    assert [f.kind for f in found] == ["warp_sync"], [str(f) for f in found]
    assert f.block == (3, 0, 0) and f.details["past_dim"] == 24
    assert "its lanes past dim=1000 exited at the kernel's entry (wl.launch's dim= " \
        "guard), so they never reach the shfl.sync: launch whole warps" in f.message, \
        f.message
    (f,) = _sum(sum_tree, 1000, dim=1000)
    assert f.kind == "uninitialized" and f.block == (3, 0, 0)
    # thread t < 128 reads buf[t + 128]: buf[232] (thread 1000 - 768) is the first unwritten
    t = f.thread[0]
    assert t + 128 >= 232 and f.details["index"] == (t + 128,)
    assert f.message.startswith(f"read of uninitialized shared memory: buf[{t + 128}], the "
                                "shared array of line "), f.message
    assert "byte" not in f.message.split(";")[0], f.message
    assert "; 24 of this block's 256 threads are past dim=1000 and exited at the kernel's " \
        "entry (wl.launch's dim= guard), so shared memory that only they would write is " \
        "never written" in f.message, f.message
    # whole blocks: nothing to explain
    assert _sum(sum_shuffle, 1024, dim=1024) == [] and _sum(sum_tree, 1024, dim=1024) == []


def test_lanes_that_return_by_the_kernels_own_test_get_no_dim_cause():
    # the same exited lanes, removed by the kernel's own `if i >= n: return` in a grid=/block=
    # launch: the finding stands without the dim= explanation
    (first,) = found = _sum(sum_shuffle_own_return, 1000, grid=4, block=256)
    assert [f.kind for f in found] == ["warp_sync"]
    assert "dim=" not in first.message and "past_dim" not in first.details, first.message


def _shfl_lines(ck) -> list:
    """PTX lines (1-based) of the kernel's shfl.sync instructions, read from its PTX text."""
    return [n for n, ln in enumerate(ck.ptx.splitlines(), 1) if "shfl.sync" in ln]


def test_findings_of_one_line_unrolled_into_several_instructions_are_one():
    # the 5-step shuffle loop is unrolled into 5 shfl.sync, each a finding of the simulator
    # with the same message: one finding that names the 5 PTX lines, the first's block and
    # thread, PTX line and Python line
    x, out = np.ones(1000, np.float32), np.zeros(1, np.float32)
    r = wl.launch(sum_shuffle, inputs=[x, out], dim=1000, device="sim", checks=ALL)
    shfl = _shfl_lines(r.compiled)
    assert len(shfl) == 5, shfl
    (f,) = r.findings
    line = source_line(sum_shuffle, "wl.shfl_down_sync")
    assert (f.kind, f.source_line, f.ptx_line) == ("warp_sync", line, shfl[0])
    assert {r.compiled.source_map.key_of_ptx(n) for n in shfl} == {line}
    assert (f.block, f.thread) == ((3, 0, 0), (224, 0, 0))   # lane 0 of the partial warp
    said = ", ".join(map(str, shfl))
    assert f.message.endswith(f" (5 PTX instructions of this line: {said})"), f.message
    assert f.details["ptx_lines"] == shfl
    # the notebook view's findings table shows it once, merged
    from warp_lab.notebook.results import launch_html
    rows = [row for row in launch_html(r).split("<tr>") if "<td>warp_sync</td>" in row]
    assert len(rows) == 1 and f"5 PTX instructions of this line: {said}" in rows[0], rows
    # ... and so does the debugger's run_to_end
    from warp_lab.notebook.debugger import debug
    dbg = debug(sum_shuffle, dim=1000, inputs=[x, np.zeros(1, np.float32)], checks=ALL)
    assert [str(g) for g in dbg.run_to_end().findings] == [str(f)]


@wl.kernel
def blur_no_halo(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(66, wl.float32)
    t = wl.thread_idx.x
    tile[t + 1] = x[wl.tid()]
    wl.syncthreads()
    y[wl.tid()] = tile[t] + tile[t + 2]  # marker: halo reads


def test_findings_that_differ_in_more_than_the_ptx_line_stay_apart():
    # tile[t] at thread 0 reads tile[0], tile[t + 2] at thread 63 reads tile[65]: two
    # reads on one line, other threads, other elements, so two findings
    x = np.ones(128, np.float32)
    r = wl.launch(blur_no_halo, inputs=[x, np.zeros_like(x)], dim=128, block_dim=64,
                  device="sim", checks=("initcheck",))
    line = source_line(blur_no_halo, "# marker: halo reads")
    assert sorted((f.kind, f.source_line, f.details["index"], f.thread) for f in r.findings) \
        == [("uninitialized", line, (0,), (0, 0, 0)), ("uninitialized", line, (65,), (63, 0, 0))]
    assert all("PTX instructions of this line" not in f.message for f in r.findings)
    assert merge_by_line(r.findings) == r.findings
    # the same message at another line, or of another kind, is another finding; at the
    # same line and kind, with only the PTX line said otherwise, it is merged
    f = r.findings[0]
    other_line = dataclasses.replace(f, source_line=line + 1, ptx_line=f.ptx_line + 9)
    other_kind = dataclasses.replace(f, kind="race_raw", ptx_line=f.ptx_line + 9)
    assert merge_by_line([f, other_line, other_kind]) == [f, other_line, other_kind]
    other_file = dataclasses.replace(f, source_file=f.source_file + "x", ptx_line=99)
    assert merge_by_line([f, other_file]) == [f, other_file]
    ptx_said = dataclasses.replace(f, message=f.message + " (PTX line 7)", ptx_line=99)
    twin = dataclasses.replace(ptx_said, message=f.message + " (PTX line 8)",
                               ptx_line=f.ptx_line, thread=(5, 0, 0))
    (merged,) = merge_by_line([ptx_said, twin])
    assert merged.thread == f.thread and merged.ptx_line == 99
    assert merged.message.endswith(f"(PTX line 7) (2 PTX instructions of this line: "
                                   f"{f.ptx_line}, 99)"), merged.message


@wl.kernel
def _const_index_shared(out: wl.array(dtype=wl.int32)):
    s = wl.shared_array(4, wl.int32)
    unused = wl.shared_array(64, wl.float32)  # noqa: F841 - declared, never used
    if wl.thread_idx.x == 0:
        s[1] = 5
    wl.syncthreads()
    out[wl.thread_idx.x] = s[1] + s[3]        # s[3]: nobody wrote it


def test_a_shared_array_used_at_constant_indices_is_named_by_element():
    # LLVM split shared_array(4) accessed only at s[1] and s[3] into two scalars numbered
    # by use (k_s_1_$_0, k_s_1_$_1), and initcheck said "byte 0 of shared array s (line 3)
    # of 4 bytes at offset 0x4" for s[3]; the array now stays whole, as declared
    ck = wl.compile(_const_index_shared, cache=False, sass=False)
    decls = [ln.strip() for ln in ck.ptx.splitlines() if ln.strip().startswith(".shared")]
    assert decls == [".shared .align 16 .b8 _const_index_shared_s_1[16];"], decls
    assert ck.resources.shared == 16          # the unused array is still dropped
    res = wl.launch(_const_index_shared, grid=1, block=64, inputs=[np.zeros(64, np.int32)],
                    device="sim", checks=("memcheck", "racecheck", "initcheck"))
    first = _const_index_shared.source.first_line
    assert [(f.kind, f.details.get("index"), f.source_line) for f in res.findings] == \
        [("uninitialized", (3,), first + 7)], [str(f) for f in res.findings]
    assert f"s[3], the shared array of line {first + 2}" in res.findings[0].message
