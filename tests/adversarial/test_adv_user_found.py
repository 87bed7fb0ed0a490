"""Bugs found by using warp_lab as a new user, in parts owned by others.

Each test is the minimal reproduction and the behaviour a user should get; the
owner of ``warp_lab/compiler`` or ``warp_lab/sim`` removed the strict xfail when
the fix landed (the ones still marked are open). Kernels are cells (``<adv N>``), so diagnostics carry cell lines.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

HEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"


def test_constant_negative_index_is_a_compile_error():
    kernel = cell_kernel(HEAD + "    x[-1] = 5.0\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    assert (info.value.line, info.value.col) == (3, 7)  # the index -1


@pytest.mark.parametrize("expr", ["n // 0", "n % 0"])
def test_integer_division_by_literal_zero_is_a_compile_error(expr):
    kernel = cell_kernel(HEAD + f"    x[0] = float({expr})\n")
    with pytest.raises(wl.KernelCompileError, match="division by zero") as info:
        wl.compile(kernel, cache=False, sass=False)
    assert info.value.line == 3


def test_assigning_an_array_shape_says_it_is_read_only():
    kernel = cell_kernel(HEAD + "    x.shape = 3\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    assert "losing information" not in info.value.message
    assert "read-only" in info.value.message
    assert info.value.line == 3


def test_constant_index_past_a_shared_array_is_a_compile_error():
    kernel = cell_kernel(HEAD + "    s = wl.shared_array((4, 8), wl.float32)\n"
                         "    s[3, 8] = 1.0\n    x[0] = s[3, 7]\n")
    with pytest.raises(wl.KernelCompileError, match="index 8 is out of bounds for axis 1 "
                       "with size 8") as info:
        wl.compile(kernel, cache=False, sass=False)
    assert (info.value.line, info.value.col) == (4, 10)


@pytest.mark.parametrize("name, ptx_type", [("%nope", "f32"), ("%r1", "f99")])
def test_warp_state_as_type_refuses_unknown_names_clearly(name, ptx_type):
    from warp_lab.notebook.debugger import debug

    kernel = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         "    x[wl.tid()] = 2.0\n")
    session = debug(kernel, dim=32, inputs=[np.zeros(32, np.float32)], block_dim=32)
    session.step(3)
    with pytest.raises(wl.SimulatorError):
        session.lanes().as_type(name, ptx_type)


@pytest.mark.parametrize("where", ["local", "param"])
def test_very_long_identifier_compiles(where):
    name = "v" * 1100
    if where == "local":
        src = HEAD + f"    {name} = n\n    x[0] = float({name})\n"
    else:
        src = f"@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), {name}: int):\n" \
              f"    x[0] = float({name})\n"
    ck = wl.compile(cell_kernel(src), cache=False, sass=False)
    x = np.zeros(2, np.float32)
    wl.launch(ck, grid=1, block=1, inputs=[x, 7], device="sim")
    assert x[0] == 7.0
