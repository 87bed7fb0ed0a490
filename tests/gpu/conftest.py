"""GPU tests run only where cuda-python sees a usable NVIDIA GPU; elsewhere they skip and say why."""

import pytest

from warp_lab.runtime.device import cuda_devices


def pytest_collection_modifyitems(config, items):
    devices, why = cuda_devices()
    if devices:
        return
    skip = pytest.mark.skip(reason=f"no usable NVIDIA GPU: {why}")
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)
