"""Tylo's release, in one place: pyproject reads it (``[tool.setuptools.dynamic]``), ``tylo.__version__``
re-exports it, and every compile-cache key includes it."""

VERSION = "0.1.0"

PACKAGES = (
    "tylo",
    "tylo.compiler",
    "tylo.compiler.atoms",
    "tylo.compiler.hardware",
    "tylo.compiler.layout",
    "tylo.compiler.ownership",
    "tylo.compiler.params",
    "tylo.compiler.support",
    "tylo.compiler.encodings",
    "tylo.compiler.plans",
    "tylo.dialects",
    "tylo.dialects.ptx",
    "tylo.dialects.tylo",
    "tylo.passes",
    "tylo.passes.select",
    "tylo.passes.analysis",
    "tylo.passes.fragments",
    "tylo.runtime",
    "tylo.frontend",
    "tylo.frontend.language",
    "tylo.frontend.tracing",
    "tylo.frontend.jit",
    "tylo.viz",
    "tylo.emulator",
    "tylo.emulator.semantics",
    "tylo.ops",
    "tylo.ops.kernels",
    "tylo.testing",
)
"""Tylo's packages, as pyproject.toml lists them (a test keeps the two equal): the disk cache
hashes their sources into its keys."""
