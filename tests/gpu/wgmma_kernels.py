"""A hand-built ptx-dialect kernel around wgmma.mma_async, for the emulator's semantics tests,
made with the dialect directly.

``wgmma_module(case)`` is entry "k" for `warpgroups` x 128 threads with parameters (all u64):
0 the shared image (bytes, copied into shared offset 0 before anything), 1 the accumulators in
(f32, thread-major: thread t's register i at t * n/2 + i), 2 register A (u32, t * 4 + j; the
register-A form), 3 the accumulators out (f32, like 1), 4 a-desc, 5 b-desc (descriptor values).
Each thread copies its words of the image, ``fence.proxy.async``, ``bar.sync 0``, loads its accumulator, then
``wgmma.fence``, `chain` mma_async (the same operands, chained on the accumulator), commit,
``wait_group 0`` and stores the accumulator. It runs on the emulator only (the GPU comparison
of the wgmma numerics is tests/gpu/test_wgmma_numerics_gpu.py, through the kernel language).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.parser import Parser

from tylo.passes.universe import make_context



@dataclass(frozen=True)
class Case:
    """One kernel: instruction shape and operands (see the module text)."""

    n: int = 8
    types: str = "f32.bf16.bf16"
    register_a: bool = False
    tnsp_a: int = 0
    tnsp_b: int = 0
    scale_a: int = 1
    scale_b: int = 1
    scale_d: int = 1
    chain: int = 1
    image_bytes: int = 8192
    warpgroups: int = 1
    read_before_wait: bool = False   # store the accumulator between commit and wait
    store_before_wait: bool = False  # overwrite shared word 0 between commit and wait
    proxy_fence: bool = True  # fence.proxy.async after the image's generic stores


def _regs(prefix: str, first: int, count: int) -> list[str]:
    return [f"!ptx.reg<{prefix}{first + i}>" for i in range(count)]


def wgmma_text(c: Case) -> str:
    """The module's text (dialect assembly)."""
    h = c.n // 2
    acc_t = _regs("f", 1, h)
    lines = [
        f'ptx.entry "k" ["u64", "u64", "u64", "u64", "u64", "u64"] reqntid [{128 * c.warpgroups}, 1, 1] {{',
        f'  ptx.shared_decl "image"[{c.image_bytes}] align 1024',
        '  %smem = ptx.mov_symbol "image" : !ptx.reg<r1>',
        '  %t = ptx.special "%tid.x" : !ptx.reg<r2>',
        '  %four = ptx.const "b32"(4) : !ptx.reg<r3>',
        '  %t4 = ptx.mul "u32" "lo" %t, %four : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r4>',
        '  %dst = ptx.add "u32" %smem, %t4 : (!ptx.reg<r1>, !ptx.reg<r4>) -> !ptx.reg<r5>',
        '  %t4w = ptx.mul "u32" "wide" %t, %four : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<rd1>',
    ]
    for i in range(4):
        lines += [f'  %p{i} = ptx.ld_param "u64"[{i}] : !ptx.reg<rd{10 + i}>',
                  f'  %g{i} = ptx.cvta "global" %p{i} : !ptx.reg<rd{10 + i}> -> !ptx.reg<rd{20 + i}>']
    lines += [
        '  %src = ptx.add "u64" %g0, %t4w : (!ptx.reg<rd20>, !ptx.reg<rd1>) -> !ptx.reg<rd30>',
        '  %ad = ptx.ld_param "u64"[4] : !ptx.reg<rd40>',
        '  %bd = ptx.ld_param "u64"[5] : !ptx.reg<rd41>',
    ]
    threads = 128 * c.warpgroups
    for i in range(c.image_bytes // (4 * threads)):
        lines += [f'  %w{i} = ptx.ld "global" "u32"[%src, {4 * threads * i}] : !ptx.reg<rd30> -> !ptx.reg<r10>',
                  f'  ptx.st "shared" "u32"[%dst, {4 * threads * i}], %w{i} : !ptx.reg<r5>, !ptx.reg<r10>']
    if c.proxy_fence:  # the image is read through the async proxy
        lines.append('  ptx.fence "proxy_async"')
    lines.append('  ptx.bar_sync 0')
    lines += [  # thread t's accumulators: 4 * (n/2) * t bytes into parameters 1 and 3
        f'  %hb = ptx.const "b32"({4 * h}) : !ptx.reg<r6>',
        '  %tb = ptx.mul "u32" "wide" %t, %hb : (!ptx.reg<r2>, !ptx.reg<r6>) -> !ptx.reg<rd2>',
        '  %cin = ptx.add "u64" %g1, %tb : (!ptx.reg<rd21>, !ptx.reg<rd2>) -> !ptx.reg<rd31>',
        '  %cout = ptx.add "u64" %g3, %tb : (!ptx.reg<rd23>, !ptx.reg<rd2>) -> !ptx.reg<rd33>',
        '  %sixteen = ptx.const "b32"(16) : !ptx.reg<r7>',
        '  %ta = ptx.mul "u32" "wide" %t, %sixteen : (!ptx.reg<r2>, !ptx.reg<r7>) -> !ptx.reg<rd3>',
        '  %ain = ptx.add "u64" %g2, %ta : (!ptx.reg<rd22>, !ptx.reg<rd3>) -> !ptx.reg<rd32>',
    ]
    acc = []
    for i in range(h):
        lines.append(f'  %c0_{i} = ptx.ld "global" "f32"[%cin, {4 * i}] : !ptx.reg<rd31> -> {acc_t[i]}')
        acc.append(f"%c0_{i}")
    a_regs = []
    if c.register_a:
        for j in range(4):
            lines.append(f'  %a{j} = ptx.ld "global" "u32"[%ain, {4 * j}] : !ptx.reg<rd32> -> !ptx.reg<r{20 + j}>')
            a_regs.append(f"%a{j}")
    types = ", ".join(acc_t)
    lines.append('  ptx.wgmma_fence')
    for s in range(c.chain):
        out = [f"%c{s + 1}_{i}" for i in range(h)]
        props = f"scale_a = {c.scale_a} : i64, scale_b = {c.scale_b} : i64, tnsp_b = {c.tnsp_b} : i64, scale_d_imm = {c.scale_d} : i64"
        if c.register_a:
            a_t = ", ".join(_regs("r", 20, 4))
            lines.append(
                f'  {", ".join(out)} = ptx.wgmma_mma_async_reg_a {c.n} "{c.types}" ({", ".join(acc)}), '
                f'({", ".join(a_regs)}), %bd {{{props}}} : ({types}), ({a_t}), !ptx.reg<rd41> -> ({types})')
        else:
            lines.append(
                f'  {", ".join(out)} = ptx.wgmma_mma_async {c.n} "{c.types}" ({", ".join(acc)}), %ad, %bd '
                f'{{{props}, tnsp_a = {c.tnsp_a} : i64}} : ({types}), !ptx.reg<rd40>, !ptx.reg<rd41> -> ({types})')
        acc = out
    lines.append('  ptx.wgmma_commit_group')
    if c.read_before_wait:
        lines.append(f'  ptx.st "global" "f32"[%cout, 0], {acc[0]} : !ptx.reg<rd33>, {acc_t[0]}')
    if c.store_before_wait:
        lines.append('  ptx.st "shared" "u32"[%dst, 0], %t : !ptx.reg<r5>, !ptx.reg<r2>')
    ready = [f"%d_{i}" for i in range(h)]
    lines.append(f'  {", ".join(ready)} = ptx.wgmma_wait_group 0 ({", ".join(acc)}) : ({types}) -> ({types})')
    for i in range(h):
        lines.append(f'  ptx.st "global" "f32"[%cout, {4 * i}], {ready[i]} : !ptx.reg<rd33>, {acc_t[i]}')
    lines += ['  ptx.ret', '}']
    return "builtin.module attributes {ptx.target = \"sm_90a\"} {\n" + "\n".join(lines) + "\n}"


def wgmma_module(c: Case):
    """The verified ptx-dialect module of `c`."""
    module = Parser(make_context(), wgmma_text(c)).parse_module()
    module.verify()
    return module


# -- host side: operands through Tylo's host model, and the emulated run -------------------------

def operand_tile(role: str, major: str, row_bytes: int, n: int):
    """(layout, shape) of a dense canonical tile holding operand `role` (A (64, 16) or B (16, n))
    at origin (0, 0), 16-bit elements, rows of `row_bytes` (16 = no swizzle)."""
    from tylo.compiler.plans.swizzled_structure import SwizzledStructure, structure_layout

    r = row_bytes // 2
    kaxis = 1 if role == "A" else 0
    a = kaxis if major == "K" else 1 - kaxis
    need = {"A": (64, 16), "B": (16, n)}[role]
    shape = [0, 0]
    shape[a] = -(-need[a] // r) * r
    shape[1 - a] = -(-need[1 - a] // 8) * 8
    groups, q = shape[a] // r, shape[1 - a] // 8
    stride = 8 * row_bytes
    s = SwizzledStructure(major, row_bytes, q * stride, stride, r, groups)
    return structure_layout(s, tuple(shape), kaxis), tuple(shape)


def place(image, layout, base: int, raw) -> None:
    """Write the 16-bit elements `raw` (rows, cols) into the byte `image` at base + 2 L(i, j)."""
    import numpy as np

    rows, cols = raw.shape
    for i in range(rows):
        for j in range(cols):
            o = base + 2 * int(layout((i, j)))
            image[o: o + 2] = np.frombuffer(np.uint16(raw[i, j]).tobytes(), np.uint8)


def descriptor(layout, role: str, base: int) -> int:
    """The host's descriptor of the operand at (0, 0) of `layout` stored from `base`."""
    from tylo.compiler.hardware.dtypes import BFloat16
    from tylo.compiler.encodings.wgmma_descriptor import operand_descriptor
    from tylo.compiler.plans.swizzled_structure import swizzled_structure

    structure = swizzled_structure(layout, BFloat16, 1 if role == "A" else 0)
    return operand_descriptor(structure, layout, (0, 0), base)


def _bytes(layout, shape) -> int:
    """Bytes from a tile's base to past its last element."""
    return 2 * (max(int(layout((i, j))) for i in range(shape[0]) for j in range(shape[1])) + 1)


def shared_operands(a_raw, b_raw, row_a: int, row_b: int, tnsp_a: int, tnsp_b: int,
                    threads: int = 128):
    """(image, a_desc, b_desc): A (64 x 16) at shared offset 0 and B (16 x n) at the next
    1024-byte boundary, raw 16-bit elements stored through the canonical tiles
    (`operand_tile`); the image is a whole number of 4 * `threads` bytes."""
    import numpy as np

    n = b_raw.shape[1]
    lay_a, shape_a = operand_tile("A", "MN" if tnsp_a else "K", row_a, n)
    lay_b, shape_b = operand_tile("B", "MN" if tnsp_b else "K", row_b, n)
    b_base = -(-_bytes(lay_a, shape_a) // 1024) * 1024
    size = b_base + _bytes(lay_b, shape_b)
    image = np.zeros(-(-size // (4 * threads)) * 4 * threads, np.uint8)
    place(image, lay_a, 0, a_raw)
    place(image, lay_b, b_base, b_raw)
    return image, descriptor(lay_a, "A", 0), descriptor(lay_b, "B", b_base)


def run_emulated(c: Case, image, acc_in, a_regs, a_desc: int, b_desc: int):
    """Run `wgmma_module(c)` on the emulator: the accumulators out, (threads, n/2) uint32."""
    import struct

    import numpy as np

    from tylo.emulator.memory import Memory
    from tylo.emulator.scheduler import run_entry

    threads = 128 * c.warpgroups
    c = replace(c, image_bytes=len(image))
    memory = Memory()
    bases = [memory.allocate("argument 'image'", np.array(image, np.uint8)),
             memory.allocate("argument 'acc'", np.array(acc_in, np.uint32).reshape(-1)),
             memory.allocate("argument 'a'", np.array(a_regs, np.uint32).reshape(-1)),
             memory.allocate("argument 'out'", np.full(threads * c.n // 2, 0xFFC00000, np.uint32))]
    params = struct.pack("<6Q", *bases, a_desc, b_desc)
    run_entry(wgmma_module(c), "k", (1, 1, 1), (threads, 1, 1), params, memory)
    return memory.allocations[3].data.view(np.uint32).reshape(threads, c.n // 2).copy()
