"""Helpers that the cache-key tests call as ``cache_helpers.name`` (an attribute of a module)."""

import tylo


@tylo.func
def twice(x):
    return x + x


@tylo.func
def thrice(x):
    return x + x + x


class Tiles:
    """A configuration class whose attributes kernels read as ``cache_helpers.Tiles.SCALE``."""

    SCALE = 2.0
