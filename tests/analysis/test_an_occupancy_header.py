"""warp_lab.analysis.occupancy against the CUDA toolkit's own calculator.

``cuda_occupancy.h`` is compiled with g++ (conftest ``occ_harness``) and fed
the same per-arch properties and the same kernels, sampled at random and on a
fixed grid of register counts, block sizes and shared-memory edges; every field
of every answer must agree, for every architecture in the table.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from warp_lab.analysis import ARCHS, AnalysisError, KernelUsage, available_dynamic_shared_mem
from warp_lab.analysis.occupancy import INT_MAX, _occupancy, suggest_block_size

SAMPLES_PER_ARCH = 2500
SUGGESTIONS_PER_ARCH = 60
GC = {"off": 0, "on": 1, "strict": 2}
CACHE = {"none": 0, "shared": 1, "l1": 2, "equal": 3}
# cudaOccLimitingFactor bits
BITS = {"warps": 1, "registers": 2, "shared_memory": 4, "blocks": 8, "barriers": 16,
        "virtual_resources": 32}


# the order of the limits in a harness answer
_LIMIT_ORDER = ("registers", "shared_memory", "warps", "blocks", "barriers", "virtual_resources")


def _props_fields(a) -> list[int]:
    return [a.major, a.minor, a.max_threads_per_block, a.max_threads_per_sm,
            a.registers_per_block, a.registers_per_sm, a.warp_size, a.shared_mem_per_block,
            a.shared_mem_per_sm, a.multiprocessor_count or 1, a.shared_mem_per_block_optin,
            a.reserved_shared_mem_per_block]


def _query_fields(a, u: KernelUsage, carveout, cache) -> str:
    optin = u.max_dynamic_shared_mem is not None
    fields = _props_fields(a) + [
        u.max_threads_per_block or a.max_threads_per_block, u.registers, u.shared,
        GC[u.partitioned_gc], int(optin), u.max_dynamic_shared_mem or 0, u.barriers,
        u.virtual_resources, CACHE[cache], -1 if carveout is None else carveout]
    return " ".join(str(x) for x in fields)


def _sample(rng: random.Random, a):
    """One random kernel + launch, biased towards the interesting edges."""
    regs = rng.choice([rng.randint(0, 255), rng.randint(0, 64), rng.choice([0, 1, 32, 255, 256])])
    shared_max = a.shared_mem_per_block_optin
    shared = rng.choice([0, 0, rng.randint(0, 4096), rng.randint(0, shared_max),
                         rng.choice([48 * 1024, shared_max, shared_max - 1024])])
    dynamic = rng.choice([0, 0, rng.randint(0, 8192), rng.randint(0, shared_max)])
    block = rng.choice([rng.randint(1, 1024), 32 * rng.randint(1, 32), rng.randint(1, 1100)])
    max_dyn = rng.choice([None, None, shared_max - shared if shared <= shared_max else 0,
                          rng.randint(0, shared_max)])
    usage = KernelUsage(
        registers=regs, shared=shared,
        barriers=rng.choice([0, 1, 1, rng.randint(0, 16)]),
        max_dynamic_shared_mem=max_dyn,
        partitioned_gc=rng.choice(["off", "off", "on", "strict"]),
        virtual_resources=rng.choice([0, 0, 0, rng.randint(1, 200)]))
    carveout = rng.choice([None, None, 0, 50, 100, rng.randint(0, 100)])
    cache = rng.choice(list(CACHE))
    return usage, block, dynamic, carveout, cache


def _samples(a):
    rng = random.Random(f"occupancy-{a.name}")
    return [_sample(rng, a) for _ in range(SAMPLES_PER_ARCH)]


@pytest.fixture(scope="module")
def header_answers(occ_harness):
    """All archs' samples through the header, in one process."""
    queries, index = [], {}
    for cc, a in ARCHS.items():
        index[cc] = len(queries)
        queries.append(f"A {a.major} {a.minor}")
        for usage, block, dynamic, carveout, cache in _samples(a):
            queries.append(f"O {_query_fields(a, usage, carveout, cache)} {block} {dynamic}")
    answers = occ_harness.run(queries)
    return {cc: (answers[i], answers[i + 1:i + 1 + SAMPLES_PER_ARCH]) for cc, i in index.items()}


