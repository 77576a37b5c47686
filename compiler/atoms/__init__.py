"""Instruction atoms: ``ldmatrix``/``stmatrix`` copy atoms (`copy_atom`), ``mma.sync`` atoms
(`mma_atom`) and a CTA's decomposition of a product into them (`tiled_mma`)."""
