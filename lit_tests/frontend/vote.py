# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# syncwarp and the votes are one instruction each (bar.warp.sync, vote.sync): the frontend
# records them as ptx ops directly (dialects/direct.py) with the member mask in a register; a
# static mask is an arith.constant there, which selection prints as the immediate
# (IMMEDIATE_OPERANDS, passes/select/direct.py; the constant's mov stays, as before), a runtime
# mask as its register.
import tylo
from tylo import Int32, Tensor, UInt32


@tylo.kernel
def votes(out, x):
    t = tylo.thread_idx()
    tylo.syncwarp()
    tylo.syncwarp(x[t])
    out[t] = tylo.ballot(x[t] > 0, 0x0000FFFF)


compiled = votes.compile(Tensor(UInt32, 1), Tensor(Int32, 1), arch="sm_80")
# CHECK-LABEL: func.func @votes(
# CHECK:       %[[FULL:.*]] = arith.constant -1 : i32
# CHECK-NEXT:  %[[FULL_R:.*]] = builtin.unrealized_conversion_cast %[[FULL]] : i32 to !ptx.reg<r>
# CHECK-NEXT:  ptx.bar_warp_sync %[[FULL_R]] : !ptx.reg<r>
# CHECK:       ptx.bar_warp_sync %{{.*}} : !ptx.reg<r>
# CHECK:       %[[B:.*]] = ptx.vote_sync "ballot" %{{.*}}, %{{.*}} : !ptx.reg<r> : !ptx.reg<p> -> !ptx.reg<r>
# CHECK-NEXT:  builtin.unrealized_conversion_cast %[[B]] : !ptx.reg<r> to i32
print(compiled.asm["tylo"])

# CHECK-LABEL: .visible .entry votes(
# CHECK:       mov.b32 %r{{[0-9]+}}, 4294967295;
# CHECK:       bar.warp.sync 0xffffffff;
# CHECK:       ld.global.b32 %r[[MASK:[0-9]+]],
# CHECK:       bar.warp.sync %r[[MASK]];
# CHECK:       vote.sync.ballot.b32 %r{{[0-9]+}}, %p{{[0-9]+}}, 0x0000ffff;
print(compiled.ptx)
