"""Tylo's release, in one place: pyproject reads it (``[tool.setuptools.dynamic]``), ``tylo.__version__``
re-exports it, and every compile-cache key includes it."""

VERSION = "0.1.0"
