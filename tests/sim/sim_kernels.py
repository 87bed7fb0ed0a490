"""LLVM IR kernels used by the simulator tests (compiled with llvmlite's NVPTX back end)."""

GID = """
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %cta, %ntid
  %i = add i32 %base, %tid
  %i64 = sext i32 %i to i64
"""

SAXPY = """
define ptx_kernel void @saxpy(ptr addrspace(1) %x, ptr addrspace(1) %y, float %a, i32 %n) {
entry:""" + GID + """
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %body, label %exit
body:
  %px = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %py = getelementptr float, ptr addrspace(1) %y, i64 %i64
  %vx = load float, ptr addrspace(1) %px
  %vy = load float, ptr addrspace(1) %py
  %ax = fmul float %a, %vx
  %r = fadd float %ax, %vy
  store float %r, ptr addrspace(1) %py
  br label %exit
exit:
  ret void
}
"""

# out[i] = i%3==0 ? x*2 : x+1 ; cnt[i] = sum_{j<i%7} j  (divergent branch and loop)
DIVERGE = """
define ptx_kernel void @diverge(ptr addrspace(1) %x, ptr addrspace(1) %out, ptr addrspace(1) %cnt) {
entry:""" + GID + """
  %px = getelementptr i32, ptr addrspace(1) %x, i64 %i64
  %v = load i32, ptr addrspace(1) %px
  %m3 = urem i32 %i, 3
  %z = icmp eq i32 %m3, 0
  br i1 %z, label %then, label %else
then:
  %a = mul i32 %v, 2
  br label %join
else:
  %b = add i32 %v, 1
  br label %join
join:
  %r = phi i32 [%a, %then], [%b, %else]
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %i64
  store i32 %r, ptr addrspace(1) %po
  %trip = urem i32 %i, 7
  br label %loop
loop:
  %j = phi i32 [0, %join], [%j1, %loop]
  %acc = phi i32 [0, %join], [%acc1, %loop]
  %more = icmp ult i32 %j, %trip
  %acc1 = add i32 %acc, %j
  %j1 = add i32 %j, 1
  %accx = select i1 %more, i32 %acc1, i32 %acc
  br i1 %more, label %loop, label %done
done:
  %pc = getelementptr i32, ptr addrspace(1) %cnt, i64 %i64
  store i32 %acc, ptr addrspace(1) %pc
  ret void
}
"""

REDUCE = """
@sm = internal addrspace(3) global [256 x float] undef, align 4
define ptx_kernel void @reduce(ptr addrspace(1) %x, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %cc = mul i32 %c, 256
  %g = add i32 %cc, %t
  %g64 = sext i32 %g to i64
  %px = getelementptr float, ptr addrspace(1) %x, i64 %g64
  %v = load float, ptr addrspace(1) %px
  %ps = getelementptr [256 x float], ptr addrspace(3) @sm, i32 0, i32 %t
  store float %v, ptr addrspace(3) %ps
  call void @llvm.nvvm.barrier0()
  br label %loop
loop:
  %s = phi i32 [128, %entry], [%s2, %latch]
  %lt = icmp ult i32 %t, %s
  br i1 %lt, label %add, label %latch
add:
  %t2 = add i32 %t, %s
  %pq = getelementptr [256 x float], ptr addrspace(3) @sm, i32 0, i32 %t2
  %a1 = load float, ptr addrspace(3) %ps
  %a2 = load float, ptr addrspace(3) %pq
  %a3 = fadd float %a1, %a2
  store float %a3, ptr addrspace(3) %ps
  br label %latch
latch:
  BARRIER
  %s2 = lshr i32 %s, 1
  %more = icmp ugt i32 %s, 1
  br i1 %more, label %loop, label %done
done:
  %z = icmp eq i32 %t, 0
  br i1 %z, label %w, label %exit
w:
  %a0 = load float, ptr addrspace(3) @sm
  %c64 = sext i32 %c to i64
  %po = getelementptr float, ptr addrspace(1) %out, i64 %c64
  store float %a0, ptr addrspace(1) %po
  br label %exit
exit:
  ret void
}
"""

