"""Ownerships: which thread holds which element of a logical tile (`ownership`), recovering one
from a table (`fit`), slot maps between ownerships (`maps`) and the named warp patterns
(`patterns`)."""
