"""The GPU probe on a machine without a CUDA driver answers without importing cuda-python.

``cuda_devices()`` first tries ``dlopen("libcuda.so.1")`` (what cuda.pathfinder does for the
driver library); only when that works does it import cuda.core and ask ``cuInit``. These
tests run where no driver is installed (and skip where one is): the quick answer must be
the one cuda-python itself gives there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from warp_lab.runtime.device import _no_driver_library

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not _no_driver_library(),
                                reason="a CUDA driver library is installed here")

PROBE = """
import json, sys
from warp_lab.runtime.device import cuda_devices, get_device
devices, why = cuda_devices()
print(json.dumps({"devices": len(devices), "why": why, "auto": get_device("auto").kind,
                  "reason": get_device("auto").reason,
                  "imported": sorted(m for m in sys.modules
                                     if m.startswith(("cuda.core", "cuda.bindings")))}))
"""


def test_no_driver_is_found_without_importing_cuda_python():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get(
        "PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    got = json.loads(out.stdout)
    assert got["imported"] == []
    assert (got["devices"], got["why"], got["auto"]) == (0, "no NVIDIA driver installed", "sim")
    assert got["reason"] == ("no usable GPU (no NVIDIA driver installed); running on the CPU "
                             "simulator")


def test_cuda_python_itself_finds_no_driver_library_here():
    """The quick answer stands for the slow one: cuda.bindings' cuInit fails to load the
    driver library (cuda.pathfinder's DynamicLibNotFoundError), which the full probe
    reports with the same words."""
    from cuda.bindings import driver

    with pytest.raises(Exception) as exc:
        driver.cuInit(0)
    assert type(exc.value).__name__ == "DynamicLibNotFoundError"
    assert "driver library" in str(exc.value)
