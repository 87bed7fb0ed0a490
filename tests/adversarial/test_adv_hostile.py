"""A hostile but realistic user: constants, arguments and cells at the edges.

Each test states what went wrong before its fix: the input and what happened.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel


@pytest.mark.parametrize("expr, shown", [("int(1e30)", "1e+30"), ("wl.uint32(-1.0)", "-1.0"),
                                         ("wl.int8(300.0)", "300.0"),
                                         ("wl.int64(1e19)", "1e+19"),
                                         ("wl.int64(wl.vec2i(0, 1.5e10).y)", "15000000000.0")])
def test_constant_float_out_of_an_ints_range_is_a_compile_error(expr, shown):
    """``int(1e30)`` folded to 0 (the exact integer wrapped to 32 bits) where the same
    conversion at run time clamps (PTX ``cvt.rzi`` saturates) and Python gives an int no
    int32 holds: a number the user never wrote. Like ``int(float('inf'))``, it is a
    located compile error naming the value and the range."""
    kernel = cell_kernel(f"""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int64)):
            x[0] = wl.int64({expr})
    """)
    with pytest.raises(wl.KernelCompileError) as exc:
        wl.compile(kernel)
    text = str(exc.value)
    assert ":3:" in text and expr in text and shown in text and "out of range" in text, text
    assert "Traceback" not in text


def test_constant_float_in_an_ints_range_still_folds_like_the_run_time_conversion():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int64), v: float):
            x[0] = int(-2.75)
            x[1] = int(v)
            x[2] = wl.int64(wl.uint8(255.9))
            x[3] = wl.int64(wl.uint32(-0.5))
    """)
    x = np.zeros(4, np.int64)
    wl.launch(kernel, dim=1, inputs=[x, -2.75], device="sim")
    assert x.tolist() == [-2, -2, 255, 0]
