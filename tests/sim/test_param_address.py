"""A kernel parameter's address in a register (PTX ISA 5.1.6.1, "Kernel Function
Parameters": ``mov`` of a kernel parameter gives its ``.param`` address, read with
``ld.param``). LLVM emits it for an element chosen between two arrays,
``arr[i] if flag else term[i]`` (warp/tests/test_conditional.py): the select picks one
by-value array parameter's address, and the array's pointer, extents and strides are read
through it. The simulator once stopped there ("taking the address of kernel parameter").
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import warp_lab as wl
import warp_lab.warp as wp


@wp.kernel
def _either(arr: wp.array[float], term: wp.array[float], flag: wp.bool,
            out: wp.array[float]):
    i = wp.tid()
    out[i] = arr[i] if flag else term[i]


@pytest.mark.parametrize("flag", [True, False])
def test_an_element_chosen_between_two_array_parameters(flag):
    ck = wl.compile(_either, arch="sm_90")
    # (the pattern under test: a kernel parameter's address moved into a register)
    assert re.search(r"mov\.b64\s+%rd\d+, _either_param_\d+;", ck.ptx), ck.ptx
    a = np.arange(12, dtype=np.float32)
    t = -np.arange(30, dtype=np.float32)[3:27:2]      # strided: the stride is read too
    o = np.zeros(12, np.float32)
    r = wl.launch(_either, dim=12, inputs=[a, t, flag, o], device="sim")
    assert np.array_equal(o, a if flag else t) and r.findings == []


def test_a_read_past_the_parameter_buffer_is_an_error_at_the_instruction():
    ptx = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry far(.param .u64 out, .param .u32 n)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<2>;
    mov.b64 %rd1, n;
    ld.param.b32 %r1, [%rd1+64];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd2;
    st.global.b32 [%rd3], %r1;
    ret;
}
"""
    import struct

    from warp_lab import sim

    with pytest.raises(wl.SimulatorError, match="past the 12-byte kernel parameter buffer"):
        sim.run(sim.parse_module(ptx), "far", 1, 1, struct.pack("<QI", 0, 7),
                sim.GlobalMemory())
