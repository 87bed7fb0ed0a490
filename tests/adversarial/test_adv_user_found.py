"""Bugs found by using warp_lab as a new user, in parts owned by others (strict xfails).

Each test is the minimal reproduction and the behaviour a user should get; the
owner of ``warp_lab/compiler`` or ``warp_lab/sim`` removes the xfail when it
passes. Kernels are cells (``<adv N>``), so diagnostics carry cell lines.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

HEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"


@pytest.mark.xfail(strict=True, reason="compiler: a constant negative index compiles; in Python "
                   "x[-1] is the last element, on the GPU it is 4 bytes before x (memcheck "
                   "then reports an out-of-bounds write at run time)")
def test_constant_negative_index_is_a_compile_error():
    kernel = cell_kernel(HEAD + "    x[-1] = 5.0\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    assert (info.value.line, info.value.col) == (3, 7)  # the index -1


@pytest.mark.xfail(strict=True, reason="compiler: n // 0 and n % 0 with a literal zero divisor "
                   "compile silently (the simulator gives -1 / n); 1 % 0 is refused as 'division "
                   "by zero in a constant expression', and Python raises for any n")
@pytest.mark.parametrize("expr", ["n // 0", "n % 0"])
def test_integer_division_by_literal_zero_is_a_compile_error(expr):
    kernel = cell_kernel(HEAD + f"    x[0] = float({expr})\n")
    with pytest.raises(wl.KernelCompileError, match="division by zero") as info:
        wl.compile(kernel, cache=False, sass=False)
    assert info.value.line == 3


@pytest.mark.xfail(strict=True, reason="compiler: 'x.shape = 3' says 'cannot store int32 in "
                   "x.shape of type tuple of int32 without losing information' (hint: convert "
                   "explicitly), as if a conversion would help; x.shape[0] = 3 says tuples are "
                   "immutable")
def test_assigning_an_array_shape_says_it_is_read_only():
    kernel = cell_kernel(HEAD + "    x.shape = 3\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    assert "losing information" not in info.value.message
    assert info.value.line == 3


@pytest.mark.xfail(strict=True, reason="sim/debugger.py: WarpState.as_type raises a bare KeyError "
                   "for a register the warp does not have or an unknown PTX type")
@pytest.mark.parametrize("name, ptx_type", [("%nope", "f32"), ("%r1", "f99")])
def test_warp_state_as_type_refuses_unknown_names_clearly(name, ptx_type):
    from warp_lab.notebook.debugger import debug

    kernel = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         "    x[wl.tid()] = 2.0\n")
    session = debug(kernel, dim=32, inputs=[np.zeros(32, np.float32)], block_dim=32)
    session.step(3)
    with pytest.raises(wl.SimulatorError):
        session.lanes().as_type(name, ptx_type)
