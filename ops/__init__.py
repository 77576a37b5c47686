"""Tylo's operations: kernels written in Tylo (`tylo.ops.kernels`) for use from host code."""
