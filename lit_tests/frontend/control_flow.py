# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# Control flow on runtime values becomes structured IR; on static values it stays Python.
import tylo
from tylo import Float32, Int32


@tylo.kernel
def branches(out, n, limit: tylo.constexpr):
    i = tylo.thread_idx()
    x = 1.0
    if i < n:  # runtime: scf.if yielding x
        x = 2.0
    else:
        x = 3.0
    if limit > 4:  # static: only the taken branch is traced
        x = x * 5.0
    out[i] = x


# CHECK-LABEL: func.func @branches
# CHECK:       %[[C:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
# CHECK-NEXT:  %[[X:.*]] = scf.if %[[C]] -> (f32) {
# CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
# CHECK-NEXT:    scf.yield %[[TWO]] : f32
# CHECK-NEXT:  } else {
# CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
# CHECK-NEXT:    scf.yield %[[THREE]] : f32
# CHECK-NEXT:  }
# CHECK-NEXT:  %[[FIVE:.*]] = arith.constant 5.000000e+00 : f32
# CHECK-NEXT:  %[[Y:.*]] = arith.mulf %[[X]], %[[FIVE]] : f32
# CHECK:       tylo.store_element %[[Y]]
print(branches.compile(tylo.Tensor(Float32, 1), 10, 8).asm["tylo"])


@tylo.kernel
def loops(out, n):
    total = 0
    for k in range(0, n, 2):  # runtime loop; `total` is carried (promoted to Int32)
        total = total + k
    steps = 0
    while total > 1:  # runtime while: `total` and `steps` are carried
        total = total // 2
        steps = steps + 1
    for j in tylo.static_range(3):  # unrolled: three adds
        steps = steps + j
    out[0] = steps


# CHECK-LABEL: func.func @loops
# CHECK:       arith.constant 2 : i32
# CHECK-NEXT:  %[[ZERO:.*]] = arith.constant 0 : i32
# CHECK-NEXT:  %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (i32) : i32 {
# CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[ACC]], %[[K]] : i32
# CHECK-NEXT:    scf.yield %[[NEXT]] : i32
# CHECK-NEXT:  }
# CHECK:       %{{.*}}, %[[STEPS:.*]] = scf.while (%{{.*}} = %[[SUM]], %{{.*}} = %{{.*}}) : (i32, i32) -> (i32, i32) {
# CHECK:         arith.cmpi sgt
# CHECK:         scf.condition
# CHECK:       } do {
# CHECK:         arith.shrsi
# CHECK:         scf.yield
# CHECK:       }
# CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : i32
# CHECK-NEXT:  %[[S1:.*]] = arith.addi %[[STEPS]], %[[ONE]] : i32
# CHECK-NEXT:  %[[TWO:.*]] = arith.constant 2 : i32
# CHECK-NEXT:  %[[S2:.*]] = arith.addi %[[S1]], %[[TWO]] : i32
# CHECK:       tylo.store_element %[[S2]]
print(loops.compile(tylo.Tensor(Int32, 1), 100).asm["tylo"])


@tylo.kernel
def guarded(y, x, n):
    i = tylo.thread_idx()
    if i < n and x[i] > 0.0:  # short circuit: x[i] is read only when i < n
        y[i] = x[i]


# CHECK-LABEL: func.func @guarded
# CHECK:       %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %n : i32
# CHECK-NEXT:  %[[BOTH:.*]] = scf.if %[[IN]] -> (i1) {
# CHECK-NEXT:    tylo.load_element %{{.*}}
# CHECK:         arith.cmpf ogt
# CHECK:         scf.yield %{{.*}} : i1
# CHECK-NEXT:  } else {
# CHECK-NEXT:    %[[NO:.*]] = arith.constant false
# CHECK-NEXT:    scf.yield %[[NO]] : i1
# CHECK-NEXT:  }
# CHECK-NEXT:  scf.if %[[BOTH]] {
print(guarded.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 10).asm["tylo"])