CALL = """
define internal float @poly(float %v, float %k) noinline {
  %a = fmul float %v, %v
  %b = fadd float %a, %k
  ret float %b
}
define ptx_kernel void @callk(ptr addrspace(1) %x, ptr addrspace(1) %y) {
entry:""" + GID + """
  %px = getelementptr float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %px
  %odd = and i32 %i, 1
  %isodd = icmp ne i32 %odd, 0
  br i1 %isodd, label %o, label %e
o:
  %r1 = call float @poly(float %v, float 1.0)
  br label %j
e:
  %r2 = call float @poly(float %v, float 2.0)
  br label %j
j:
  %r = phi float [%r1, %o], [%r2, %e]
  %py = getelementptr float, ptr addrspace(1) %y, i64 %i64
  store float %r, ptr addrspace(1) %py
  ret void
}
"""

ATOMICS = """
define ptx_kernel void @hist(ptr addrspace(1) %x, ptr addrspace(1) %h, ptr addrspace(1) %old, ptr addrspace(1) %fsum) {
entry:""" + GID + """
  %px = getelementptr i32, ptr addrspace(1) %x, i64 %i64
  %v = load i32, ptr addrspace(1) %px
  %b = and i32 %v, 15
  %b64 = zext i32 %b to i64
  %ph = getelementptr i32, ptr addrspace(1) %h, i64 %b64
  %o = atomicrmw add ptr addrspace(1) %ph, i32 1 monotonic
  %po = getelementptr i32, ptr addrspace(1) %old, i64 %i64
  store i32 %o, ptr addrspace(1) %po
  %f = sitofp i32 %v to float
  %fo = atomicrmw fadd ptr addrspace(1) %fsum, float %f monotonic
  ret void
}
"""

LOCALARR = """
define ptx_kernel void @localarr(ptr addrspace(1) %out) {
entry:""" + GID + """
  %arr = alloca [8 x i32], align 4
  br label %fill
fill:
  %k = phi i32 [0, %entry], [%k1, %fill]
  %k64 = zext i32 %k to i64
  %p = getelementptr [8 x i32], ptr %arr, i64 0, i64 %k64
  %val = mul i32 %k, %i
  store volatile i32 %val, ptr %p
  %k1 = add i32 %k, 1
  %c = icmp ult i32 %k1, 8
  br i1 %c, label %fill, label %read
read:
  %sel = and i32 %i, 7
  %s64 = zext i32 %sel to i64
  %q = getelementptr [8 x i32], ptr %arr, i64 0, i64 %s64
  %r = load volatile i32, ptr %q
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %i64
  store i32 %r, ptr addrspace(1) %po
  ret void
}
"""

PRINTF = """
@fmt = private unnamed_addr addrspace(1) constant [28 x i8] c"t=%d v=%.2f big=%lld s=%s!\\0A\\00"
@word = private unnamed_addr addrspace(1) constant [3 x i8] c"hi\\00"
define ptx_kernel void @pr(float %v) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %buf = alloca { i32, double, i64, ptr }, align 8
  %p0 = getelementptr { i32, double, i64, ptr }, ptr %buf, i32 0, i32 0
  store i32 %t, ptr %p0
  %d = fpext float %v to double
  %p1 = getelementptr { i32, double, i64, ptr }, ptr %buf, i32 0, i32 1
  store double %d, ptr %p1
  %p2 = getelementptr { i32, double, i64, ptr }, ptr %buf, i32 0, i32 2
  store i64 -5000000000, ptr %p2
  %p3 = getelementptr { i32, double, i64, ptr }, ptr %buf, i32 0, i32 3
  %w = addrspacecast ptr addrspace(1) @word to ptr
  store ptr %w, ptr %p3
  %f = addrspacecast ptr addrspace(1) @fmt to ptr
  %r = call i32 @vprintf(ptr %f, ptr %buf)
  ret void
}
"""

GRID2D = """
define ptx_kernel void @grid2d(ptr addrspace(1) %out, i32 %w) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %cx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %cy = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %bx = mul i32 %cx, %nx
  %x = add i32 %bx, %tx
  %by = mul i32 %cy, %ny
  %y = add i32 %by, %ty
  %row = mul i32 %y, %w
  %idx = add i32 %row, %x
  %i64 = sext i32 %idx to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %i64
  %v = mul i32 %y, 1000
  %v2 = add i32 %v, %x
  store i32 %v2, ptr addrspace(1) %p
  ret void
}
"""
