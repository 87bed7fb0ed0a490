"""Capturing what a GPU kernel prints (cuda_backend.device_printf), checked without a GPU.

CUDA's driver writes the device's printf buffer to the process's stdout *file descriptor*
at synchronisation (CUDA C++ Programming Guide, "Formatted Output"); here libc's own
``printf`` writes there instead, through the same C ``stdout`` stream. The GPU half
(hello_printf launched on a device) is tests/gpu/test_gpu_corpus.py.
"""

import ctypes
import ctypes.util

import pytest

import warp_lab as wl
from warp_lab.examples import get
from warp_lab.runtime.cuda_backend import device_printf

libc = ctypes.CDLL(ctypes.util.find_library("c"))


def _c_printf(text: str) -> None:
    libc.printf(b"%s", text.encode())   # buffered in C's stdout, as the driver's output is


def test_a_printf_kernel_launch_reads_back_what_reaches_file_descriptor_1():
    ptx = wl.compile(get("hello_printf").kernel, arch="sm_90", sass=False).ptx
    into = []
    with device_printf(ptx, into):
        _c_printf("thread 0: x=1.000000\n")
        _c_printf("hello from thread 0\n")
    assert into == ["thread 0: x=1.000000\nhello from thread 0\n"]


def test_the_text_is_kept_when_the_launch_fails():
    ptx = wl.compile(get("hello_printf").kernel, arch="sm_90", sass=False).ptx
    into = []
    with pytest.raises(RuntimeError), device_printf(ptx, into):
        _c_printf("IndexError: index 9 is out of bounds\n")
        raise RuntimeError("CUDA_ERROR_ASSERT")
    assert into == ["IndexError: index 9 is out of bounds\n"]


def test_a_kernel_without_printf_redirects_nothing(capfd):
    ptx = wl.compile(get("saxpy").kernel, arch="sm_90", sass=False).ptx
    into = []
    with device_printf(ptx, into):
        _c_printf("the host's own output\n")
    libc.fflush(None)
    assert into == []
    assert "the host's own output" in capfd.readouterr().out
