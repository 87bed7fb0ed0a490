"""What both real-kernel files share: the checks, the archs, and the launch/compile helpers."""

import numpy as np

import warp_lab as wl

__all__ = ["CHECKS", "ARCHS", "_rng", "_compile_both", "_sim", "_blocks"]

CHECKS = ("memcheck", "racecheck", "barrier")
ARCHS = ("sm_80", "sm_90")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _compile_both(kernel) -> None:
    """Compile for sm_80 and sm_90; ptxas must accept the PTX (a cubin and resources)."""
    for arch in ARCHS:
        ck = wl.compile(kernel, arch=arch, sass=False)
        assert ck.cubin and ck.resources is not None and ck.resources.registers > 0, arch


def _sim(kernel, inputs, **launch_options):
    """Launch on the simulator with every check on; no finding, not partial."""
    res = wl.launch(kernel, inputs=inputs, device="sim", checks=CHECKS, **launch_options)
    assert not res.partial
    assert not res.findings, [str(f) for f in res.findings]
    return res


def _blocks(n: int, b: int) -> int:
    """Blocks of ``b`` threads that cover ``n`` (ceiling division)."""
    return -(-n // b)