@pytest.mark.parametrize("cc", list(ARCHS), ids=[a.name for a in ARCHS.values()])
def test_arch_constants_match_header(cc, header_answers):
    a = ARCHS[cc]
    constants, _ = header_answers[cc]
    gran, regmax, reggran, subp, blocks, gc, virt, bars, n, *configs = constants
    assert gran == a.shared_mem_allocation_granularity
    assert regmax == a.occupancy_register_limit
    assert reggran == a.register_allocation_granularity
    assert subp == a.sub_partitions
    assert blocks == a.max_blocks_per_sm
    assert bool(gc) == a.partitioned_global_caching
    assert virt == a.virtual_resources_per_sm
    assert bars * a.max_blocks_per_sm == a.barriers_per_sm
    assert tuple(configs) == a.shared_mem_configs and n == len(configs)
    if a.shared_mem_configs:  # the SM's full size is one of its carveouts
        assert a.shared_mem_per_sm == a.shared_mem_configs[-1]


@pytest.mark.parametrize("cc", list(ARCHS), ids=[a.name for a in ARCHS.values()])
def test_occupancy_equals_header(cc, header_answers):
    a = ARCHS[cc]
    _, answers = header_answers[cc]
    mismatches = []
    for (usage, block, dynamic, carveout, cache), ref in zip(_samples(a), answers):
        status, active, bits, *limits = ref[:9]
        alloc_regs, alloc_smem, gc = ref[9:]
        try:
            occ = _occupancy(a, usage, block, dynamic, carveout, cache)
        except AnalysisError:
            if status == 0:
                mismatches.append((usage, block, dynamic, carveout, cache, "raised", ref))
            continue
        ours_limits = [occ.limits[f] for f in
                       ("registers", "shared_memory", "warps", "blocks", "barriers",
                        "virtual_resources")]
        # the header's bits, except a factor the barrier limit undercut later
        bits = sum(b for f, b in BITS.items()
                   if bits & b and (f == "barriers" or limits[_LIMIT_ORDER.index(f)] == active))
        ours = [0, occ.active_blocks_per_sm, sum(BITS[f] for f in occ.limiters),
                *[INT_MAX if v is None else v for v in ours_limits],
                occ.allocated_registers_per_block, occ.allocated_shared_mem_per_block,
                int(occ.partitioned_gc)]
        theirs = [status, active, bits, *limits, alloc_regs, alloc_smem, int(gc != 0)]
        if ours != theirs:
            mismatches.append((usage, block, dynamic, carveout, cache, ours, theirs))
    assert not mismatches, f"{len(mismatches)} of {len(answers)} differ; first: {mismatches[:3]}"
    assert 0 < sum(1 for r in answers if r[1] > 0) < len(answers)  # both outcomes sampled


def test_sampling_reaches_every_limiter(header_answers):
    """The samples exercise every factor the header reports (else the
    comparison above would prove little)."""
    seen = 0
    for _, answers in header_answers.values():
        for ref in answers:
            seen |= ref[2]
    assert seen == sum(BITS.values())


def test_suggest_block_size_equals_header(occ_harness):
    rng = random.Random("suggest")
    queries, cases = [], []
    for a in ARCHS.values():
        a = replace(a, multiprocessor_count=rng.choice([1, 46, 132]))
        for _ in range(SUGGESTIONS_PER_ARCH):
            usage, _, dynamic, carveout, cache = _sample(rng, a)
            usage = replace(usage, max_threads_per_block=rng.choice(
                [None, None, rng.randint(1, 1024)]))
            per_thread = rng.choice([0, 0, rng.randint(1, 256)])
            queries.append(f"S {_query_fields(a, usage, carveout, cache)} {dynamic} {per_thread}")
            cases.append((a, usage, dynamic, per_thread, carveout, cache))
    answers = occ_harness.run(queries)
    for (a, usage, dynamic, per_thread, carveout, cache), (status, min_grid, block) in \
            zip(cases, answers):
        dyn = (lambda b: dynamic + per_thread * b) if per_thread else dynamic
        try:
            got = suggest_block_size(usage, a, dyn, carveout, cache_config=cache)
        except AnalysisError:
            assert status != 0, (a.name, usage)
            continue
        assert status == 0
        assert (got.block_size, got.min_grid_size or 0) == (block, min_grid), \
            (a.name, usage, dynamic)
    assert any(ans[2] not in (0, 1024) for ans in answers)


