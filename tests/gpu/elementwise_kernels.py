"""Elementwise kernels the instruction tests share: out[i] = fn(a[i], ...) for i below the
length of `a`, `fn` a static function of scalars (a tylo builtin, an operator, a lambda)."""

from __future__ import annotations

import tylo


@tylo.kernel
def unary(out, a, fn: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        out[i] = fn(a[i])


@tylo.kernel
def binary(out, a, b, fn: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        out[i] = fn(a[i], b[i])


@tylo.kernel
def ternary(out, a, b, c, fn: tylo.constexpr):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < a.shape[0]:
        out[i] = fn(a[i], b[i], c[i])
