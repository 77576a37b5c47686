"""The CuTe layout algebra: int tuples and runtime leaves, `Layout` and its swizzled form, and
the operations on them (complement, divides, products, inverses, slicing, windows, offsets,
reading a printed layout back)."""
