"""Each kind of variable in its PTX state space (PTX ISA 5.1 "State Spaces").

Kernel parameters are ``.param`` and read with ``ld.param`` (5.1.6); arrays point into
``.global`` (5.1.4): the read-only one loads with ``ld.global.nc``; a ``wl.shared_array``
is a ``.shared`` variable of the entry named after the Python variable (5.1.5), accessed
with ``ld``/``st.shared`` and ordered by ``bar.sync 0`` (9.7.13.4, ``wl.syncthreads``); a
``wl.local_array`` indexed at run time lives in the ``.local`` frame (5.1.7:
``__local_depot``, ``ld``/``st.local``); ``wl.dynamic_shared_array`` views the one
``.extern .shared`` array of unsized length (5.1.5, "extern").
"""
import warp_lab as wl

# RUN: CHECK kernel=spaces arch=sm_80
# CHECK: .entry spaces(
# CHECK: .param .u32 spaces_param_3
# CHECK: .local .align 4 .b8 __local_depot{{[0-9]+}}[32];
# CHECK: .shared .align {{[0-9]+}} .b8 spaces_tile_{{[0-9]+}}[256];
# CHECK: ld.param.b32 {{%r[0-9]+}}, [spaces_param_3];
# CHECK: ld.global.nc.b32 [[X:%r[0-9]+]],
# CHECK: st.shared.b32 [{{%r[0-9]+}}], [[X]];
# CHECK-NEXT: .loc {{[0-9]+}} [[@LINE+23]] {{[0-9]+}}
# CHECK-NEXT: bar.sync 0;
# CHECK: ld.shared.b32 [[T:%r[0-9]+]],
# CHECK: st.local.b32 [{{%r[0-9]+}}], [[T]];
# CHECK: ld.local.b32 [[L:%r[0-9]+]],
# CHECK: st.global.b32 [{{%rd[0-9]+}}], [[L]];

# RUN: MEM kernel=spaces arch=sm_80 filter='^(ld|st)\.(param|shared|local|global)'

# RUN: DYN kernel=dynamic arch=sm_80
# DYN: .extern .shared .align 16 .b8 __wl_dynamic_shared[];
# DYN: .entry dynamic(
# DYN: mov.u32 {{%r[0-9]+}}, %dynamic_smem_size;
# DYN: st.shared.b32
# DYN: ld.shared.b32


@wl.kernel
def spaces(out: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32), n: wl.int32):
    i = wl.tid()
    tile = wl.shared_array(64, wl.float32)
    loc = wl.local_array(8, wl.float32)
    tile[i % 64] = x[i]
    wl.syncthreads()
    for k in range(8):
        loc[k] = tile[(i + k) % 64]
    out[i] = loc[n % 8]


@wl.kernel
def dynamic(out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    buf = wl.dynamic_shared_array(dtype=wl.float32)
    buf[i % len(buf)] = out[i]
    wl.syncthreads()
    out[i] = buf[(i + 1) % len(buf)]

# MEM: ld.param.b32 {{%r[0-9]+}}, [spaces_param_0];
# MEM: ld.param.b64 {{%rd[0-9]+}}, [spaces_param_2];
# MEM: ld.param.b64 {{%rd[0-9]+}}, [spaces_param_1];
# MEM-NEXT: ld.param.b32 {{%r[0-9]+}}, [spaces_param_3];
# MEM: ld.global.nc.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}];
# MEM: st.shared.b32 [{{%r[0-9]+}}], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+4], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+8], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+12], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+16], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+20], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+24], {{%r[0-9]+}};
# MEM: ld.shared.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.local.b32 [{{%r[0-9]+}}+28], {{%r[0-9]+}};
# MEM: ld.local.b32 {{%r[0-9]+}}, [{{%r[0-9]+}}];
# MEM: st.global.b32 [{{%rd[0-9]+}}], {{%r[0-9]+}};