def test_available_dynamic_shared_mem_equals_header(occ_harness):
    rng = random.Random("available")
    queries, cases = [], []
    for a in ARCHS.values():
        for _ in range(150):
            usage, block, _, carveout, cache = _sample(rng, a)
            if usage.max_dynamic_shared_mem is None:  # what cudaFuncAttributes holds by default
                usage = replace(usage, max_dynamic_shared_mem=max(
                    0, a.shared_mem_per_block - usage.shared))
            blocks = rng.choice([1, 1, 2, rng.randint(1, 8), rng.randint(1, 32)])
            queries.append(f"D {_query_fields(a, usage, carveout, cache)} {blocks} {block}")
            cases.append((a, usage, blocks, block, carveout, cache))
    answers = occ_harness.run(queries)
    compared = wrapped = 0
    for (a, usage, blocks, block, carveout, cache), (status, want) in zip(cases, answers):
        try:
            got = available_dynamic_shared_mem(usage, a, blocks, block, carveout,
                                               cache_config=cache)
        except AnalysisError:
            assert status != 0, (a.name, usage, blocks, block)
            continue
        assert status == 0, (a.name, usage, blocks, block)
        if got == 0 and want == usage.max_dynamic_shared_mem and want:
            wrapped += 1  # the header's size_t went below zero and was capped
            continue
        assert got == want, (a.name, usage, blocks, block, carveout, cache)
        compared += 1
        if got and blocks > 1:  # and with that much, num_blocks blocks do fit
            occ = _occupancy(a, usage, block, got, carveout, cache)
            assert occ.active_blocks_per_sm >= blocks, (a.name, usage, blocks, block, got)
    print(f"compared {compared}, header wrapped below zero {wrapped}")
    assert compared > 20 * len(ARCHS) and wrapped < compared // 20


