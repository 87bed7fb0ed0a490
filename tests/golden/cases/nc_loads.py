"""Read-only array parameters load through the non-coherent cache (``read_only_cache``,
docs/decisions/0002-compiler-stages.md).

PTX ISA 9.7.9.9 "ld.global.nc": a load through the non-coherent (texture) cache, allowed
only for data that is read-only for the whole kernel. So an array parameter the kernel
never writes (``x``) is loaded with ``ld.global.nc``, one it writes (``y``) with a plain
``ld.global``; ``read_only_cache=False`` (the variant ``wl.launch`` compiles when a
read-only argument shares memory with a written one) has no ``.nc`` at all. A device
function is lowered per set of read-only arrays its calls pass, so its load of the
caller's read-only ``x`` is ``.nc`` too (``opt=0`` keeps it a ``.func``).
"""
import warp_lab as wl

# RUN: CHECK kernel=scale arch=sm_80
# CHECK: ld.global.b32 {{%r[0-9]+}}, [[[Y:%rd[0-9]+]]];
# CHECK: st.global.b32 [[[Y]]],

# RUN: NC kernel=scale arch=sm_80
# NC: ld.global.nc.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}];
# NC-NOT: ld.global.nc

# RUN: NONC kernel=scale arch=sm_80 read_only_cache=False
# NONC-NOT: .nc

# RUN: FUNC kernel=scale arch=sm_80 opt=0
# FUNC: .entry scale(
# FUNC-NOT: .nc
# FUNC: ld.global.b32
# FUNC-NOT: .nc
# FUNC: .func (.param .b32 func_retval0) scale__twice_{{[a-z0-9_]+}}(
# FUNC: ld.global.nc.b32

@wl.func
def twice(x: wl.array(dtype=wl.float32), i: wl.int32) -> wl.float32:
    return x[i] * 2.0


@wl.kernel
def scale(y: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = y[i] + twice(x, i)
