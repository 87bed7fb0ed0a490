"""Read-only arrays: refused where the kernel may write them, accepted where it only reads.

``CompiledKernel.written_params`` comes from the front end; the references are
the simulator (every array a corpus kernel actually changed must be among the
written parameters, and every other array may be passed read-only with an
unchanged result) and each example's declared ``outputs``.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import LaunchError
from warp_lab.examples import CORPUS


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("ex", CORPUS, ids=lambda e: e.name)
def test_written_params_cover_what_the_simulator_changes(ex):
    args = ex.make_inputs()
    before = _copy(args)
    kwargs = ex.launch(args).kwargs()
    r = wl.launch(ex.kernel, inputs=args, device="sim", **kwargs)
    written = set(r.compiled.written_params)
    assert set(ex.outputs) <= written, (written, ex.outputs)
    names = [n for n, t in r.compiled.params]
    changed = {n for n, a, b in zip(names, args, before)
               if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True)}
    assert changed <= written, (changed, written)
    # the arrays it never writes can be read-only: same result, no refusal
    frozen = _copy(before)
    for n, a in zip(names, frozen):
        if isinstance(a, np.ndarray) and n not in written:
            a.setflags(write=False)
    wl.launch(ex.kernel, inputs=frozen, device="sim", **kwargs)
    for a, b in zip(frozen, args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_written_params_are_precise_on_typical_kernels():
    """Inputs only read (also through gathers and loops) are not marked written."""
    by_name = {ex.name: ex for ex in CORPUS}
    expect = {"saxpy": ("y",), "spmv_csr": ("y",), "histogram": ("hist",),
              "atomics_all": ("acc", "lock", "order", "facc")}
    for name, want in expect.items():
        ck = wl.compile(by_name[name].kernel, arch="sm_90", sass=False)
        assert ck.written_params == want, name


@wl.func
def _bump(a: wl.array(dtype=wl.int32), i: int):
    wl.atomic_add(a, i, 1)


@wl.func
def _peek(a: wl.array(dtype=wl.int32), i: int) -> int:
    return a[i]


@wl.kernel
def _through_calls_and_aliases(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
                               c: wl.array(dtype=wl.int32), d: wl.array(dtype=wl.int32),
                               v: wl.array(dtype=wl.vec3)):
    i = wl.tid()
    _bump(a, i)             # written by a device function
    alias = c
    alias[i] = _peek(b, i)  # c written through an alias; b only read by one
    v[i].y = float(d[i])    # a component of an element
    s = wl.shared_array(4, wl.int32)
    s[0] = 1                # shared, not a parameter


def test_written_params_follow_calls_aliases_and_components():
    ck = wl.compile(_through_calls_and_aliases, sass=False)
    assert ck.written_params == ("a", "c", "v")
    # the order is the parameters' and survives the disk cache
    from warp_lab.compiler.cache import _from_json, _to_json
    assert _from_json(_to_json(ck), ck.cubin).written_params == ("a", "c", "v")


@wl.kernel
def _gather(y: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32),
            idx: wl.array(dtype=wl.int32)):
    i = wl.tid()
    y[i] = x[idx[i]]


@wl.kernel
def _count(hits: wl.array(dtype=wl.int32), x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    if x[i] > 0.5:
        wl.atomic_add(hits, 0, 1)


@pytest.mark.parametrize("opt", [0, 3])
def test_read_only_gather_inputs_are_fine_and_outputs_refused(opt):
    x = np.broadcast_to(np.float32([2.5]), (8,))
    idx = np.arange(8, dtype=np.int32)[::-1].copy()
    idx.setflags(write=False)
    y = np.zeros(8, np.float32)
    wl.launch(_gather, dim=8, inputs=[y, x, idx], device="sim", opt=opt)
    np.testing.assert_array_equal(y, np.full(8, 2.5, np.float32))
    y_ro = np.zeros(8, np.float32)
    y_ro.setflags(write=False)
    with pytest.raises(LaunchError, match="parameter 'y' is read-only.*writable copy"):
        wl.launch(_gather, dim=8, inputs=[y_ro, x, idx], device="sim", opt=opt)


def test_atomic_target_read_only_is_refused_even_when_the_branch_is_not_taken():
    hits = np.zeros(1, np.int32)
    hits.setflags(write=False)
    with pytest.raises(LaunchError, match="parameter 'hits' is read-only"):
        wl.launch(_count, dim=4, inputs=[hits, np.zeros(4, np.float32)], device="sim")
    from warp_lab.notebook.debugger import debug  # prepares the launch as wl.launch does

    with pytest.raises(LaunchError, match="parameter 'hits' is read-only"):
        debug(_count, dim=4, inputs=[hits, np.zeros(4, np.float32)])
