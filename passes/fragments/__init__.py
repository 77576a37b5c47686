"""The handlers of tylo-lower-fragments (passes/lower_fragments.py) for op families of their own,
one module per family: `copies` (vector loads and stores), `fragment_ops` (slot renaming,
packing), `wgmma`, `tcgen05`."""
