"""%%cuda_kernel in a real IPython shell: binding, options, located NVRTC errors, --launch."""

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import warp_lab as wl

pytest.importorskip("cuda.bindings.nvrtc")

SAXPY = '''extern "C" __global__ void saxpy(const float* x, float* y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''


def test_cell_binds_kernels_and_launches_on_the_simulator(ip):
    ip.user_ns["cx"] = np.arange(1000, dtype=np.float32)
    ip.user_ns["cy"] = np.ones(1000, np.float32)
    with capture_output() as out:
        ip.run_cell_magic("cuda_kernel", '--arch sm_80 --device sim --launch '
                          '"grid=4, block=256, inputs=[cx, cy, 2.0, 1000]"', SAXPY)
    assert np.array_equal(ip.user_ns["cy"], 2 * np.arange(1000, dtype=np.float32) + 1)
    k = ip.user_ns["saxpy"]
    assert isinstance(k, wl.CudaKernel) and k.options == {"arch": "sm_80"}
    assert k.decl.line == 2   # the %%cuda_kernel line is line 1
    html = "".join(o.data.get("text/html", "") for o in out.outputs)
    assert "CUDA C++" in html and "NVRTC does not expose its NVVM IR" in html
    result = ip.user_ns["_launch"]
    assert result.compiled.arch == "sm_80" and result.sim.findings == []


def test_nvrtc_error_is_located_and_unbinds_the_cells_kernels(ip):
    ip.run_cell_magic("cuda_kernel", "--show ptx", SAXPY)
    assert isinstance(ip.user_ns.get("saxpy"), wl.CudaKernel)
    broken = SAXPY.replace("+ y[i]", "+ z[i]")
    with pytest.raises(wl.KernelCompileError) as e:
        ip.run_cell_magic("cuda_kernel", "", broken)
    err = e.value
    assert (err.line, err.col) == (5, 34) and 'identifier "z" is undefined' in err.message
    assert "z[i]" in err.source_line and err.filename.startswith("<cell")
    assert "saxpy" not in ip.user_ns   # no stale kernel of the earlier run stays bound


def test_templates_defines_std_and_opt(ip):
    src = "template <typename T> __global__ void scale(T* x, T s) { x[threadIdx.x] *= s * K; }\n"
    with capture_output():
        view = ip.run_cell_magic("cuda_kernel", '--instantiate "scale<float>" '
                                 '--instantiate "scale<double>" -D K=3 -O 2 --std c++17 '
                                 "--show ptx", src)
    assert view.compiled.options.opt == 2
    xf, xd = np.ones(4, np.float32), np.ones(4, np.float64)
    wl.launch(ip.user_ns["scale_float"], grid=1, block=4, inputs=[xf, 2.0], device="sim")
    wl.launch(ip.user_ns["scale_double"], grid=1, block=4, inputs=[xd, 2.0], device="sim")
    assert np.all(xf == 6) and np.all(xd == 6)
    with capture_output() as out:
        assert ip.run_cell_magic("cuda_kernel", "", src) is None
    assert "--instantiate" in "".join(o.data.get("text/plain", "") for o in out.outputs)
    with pytest.raises(UsageError, match="--std"):
        ip.run_cell_magic("cuda_kernel", "--std c++03", SAXPY)


def test_source_pane_highlights_cuda_cpp():
    from warp_lab.notebook.highlight import highlight_lines

    (line,) = highlight_lines("__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }", "cuda")
    # the qualifier as a keyword, the built-in variable, C++ types and the float literal
    assert '<span class="kr">__global__</span>' in line
    assert '<span class="nb">threadIdx</span>' in line and '<span class="kt">float</span>' in line
    assert '<span class="mf">1.0f</span>' in line


def test_launch_view_of_a_cuda_kernel_speaks_cpp():
    from warp_lab.notebook.results import LaunchView

    k = wl.cuda_kernel("\n" + SAXPY.replace("if (i < n) ", ""), "saxpy")
    x, y = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    r = wl.launch(k, grid=1, block=128, inputs=[x, y, 2.0, 100], device="sim")
    html = LaunchView(r)._repr_mimebundle_()["text/html"]
    assert "C++ line" in html and "Python line" not in html
    assert "x[100] is past the end of x (100 elements)" in html
    assert "y[i] = a * x[i] + y[i];" in html    # the finding's C++ line, quoted
