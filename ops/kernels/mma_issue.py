"""How a consumer warpgroup issues the WGMMA groups of its GEMMs (used by the attention
kernel, `attention.py`): one GEMM's groups one after the other (`chain`), or two GEMMs' groups
alternately so that the tensor cores never wait for the warpgroup between groups
(`interleaved`, FlashAttention-3's intra-warpgroup overlap, arXiv 2407.08608 section 3.2).
A step is ``step(acc) -> pending``: one ``tylo.mma_async`` of a group on an accumulator.
"""

from __future__ import annotations

import tylo


def chain(steps, acc, chained: bool):
    """Issue `steps` one after the other on `acc`, ready at the end: each on the pending
    accumulator of the one before (`chained`: one wait at the end) or each waited."""
    for step in steps:
        acc = step(acc) if chained else tylo.wait_mma(step(acc))
    return tylo.wait_mma(acc) if chained else acc


def interleaved(s_steps, s, o_steps, o, chained, prepare_o=None, issued=None):
    """Issue the groups of the GEMMs S and O alternately, S's first, so that the tensor cores
    never wait for this warpgroup between groups. `chained`: each group on its GEMM's pending
    accumulator (no wait between), then one wait for S with the O groups after its last in
    flight (groups complete in issue order; all of S's groups first spilled at D 128 causal);
    else each group waits for its GEMM's one before, the other's in flight (``wait_group
    1``). ``prepare_o(o)`` (O's rescale) runs after S's first group, before O's first;
    ``issued()`` once every group is issued, before the next wait (ptxas does not move a
    bar.arrive across a wgmma wait; placed after it, the arrive was seen sunk past the whole
    softmax). Returns S ready and, when O has groups, O's last group still pending (it runs
    under what comes next): ``(s, o, o_pending)``, o_pending static (True: wait_mma(o) before
    using it)."""
    if chained:
        after = 0  # O groups issued after S's last
        for i in range(max(len(s_steps), len(o_steps))):
            if i < len(s_steps):
                s, after = s_steps[i](s), 0
            if i < len(o_steps):
                x = prepare_o(o) if prepare_o is not None and i == 0 else o
                o, after = o_steps[i](x), after + 1
        if issued is not None:
            issued()
        return (tylo.wait_mma(s, after) if s_steps else s), o, bool(o_steps)
    todo = {"s": list(s_steps), "o": list(o_steps)}
    acc = {"s": s, "o": o}
    pending = []

    def issue(name):
        if name == "o" and prepare_o is not None and len(todo["o"]) == len(o_steps):
            acc["o"] = prepare_o(acc["o"])
        pending.append((name, todo[name].pop(0)(acc[name])))
        if issued is not None and not todo["s"] and not todo["o"]:
            issued()

    for name in ("s", "o"):
        if todo[name]:
            issue(name)
    while todo["s"] or todo["o"] or any(name == "s" for name, _ in pending):
        name, group = pending.pop(0)
        acc[name] = tylo.wait_mma(group, len(pending))
        if todo[name]:
            issue(name)
    if pending:
        return acc["s"], pending[0][1], True
    return acc["s"], acc["o"], False
