# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# Named barriers, elect_one, setmaxnreg and dynamic_smem_size are one instruction each
# (bar.sync / bar.arrive, elect.sync, setmaxnreg, mov of %dynamic_smem_size): the frontend
# records their ptx ops directly on unallocated registers (dialects/direct.py; setmaxnreg has no
# register, bar its id's), and selection numbers them in order with the registers around them.
import tylo
from tylo import Int32, Tensor


@tylo.kernel
def roles(out):
    t = tylo.thread_idx()
    tylo.setmaxnreg(232, "inc")
    tylo.barrier(1, 128)
    tylo.barrier_arrive(2, 64)
    tylo.barrier(t // 128)
    if tylo.elect_one():
        out[t] = tylo.dynamic_smem_size()


compiled = roles.compile(Tensor(Int32, 1), block=256, arch="sm_90a")
# CHECK-LABEL: func.func @roles(
# CHECK:       ptx.setmaxnreg "inc" 232
# CHECK:       %[[ONE:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i32 to !ptx.reg<r>
# CHECK-NEXT:  ptx.bar "sync" %[[ONE]] threads 128 : !ptx.reg<r>
# CHECK:       ptx.bar "arrive" %{{.*}} threads 64 : !ptx.reg<r>
# CHECK:       ptx.bar "sync" %{{.*}} : !ptx.reg<r>
# CHECK:       %{{.*}}, %[[LEADER:.*]] = ptx.elect_sync : !ptx.reg<r>, !ptx.reg<p>
# CHECK:       %[[B:.*]] = builtin.unrealized_conversion_cast %[[LEADER]] : !ptx.reg<p> to i1
# CHECK-NEXT:  scf.if %[[B]]
# CHECK:       ptx.special "%dynamic_smem_size" : !ptx.reg<r>
# CHECK-NOT:   tylo.named_barrier
print(compiled.asm["tylo"])

# CHECK-LABEL: .visible .entry roles(
# CHECK:       setmaxnreg.inc.sync.aligned.u32 232;
# CHECK:       bar.sync %r{{[0-9]+}}, 128;
# CHECK:       bar.arrive %r{{[0-9]+}}, 64;
# CHECK:       bar.sync %r{{[0-9]+}};
# CHECK:       elect.sync %r{{[0-9]+}}|%p{{[0-9]+}}, 0xffffffff;
# CHECK:       mov.u32 %r{{[0-9]+}}, %dynamic_smem_size;
print(compiled.ptx)
