"""Kernel names that clash with the PTX module's other symbols.

A kernel is its PTX entry, named after the Python function; a kernel named like a symbol
the module declares (``vprintf`` for ``print``, libdevice's ``__nv_powf`` for ``**``,
warp_lab's ``__wl_dynamic_shared``) was an InternalCompilerError (LLVM's
DuplicatedNameError, "please report"). It is the user's choice of name: a located
compile error at the ``def`` that says what the name clashes with.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

CLASHES = [
    ("vprintf", "    print('x is', x[0])\n", "CUDA's device printf"),
    ("__nv_powf", "    x[wl.tid()] = x[wl.tid()] ** 2.5\n", "libdevice's math functions"),
    ("__nv_anything", "    x[wl.tid()] = 1.0\n", "libdevice's math functions"),
    ("__wl_dynamic_shared", "    s = wl.dynamic_shared_array(wl.float32)\n"
                            "    s[wl.tid()] = 1.0\n    x[wl.tid()] = s[wl.tid()]\n",
     "warp_lab's own symbols"),
]


@pytest.mark.parametrize("name, body, whose", CLASHES, ids=[c[0] for c in CLASHES])
def test_kernel_named_like_a_symbol_of_its_module_is_a_located_error(name, body, whose):
    kernel = cell_kernel(f"\n@wl.kernel\ndef {name}(x: wl.array(dtype=wl.float32)):\n{body}")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, arch="sm_90")
    err = info.value
    assert (err.line, err.col) == (2, 1)
    assert err.message.startswith(f"a kernel cannot be named {name}: its PTX name would "
                                  "clash with " + whose)
    assert err.hint == "rename the kernel"


@pytest.mark.parametrize("name", ["printf", "__nv", "nv_sinf", "vprintf2", "__assertfail",
                                  "__wl", "malloc"])
def test_names_near_the_reserved_ones_compile_and_run(name):
    kernel = cell_kernel(f"""
@wl.kernel
def {name}(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = wl.sin(x[i]) + x[i] ** 2.5
    if i == 0:
        print('done')
""")
    x = np.arange(32, dtype=np.float32)
    res = wl.launch(kernel, dim=32, inputs=[x], device="sim")
    ref = np.sin(np.arange(32, dtype=np.float32)) + np.arange(32, dtype=np.float32) ** 2.5
    np.testing.assert_allclose(x, ref, rtol=2e-6)
    assert res.printed == "done\n"


def test_a_device_function_may_have_a_reserved_name():
    """Device functions get numbered PTX names: __nv_sinf as a @wl.func is no clash."""
    kernel = cell_kernel("""
@wl.func
def __nv_sinf(a: float) -> float:
    return a + 1.0

@wl.kernel
def a10_calls(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = __nv_sinf(x[i]) + wl.sin(x[i])
""")
    x = np.arange(32, dtype=np.float32)
    wl.launch(kernel, dim=32, inputs=[x], device="sim")
    ref = np.arange(32, dtype=np.float32)
    np.testing.assert_allclose(x, ref + 1 + np.sin(ref), rtol=2e-6)
