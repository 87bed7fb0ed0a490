"""A NUL or a lone surrogate in a kernel's source (issue 25's stress suite found both):
a located error at the character, never an internal traceback.

- ``%%warp_kernel``: a NUL was Python's "source code string cannot contain null bytes"
  with no line; a lone surrogate (``"\\udcff"``, what ``errors="surrogateescape"`` makes of
  an undecodable byte) raised ``UnicodeEncodeError`` out of ``ast.parse``.
- CUDA C++ (``wl.cuda_kernel``, ``%%cuda_kernel``): NVRTC takes a C string, so a NUL cut
  the source short ("identifier __wl_sig is undefined", about warp_lab's own code after
  it); a lone surrogate raised ``UnicodeEncodeError`` out of the NVRTC call.
"""

import pytest

import warp_lab as wl

CUDA = 'extern "C" __global__ void scale(float *x)\n{\n    x[0] = 1.0f; // {}\n}}\n'


@pytest.mark.parametrize("char, words", [("\x00", "a NUL character"),
                                         ("\udcff", "a lone surrogate (\\udcff)")])
def test_warp_kernel_cell(ip, char, words):
    res = ip.run_cell("%%warp_kernel\ndef uc_k(x: wl.array(dtype=wl.int32)):\n"
                      f"    x[0] = 1  # {char} here\n")
    exc = res.error_in_exec
    assert isinstance(exc, wl.KernelCompileError), repr(exc)
    assert (exc.line, exc.col) == (3, 17) and words in exc.message
    assert exc.source_line == "    x[0] = 1  # \ufffd here"


@pytest.mark.parametrize("char, words", [("\x00", "a NUL character"),
                                         ("\udcff", "a lone surrogate (\\udcff)")])
def test_cuda_source(ip, char, words):
    src = CUDA.replace("{}", char).replace("}}", "}")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.cuda_kernel(src)
    assert (info.value.line, info.value.col) == (3, 21) and words in info.value.message
    res = ip.run_cell("%%cuda_kernel\n" + src)
    exc = res.error_in_exec
    assert isinstance(exc, wl.KernelCompileError), repr(exc)
    assert (exc.line, exc.col) == (4, 21), str(exc)
