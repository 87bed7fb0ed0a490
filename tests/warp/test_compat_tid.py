"""``wp.tid()`` against warp-lang's CPU device when the launch's ``dim`` has another rank
than the tid's unpacking (Warp's ``_build_launch_bounds_from_tuple``: a short ``dim`` is
padded with 1s, extra axes run threads that share coordinates) and 4-D tids."""

from __future__ import annotations

import numpy as np
import pytest

from wpc_helpers import load_module

SOURCE = '''
import warp as wp

@wp.kernel
def one_of_two(out: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    wp.atomic_add(out, i, 0, 1)

@wp.kernel
def two_of_one(out: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    out[i, j] = out[i, j] + 1 + i * 10 + j * 100

@wp.kernel
def two_of_three(out: wp.array3d(dtype=wp.int32)):
    i, j = wp.tid()
    wp.atomic_add(out, i, j, 0, 1)

@wp.kernel
def four(a: wp.array4d(dtype=wp.float32), out: wp.array4d(dtype=wp.float32)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = a[i, j, k, l] * 2.0 + float(i * 1000 + j * 100 + k * 10 + l)
'''

CASES = [("one_of_two", (5, 3), [((5, 3), np.int32)]),
         ("two_of_one", 6, [((6, 1), np.int32)]),
         ("two_of_three", (3, 4, 5), [((3, 4, 5), np.int32)]),
         ("four", (3, 2, 37, 5), [((3, 2, 37, 5), np.float32)] * 2)]


@pytest.fixture(scope="module")
def mods(tmp_path_factory, warp_ref):
    """The source loaded once under each import (one Warp module build for every case)."""
    folder = tmp_path_factory.mktemp("tid")
    return (load_module(folder / "ref_tid.py", SOURCE, "warp", "wpc_ref_tid"),
            load_module(folder / "lab_tid.py", SOURCE, "warp_lab.warp", "wpc_lab_tid"))


@pytest.mark.parametrize("name, dim, shapes", CASES, ids=[c[0] for c in CASES])
def test_tid_rank_rules_match_warp_cpu(mods, warp_ref, name, dim, shapes):
    ref, lab = mods
    import warp_lab.warp as wp

    rng = np.random.default_rng(3)
    inputs = [rng.uniform(-1, 1, s).astype(t) if t == np.float32 else np.zeros(s, t)
              for s, t in shapes]
    ref_args = [warp_ref.array(v, device="cpu") for v in inputs]
    warp_ref.launch(getattr(ref, name), dim=dim, inputs=ref_args, device="cpu")
    lab_args = [wp.array(v) for v in inputs]
    wp.launch(getattr(lab, name), dim=dim, inputs=lab_args, device="cpu")
    for got, want in zip(lab_args, ref_args):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert lab_args[-1].numpy().any()   # (the kernel wrote something)


def test_four_index_tid_with_small_blocks_matches_warp_cpu(mods, warp_ref):
    """Several blocks per row of ``l`` (block_dim 64: 32 along l, 2 along k)."""
    ref, lab = mods
    import warp_lab.warp as wp

    a = np.random.default_rng(5).uniform(-1, 1, (2, 3, 5, 70)).astype(np.float32)
    ref_out = warp_ref.zeros(a.shape, dtype=warp_ref.float32, device="cpu")
    warp_ref.launch(ref.four, dim=a.shape, inputs=[warp_ref.array(a, device="cpu"), ref_out],
                    device="cpu", block_dim=64)
    out = wp.zeros(a.shape, dtype=wp.float32)
    wp.launch(lab.four, dim=a.shape, inputs=[wp.array(a), out], device="cpu", block_dim=64)
    np.testing.assert_array_equal(out.numpy(), ref_out.numpy())
    assert "2,100 inside dim=" in wp.last_launch().threads_text   # 2 * 3 * 5 * 70


def test_four_index_tid_outside_the_kernel_is_a_located_error(tmp_path):
    import warp_lab as wl

    src = ("import warp as wp\n\n@wp.func\ndef where4():\n    i, j, k, l = wp.tid()\n"
           "    return i\n\n@wp.kernel\ndef k4(out: wp.array(dtype=int)):\n"
           "    out[0] = where4()\n")
    lab = load_module(tmp_path / "lab_f4.py", src, "warp_lab.warp", "wpc_lab_tid_f4")
    with pytest.raises(wl.KernelCompileError, match="4-index wp.tid.. must be in the kernel"):
        wl.compile(lab.k4)
