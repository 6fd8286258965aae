; Frontend test input in the style of clang/Triton PTX: llc -march=nvptx64 -mcpu=sm_80 -mattr=+ptx72 -O2 llvm_style.ll -o llvm_style.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@g = addrspace(1) global [4 x i32] [i32 1, i32 2, i32 3, i32 -4], align 4
@p = addrspace(1) global i32 addrspace(1)* getelementptr ([4 x i32], [4 x i32] addrspace(1)* @g, i32 0, i32 2), align 8
@q = addrspace(1) global i32* addrspacecast (i32 addrspace(1)* bitcast ([4 x i32] addrspace(1)* @g to i32 addrspace(1)*) to i32*), align 8
@s1 = addrspace(1) global <{ i16, i32 addrspace(1)*, i8 }> <{ i16 12, i32 addrspace(1)* getelementptr ([4 x i32], [4 x i32] addrspace(1)* @g, i32 0, i32 1), i8 34 }>, align 1
@fl = addrspace(1) global [2 x float] [float 1.5, float -0.0], align 4
@dd = addrspace(4) global double 3.25, align 8
@w = weak addrspace(1) global i32 7, align 4
@sm = internal addrspace(3) global [64 x float] undef, align 4
@ext = external addrspace(3) global [0 x float], align 16

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()

define internal float @helper(float %x, i32 %n) noinline {
entry:
  %c = icmp sgt i32 %n, 3
  br i1 %c, label %a, label %b
a:
  %y = fmul float %x, 2.0
  ret float %y
b:
  %z = call float asm "{ .reg .pred p; setp.gt.f32 p, $1, 0f00000000; @p bra LBL; mov.f32 $0, $1; bra DONE; LBL: neg.f32 $0, $1; DONE: }", "=f,f"(float %x)
  ret float %z
}

define void @kern(float addrspace(1)* %out, float addrspace(1)* readonly %in, i64 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cy = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %i = add i32 %tid, %cy
  %i64 = zext i32 %i to i64
  %pin = getelementptr float, float addrspace(1)* %in, i64 %i64
  %v = load float, float addrspace(1)* %pin, align 4
  %v2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 1, i32 31)
  %smp = getelementptr [64 x float], [64 x float] addrspace(3)* @sm, i32 0, i32 %tid
  store float %v2, float addrspace(3)* %smp
  call void @llvm.nvvm.barrier0()
  %e = getelementptr [0 x float], [0 x float] addrspace(3)* @ext, i32 0, i32 %tid
  %ev = load float, float addrspace(3)* %e
  %h = call float @helper(float %ev, i32 %i)
  %gp = getelementptr [4 x i32], [4 x i32] addrspace(1)* @g, i32 0, i32 1
  %old = atomicrmw add i32 addrspace(1)* %gp, i32 5 seq_cst
  %of = sitofp i32 %old to float
  %r = fadd float %h, %of
  %d = load double, double addrspace(4)* @dd
  %df = fptrunc double %d to float
  %r2 = fadd float %r, %df
  %po = getelementptr float, float addrspace(1)* %out, i64 %i64
  %neg = getelementptr float, float addrspace(1)* %po, i64 -3
  store float %r2, float addrspace(1)* %neg, align 4
  ret void
}

!nvvm.annotations = !{!0, !1}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, i64)* @kern, !"kernel", i32 1}
!1 = !{void (float addrspace(1)*, float addrspace(1)*, i64)* @kern, !"maxntidx", i32 128}