def test_occupancy_widget_at_a_launchs_block_size_equals_header(occ_harness):
    """A launch of 1, 33 or 48 threads per block: the occupancy widget shows that block
    size (its slider steps in warps, 32..1024, and moved 1 to 32 and 48 to 64) and the
    header's answer for it, which counts whole warps per block."""
    from warp_lab.analysis import arch_properties
    from warp_lab.compiler.artifact import Resources
    from warp_lab.notebook.widgets import OccupancyWidget

    a = arch_properties("sm_80")
    usage = KernelUsage(registers=40, shared=0, barriers=1)
    blocks = (1, 33, 48, 1000)
    answers = occ_harness.run([f"O {_query_fields(a, usage, None, 'none')} {b} 0"
                               for b in blocks])
    for block, ref in zip(blocks, answers):
        w = OccupancyWidget(Resources("sm_80", registers=40, barriers=1), arch="sm_80",
                            block_size=block)
        assert w.block_size.value == block == w.occupancy.block_size
        assert w.block_slider.value == 32 * -(-block // 32)
        assert (0, w.occupancy.active_blocks_per_sm) == (ref[0], ref[1]), block
        assert w.occupancy.active_warps_per_sm == ref[1] * -(-block // 32)


# A deterministic grid besides the random samples: every register count 0..256 (the
# 256-register-per-warp allocation granularity and the 255/256 per-thread limit) at block
# sizes on and off warp multiples (1 thread: the blocks-per-SM limit; 1025: over the
# block limit), and shared memory around every carveout size divided among 1..5 blocks
# (the reserved kilobyte and the 128/256-byte unit decide which side of the edge a block
# falls), split between static and dynamic, with and without the opt-in.
_GRID_BLOCKS = (1, 31, 32, 33, 63, 96, 100, 129, 255, 256, 257, 384, 500, 640, 768, 1000,
                1023, 1024, 1025)


def _grid(a):
    out = []
    for regs in range(257):
        for block in _GRID_BLOCKS:
            out.append((KernelUsage(registers=regs), block, 0, None, "none"))
    unit = a.shared_mem_allocation_granularity
    sizes = a.shared_mem_configs or (a.shared_mem_per_sm,)
    for size in sizes:
        for blocks in (1, 2, 3, 5):
            edge = size // blocks - a.reserved_shared_mem_per_block
            for total in {edge - unit, edge - 1, edge, edge + 1, edge + unit} - {-1}:
                total = max(0, total)
                for static in {0, total // 2, total}:
                    for optin in (None, a.shared_mem_per_block_optin):
                        usage = KernelUsage(registers=16, shared=static,
                                            max_dynamic_shared_mem=optin)
                        percent = 100 * size // a.shared_mem_per_sm
                        for carveout in (None, percent, 0):
                            out.append((usage, 64, total - static, carveout, "none"))
    return out


def test_occupancy_grid_equals_header(occ_harness):
    cases = [(a, *case) for a in ARCHS.values() for case in _grid(a)]
    answers = occ_harness.run([
        f"O {_query_fields(a, usage, carveout, cache)} {block} {dynamic}"
        for a, usage, block, dynamic, carveout, cache in cases])
    mismatches, limited = [], set()
    for (a, usage, block, dynamic, carveout, cache), ref in zip(cases, answers):
        status, active, bits, *limits = ref[:9]
        assert status == 0, (a.name, usage, block, dynamic)
        occ = _occupancy(a, usage, block, dynamic, carveout, cache)
        ours = [occ.active_blocks_per_sm, occ.allocated_registers_per_block,
                occ.allocated_shared_mem_per_block,
                *[INT_MAX if occ.limits[f] is None else occ.limits[f] for f in _LIMIT_ORDER]]
        theirs = [active, ref[9], ref[10], *limits]
        if ours != theirs:
            mismatches.append((a.name, usage, block, dynamic, carveout, ours, theirs))
        if active:
            limited |= {f for f in occ.limiters}
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[:3]}"
    # the grid reaches the limits it is built for
    assert {"warps", "registers", "shared_memory", "blocks"} <= limited


def test_opt_in_counts_the_static_shared_memory(occ_harness):
    """48 KB of static and dynamic shared memory together is what a kernel gets without
    opting in: the header, fed a kernel as ``cudaFuncGetAttributes`` reports it (opt-in
    mode, dynamic limit 48 KB less the static bytes), gives 16 KB static + 40 KB dynamic 0
    blocks. ``launch_dynamic_shared_optin`` therefore opts such a launch in (it counted
    the dynamic bytes alone, and the views then showed 0 blocks for a launch warp_lab
    makes), and the occupancy with it equals the header's for the opted-in kernel."""
    from warp_lab.analysis import launch_dynamic_shared_optin, occupancy

    static, dynamic = 16 * 1024, 40 * 1024
    for a in ARCHS.values():
        if a.shared_mem_per_block_optin < static + dynamic:
            continue  # no opt-in reaches 56 KB (5.x, 6.x)
        default = KernelUsage(registers=32, shared=static,
                              max_dynamic_shared_mem=a.shared_mem_per_block - static)
        opted = replace(default, max_dynamic_shared_mem=dynamic)
        (without,), (with_optin,) = [
            occ_harness.run([f"O {_query_fields(a, u, None, 'none')} 128 {dynamic}"])[0][1:2]
            for u in (default, opted)]
        assert without == 0 and with_optin > 0, a.name
        optin = launch_dynamic_shared_optin(a, dynamic, static)
        assert optin == dynamic, a.name
        occ = occupancy(registers=32, shared=static, arch=a, block_size=128,
                        dynamic_shared_mem=dynamic, max_dynamic_shared_mem=optin)
        assert occ.active_blocks_per_sm == with_optin, a.name
        # 48 KB in all needs no opt-in
        assert launch_dynamic_shared_optin(a, a.shared_mem_per_block - static, static) is None
