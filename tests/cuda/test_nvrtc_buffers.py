"""NVRTC writes its log and PTX into buffers warp_lab hands it: those must be warp_lab's own.

cuda-python's documented ``b" " * size`` is CPython's cached one-byte ``b" "`` when the log is
empty (size 1); NVRTC's terminating NUL written into it corrupted every later ``b" "`` of the
process (``print("a", "b")`` then wrote ``a\\0b``)."""

import warp_lab as wl


def test_an_empty_nvrtc_log_leaves_the_interpreters_bytes_intact():
    k = wl.cuda_kernel('extern "C" __global__ void noop(float* x) { x[0] = 1.0f; }')
    wl.compile(k, sass=False, cache=False)   # NVRTC's log is empty: size 1
    # each of these is CPython's cached one-byte object: compare the byte's value itself
    assert bytes([32])[0] == 32 and " ".encode("ascii")[0] == 32 and b" "[0] == 32
