"""Line-zero repair (compiler/line_zero.py, docs/decisions/0002-compiler-stages.md).

LLVM puts the code it hoists out of a statement (here the array parameters' loads) on
line 0, which DWARF and PTX's ``.loc file line column`` (PTX ISA 11.5.4 ".loc") read as "no
source line"; warp_lab gives each such instruction the line of the first instruction
that uses its result, and marks the ``.loc`` with a comment. So no ``.loc`` names line 0,
and the three array loads stand on the statement that reads and writes the arrays.
"""
import warp_lab as wl

# RUN: NOZERO arch=sm_80
# NOZERO-NOT: .loc {{[0-9]+ 0 [0-9]+}}

# RUN: CHECK arch=sm_80
# CHECK: .entry vector_add(
# CHECK: .loc {{[0-9]+}} [[@LINE+11]] {{[0-9]+}} // line 0 in LLVM's output: the first line using this code
# CHECK-NEXT: ld.param.b64 {{%rd[0-9]+}}, [vector_add_param_{{[123]}}];
# CHECK-NEXT: ld.param.b64 {{%rd[0-9]+}}, [vector_add_param_{{[123]}}];
# CHECK-NEXT: ld.param.b64 {{%rd[0-9]+}}, [vector_add_param_{{[123]}}];
# CHECK: ret;


@wl.kernel
def vector_add(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
               c: wl.array(dtype=wl.float32)):
    i = wl.tid()
    c[i] = a[i] + b[i]
