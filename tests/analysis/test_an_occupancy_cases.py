"""Hand-checked occupancy cases, input checking and the arch table's API.

Each expected number is worked out in the comment next to it from the
Programming Guide limits, independently of the code.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from warp_lab.analysis import (ARCHS, AnalysisError, arch_properties,
                               available_dynamic_shared_mem, launch_dynamic_shared_optin,
                               occupancy, occupancy_curve, shared_allocation,
                               suggest_block_size)
from warp_lab.compiler.artifact import Resources
from warp_lab.errors import WarpLabError


def test_textbook_sm80_256_threads_64_registers():
    # 64 regs x 32 lanes = 2048 regs per warp; 65536 / 2048 = 32 warps per SM;
    # 256 threads = 8 warps per block -> 4 blocks = 32 of 64 warps.
    occ = occupancy(registers=64, arch="sm_80", block_size=256)
    assert occ.active_blocks_per_sm == 4
    assert occ.active_warps_per_sm == 32 and occ.max_warps_per_sm == 64
    assert occ.occupancy == 0.5
    assert occ.limiters == ("registers",)
    assert occ.limits["registers"] == 4 and occ.limits["warps"] == 8
    assert occ.limits["blocks"] == 32
    assert occ.allocated_registers_per_block == 64 * 256


def test_full_block_of_32_register_threads_fills_hopper():
    # 1024 threads = 32 warps; 64 warps per SM -> 2 blocks; 32 regs x 32 x 32
    # warps = 32768 registers per block -> also 2 blocks by registers.
    occ = occupancy(registers=32, arch="sm_90", block_size=1024)
    assert (occ.active_blocks_per_sm, occ.occupancy) == (2, 1.0)
    assert occ.limiters == ("warps", "registers")


def test_turing_warp_limit():
    # sm_75: 32 warps per SM, 4-warp blocks -> 8 blocks (block limit is 16).
    occ = occupancy(registers=0, arch=75, block_size=128)
    assert occ.active_blocks_per_sm == 8 and occ.limiters == ("warps",)
    assert occ.limits["registers"] is None  # no registers: no register limit


def test_shared_memory_limit_counts_the_reserved_kilobyte():
    # sm_86: 48 KB static + 1 KB reserved = 50176 B per block; 100 KB per SM
    # holds 2 (100352 B), not 3. 4 warps x 2 = 8 of 48 warps.
    occ = occupancy(registers=32, shared=48 * 1024, arch=(8, 6), block_size=128)
    assert occ.active_blocks_per_sm == 2
    assert occ.allocated_shared_mem_per_block == 49 * 1024
    assert occ.limiters == ("shared_memory",)
    assert occ.occupancy == pytest.approx(8 / 48)


def test_shared_allocation_says_where_the_allocated_bytes_come_from():
    # a 3x3 blur's 1296 static bytes on sm_80: + 1 KB reserved = 2320, 128-byte unit -> 2432
    occ = occupancy(registers=32, shared=1296, arch="sm_80", block_size=256)
    a = occ.shared_allocation
    assert (a.static, a.dynamic, a.reserved, a.unit, a.allocated) == (1296, 0, 1024, 128, 2432)
    assert a.allocated == occ.allocated_shared_mem_per_block
    assert a.describe() == ("2432 bytes = 1296 static + 0 dynamic + 1024 reserved by CUDA per "
                            "block (sm_80+) = 2320, rounded up to the 128-byte allocation unit")
    # no static shared memory: the reserved kilobyte alone, a whole number of units
    none = occupancy(registers=32, arch="sm_90", block_size=256).shared_allocation
    assert none.describe() == "1024 bytes = 0 static + 0 dynamic + 1024 reserved by CUDA per " \
                              "block (sm_80+)"
    # before 8.0 nothing is reserved and the unit is 256 bytes
    old = occupancy(registers=32, shared=1296, arch="sm_75", block_size=256,
                    dynamic_shared_mem=100)
    assert old.shared_allocation.describe() == \
        "1536 bytes = 1296 static + 100 dynamic = 1396, rounded up to the 256-byte allocation unit"
    # the record agrees with the model (itself checked against cuda_occupancy.h) everywhere
    for arch in ("sm_60", "sm_75", "sm_80", "sm_86", "sm_90"):
        for static, dynamic in ((0, 0), (1, 0), (1296, 0), (4000, 333), (0, 8192)):
            o = occupancy(registers=32, shared=static, arch=arch, block_size=128,
                          dynamic_shared_mem=dynamic)
            got = shared_allocation(arch, static, dynamic)
            assert got == o.shared_allocation and got.allocated == \
                o.allocated_shared_mem_per_block, (arch, static, dynamic)
            assert o.to_dict()["dynamic_shared_mem"] == dynamic


def test_255_registers():
    # 255 x 32 = 8160 -> 8192 per warp (granularity 256). 32 warps need
    # 262144 > 65536 registers per block: cannot launch. 8 warps need 65536:
    # 1 block; 16384 per sub-partition / 8192 = 2 warps each, 8 warps per SM.
    assert occupancy(registers=255, arch="sm_90", block_size=1024).active_blocks_per_sm == 0
    occ = occupancy(registers=255, arch="sm_90", block_size=256)
    assert occ.active_blocks_per_sm == 1 and occ.active_warps_per_sm == 8


def test_dynamic_shared_memory_needs_opt_in():
    # 64 KB dynamic is over the 48 KB default per-block limit.
    no = occupancy(registers=32, arch="sm_80", block_size=128, dynamic_shared_mem=64 * 1024)
    assert no.active_blocks_per_sm == 0 and "shared_memory" in no.limiters
    # Opted in to 100 KB: 65 KB per block, 164 KB per SM -> 2 blocks.
    yes = occupancy(registers=32, arch="sm_80", block_size=128, dynamic_shared_mem=64 * 1024,
                    max_dynamic_shared_mem=100 * 1024)
    assert yes.active_blocks_per_sm == 2
    # More than the opt-in allows: 0 again.
    over = occupancy(registers=32, arch="sm_80", block_size=128, dynamic_shared_mem=64 * 1024,
                     max_dynamic_shared_mem=32 * 1024)
    assert over.active_blocks_per_sm == 0


def test_carveout():
    # sm_80, carveout 25 %: 164 KB x 0.25 = 41984 B -> 64 KB carveout;
    # 16 KB + 1 KB per block -> 3 blocks (the default 164 KB gives 9).
    kw = dict(registers=16, shared=16 * 1024, arch="sm_80", block_size=64)
    assert occupancy(**kw, carveout=25).active_blocks_per_sm == 3
    assert occupancy(**kw).active_blocks_per_sm == 9
    # a carveout too small for one block grows to hold it
    assert occupancy(**kw, carveout=0).active_blocks_per_sm == 1


def test_block_larger_than_1024_cannot_launch():
    occ = occupancy(registers=8, arch="sm_90", block_size=1056)
    assert occ.active_blocks_per_sm == 0 and occ.limiters == ("warps",)


def test_barriers_limit_from_hopper_on():
    # sm_90 holds 64 barriers (2 per block slot); 16 named barriers per block -> 4 blocks.
    occ = occupancy(registers=8, barriers=16, arch="sm_90", block_size=32)
    assert occ.active_blocks_per_sm == 4 and occ.limiters == ("barriers",)
    # before 9.0 the calculator does not count barriers
    before = occupancy(registers=8, barriers=16, arch="sm_80", block_size=32)
    assert before.limits["barriers"] is None


def test_resources_and_compiled_kernel_inputs():
    res = Resources(arch="sm_80", registers=64, shared=0, barriers=1)
    assert occupancy(res, block_size=256).active_blocks_per_sm == 4  # arch from Resources
    ck = SimpleNamespace(name="k", resources=res, options=SimpleNamespace(arch="sm_86"),
                         missing={})
    occ = occupancy(ck, block_size=256)  # arch from the compile options
    assert occ.arch == "sm_86" and occ.active_blocks_per_sm == 4  # 65536/(2048*8) = 4
    # explicit overrides win
    assert occupancy(res, "sm_80", 256, registers=32).active_blocks_per_sm == 8
    missing = SimpleNamespace(name="k", resources=None, options=SimpleNamespace(arch="sm_80"),
                              missing={"resources": "ptxas not found"})
    with pytest.raises(AnalysisError, match="ptxas not found"):
        occupancy(missing, block_size=256)


@pytest.mark.parametrize("kwargs, match", [
    (dict(registers=32, arch="sm_80", block_size=0), "block_size"),
    (dict(registers=32, arch="sm_80", block_size=1.5), "block_size"),
    (dict(registers=-1, arch="sm_80"), "registers"),
    (dict(registers=32, arch="sm_35"), "3.5"),
    (dict(registers=32, arch="banana"), "banana"),
    (dict(registers=32), "arch"),
    (dict(arch="sm_80"), "registers="),
    (dict(registers=32, arch="sm_80", dynamic_shared_mem=-4), "dynamic_shared_mem"),
    (dict(registers=32, arch="sm_80", carveout=101), "carveout"),
    (dict(registers=32, arch="sm_80", cache_config="big"), "cache_config"),
    # not numbers at all, or booleans: located errors, not a TypeError from a comparison
    (dict(registers=32, arch="sm_80", max_dynamic_shared_mem="48K"), "max_dynamic_shared_mem"),
    (dict(registers=32, arch="sm_80", max_dynamic_shared_mem=-1), "max_dynamic_shared_mem"),
    (dict(registers="32", arch="sm_80"), "registers"),
    (dict(registers=32, arch="sm_80", carveout=True), "carveout"),
    (dict(registers=32, arch="sm_80", carveout=50.0), "carveout"),
    (dict(registers=32, arch="sm_80", dynamic_shared_mem=True), "dynamic_shared_mem"),
    (dict(registers=32, arch="sm_80", dynamic_shared_mem=2**31), "dynamic_shared_mem"),
    (dict(registers=32, arch="sm_80", cache_config=["l1"]), "cache_config"),
])
def test_bad_input_is_a_warp_lab_error(kwargs, match):
    with pytest.raises(WarpLabError, match=match):
        occupancy(**kwargs)


@pytest.mark.parametrize("call, match", [
    (lambda: suggest_block_size(registers=32, arch="sm_80", max_threads_per_block="256"),
     "max_threads_per_block"),
    (lambda: suggest_block_size(registers=32, arch="sm_80", max_threads_per_block=0),
     "max_threads_per_block"),
    (lambda: available_dynamic_shared_mem(registers=32, arch="sm_80", num_blocks=True),
     "num_blocks"),
    (lambda: occupancy_curve(registers=32, arch="sm_80", block_sizes=256), "block_sizes"),
    (lambda: shared_allocation("sm_80", -5), "static shared memory"),
    (lambda: launch_dynamic_shared_optin("sm_80", "64K"), "dynamic_shared_mem"),
])
def test_bad_input_to_the_other_calculators_is_a_warp_lab_error(call, match):
    with pytest.raises(AnalysisError, match=match):
        call()


def test_numpy_integers_are_numbers_everywhere():
    # sizes often come from NumPy (an array's shape, np.arange of block sizes): each
    # argument takes np.int64 as the int it holds, with the same answer
    n = np.int64
    plain = occupancy(registers=32, shared=1296, arch="sm_80", block_size=256,
                      dynamic_shared_mem=512, carveout=50, max_dynamic_shared_mem=65536)
    numpy = occupancy(registers=n(32), shared=n(1296), arch="sm_80", block_size=n(256),
                      dynamic_shared_mem=n(512), carveout=n(50),
                      max_dynamic_shared_mem=n(65536))
    assert numpy == plain and type(numpy.registers) is int
    assert available_dynamic_shared_mem(registers=32, arch="sm_80", num_blocks=n(2)) == \
        available_dynamic_shared_mem(registers=32, arch="sm_80", num_blocks=2)
    assert suggest_block_size(registers=64, arch="sm_80", max_threads_per_block=n(512)) == \
        suggest_block_size(registers=64, arch="sm_80", max_threads_per_block=512)
    assert shared_allocation("sm_80", n(1296)) == shared_allocation("sm_80", 1296)


def test_arch_spellings():
    for spelling in ("sm_80", "SM_80", "sm_80a", "compute_80", "8.0", 80, (8, 0)):
        assert arch_properties(spelling) is ARCHS[(8, 0)]
    assert arch_properties("sm_100f").name == "sm_100"
    assert arch_properties(ARCHS[(9, 0)]) is ARCHS[(9, 0)]


def test_arch_table_covers_the_guides_capabilities():
    names = [a.name for a in ARCHS.values()]
    for cc in ("50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "88", "89",
               "90", "100", "103", "110", "120", "121"):
        assert f"sm_{cc}" in names
    for a in ARCHS.values():
        assert a.registers_per_sm == 65536 and a.max_registers_per_thread == 255
        assert a.shared_mem_per_block == 48 * 1024
        assert a.shared_mem_per_block_optin <= a.shared_mem_per_sm
        assert a.reserved_shared_mem_per_block == (1024 if a.major >= 8 else 0)
        json.dumps(a.to_dict())


def test_device_object_overrides_the_table():
    # what cuda.core's Device looks like: compute_capability + properties
    dev = SimpleNamespace(compute_capability=SimpleNamespace(major=8, minor=6),
                          properties=SimpleNamespace(
                              multiprocessor_count=84,
                              max_shared_memory_per_multiprocessor=100 * 1024))
    props = arch_properties(dev)
    assert props.name == "sm_86" and props.multiprocessor_count == 84
    best = suggest_block_size(registers=32, arch=dev)
    # 32 regs: 1024 regs/warp, 64 warps by registers; 48 warp slots. The first
    # size from 1024 down reaching 1536 threads is 768 (2 blocks).
    assert (best.block_size, best.blocks_per_sm, best.min_grid_size) == (768, 2, 168)


def test_curve_and_bundle_form():
    curve = occupancy_curve(registers=64, arch="sm_80")
    assert [o.block_size for o in curve] == list(range(32, 1025, 32))
    assert all(0 <= o.occupancy <= 1 for o in curve)
    assert max(o.occupancy for o in curve) == 0.5  # registers cap it at 32 of 64 warps
    d = curve[7].to_dict()
    assert json.loads(json.dumps(d))["limiter"] == "registers"
    assert "limited by registers" in repr(curve[7])
    grow = occupancy_curve(registers=16, arch="sm_80", dynamic_shared_mem=lambda b: 64 * b,
                           block_sizes=[256, 512], max_dynamic_shared_mem=65536)
    assert [o.shared_per_block for o in grow] == [16384, 32768]


def test_available_dynamic_shared_mem():
    # sm_80, 2 blocks per SM: 164 KB / 2 = 82 KB each, minus the reserved 1 KB
    # = 81 KB; without opt-in the 48 KB default limit caps it.
    kw = dict(registers=32, arch="sm_80", num_blocks=2, block_size=128)
    assert available_dynamic_shared_mem(**kw) == 48 * 1024
    assert available_dynamic_shared_mem(**kw, max_dynamic_shared_mem=163 * 1024) == 81 * 1024
    # 8 KB of static shared memory comes off the per-block share
    assert available_dynamic_shared_mem(**kw, shared=8192,
                                        max_dynamic_shared_mem=163 * 1024) == 73 * 1024
    # 16 blocks of 256 threads do not fit (64 warps = 8 blocks): an error, not a number
    with pytest.raises(AnalysisError, match="only 8 blocks"):
        available_dynamic_shared_mem(registers=32, arch="sm_80", num_blocks=16, block_size=256)


def test_reprs_use_the_occupancy_calculators_words():
    # sm_80, 256 threads, 32 registers: 65,536 / (32 × 256) = 8 blocks by registers and
    # 64 warp slots / 8 warps = 8 blocks by warps: both limit (CUDA guide, table 21)
    occ = occupancy(registers=32, block_size=256, arch="sm_80")
    assert "limited by warp slots, registers>" in repr(occ)
    big_tile = occupancy(registers=16, block_size=256, arch="sm_80", dynamic_shared_mem=96 * 1024)
    assert repr(big_tile).endswith("limited by shared memory>")
    best = suggest_block_size(registers=64, arch="sm_80")
    assert "min_grid_size" not in repr(best) and "no SM count" in repr(best)
    assert repr(best).startswith(f"<SuggestedBlockSize: block {best.block_size}, ")
    none = suggest_block_size(registers=255, shared=200_000, arch="sm_80")
    assert "cannot run" in repr(none)


# Per compute capability: resident threads and blocks per SM, shared memory per SM and
# per block with opt-in (KB), registers per block (K). Transcribed from the CUDA C++
# Programming Guide, "Technical Specifications per Compute Capability" (CUDA 12.9 /
# 13.0), and for 6.0 .. 12.1 equal to NVIDIA's CCCL cuda/__device/arch_traits.h; 8.8 from
# arch_traits.h alone (as 8.6), 10.1 (CUDA 12.8's name for Thor) as 11.0.
GUIDE = {
    (5, 0): (2048, 32, 64, 48, 64), (5, 2): (2048, 32, 96, 48, 64),
    (5, 3): (2048, 32, 64, 48, 32), (6, 0): (2048, 32, 64, 48, 64),
    (6, 1): (2048, 32, 96, 48, 64), (6, 2): (2048, 32, 64, 48, 32),
    (7, 0): (2048, 32, 96, 96, 64), (7, 2): (2048, 32, 96, 96, 64),
    (7, 5): (1024, 16, 64, 64, 64), (8, 0): (2048, 32, 164, 163, 64),
    (8, 6): (1536, 16, 100, 99, 64), (8, 7): (1536, 16, 164, 163, 64),
    (8, 8): (1536, 16, 100, 99, 64), (8, 9): (1536, 24, 100, 99, 64),
    (9, 0): (2048, 32, 228, 227, 64), (10, 0): (2048, 32, 228, 227, 64),
    (10, 1): (1536, 24, 228, 227, 64), (10, 3): (2048, 32, 228, 227, 64),
    (11, 0): (1536, 24, 228, 227, 64), (12, 0): (1536, 24, 100, 99, 64),
    (12, 1): (1536, 24, 100, 99, 64),
}


def test_arch_table_matches_the_guides_numbers():
    assert set(ARCHS) == set(GUIDE)
    for cc, (threads, blocks, smem_kb, optin_kb, regs_k) in GUIDE.items():
        a = ARCHS[cc]
        got = (a.max_threads_per_sm, a.max_blocks_per_sm, a.shared_mem_per_sm // 1024,
               a.shared_mem_per_block_optin // 1024, a.registers_per_block // 1024)
        assert got == (threads, blocks, smem_kb, optin_kb, regs_k), a.name
        assert a.shared_mem_per_sm % 1024 == a.shared_mem_per_block_optin % 1024 == 0
