"""The host-side model: plain Python (no IR imports), shared by every layer above.

* `layout`: the CuTe layout algebra (int tuples, layouts, swizzles, complement, divides,
  products, inverses, slicing, windows, offsets, the printed form read back).
* `ownership`: which thread holds which element of a tile (ownerships, fitting, slot maps,
  named patterns).
* `atoms`: instruction atoms (``ldmatrix``/``stmatrix`` copy atoms, ``mma.sync`` atoms, TiledMMA).
* `hardware`: the machine's facts (element and PTX types, FP8, tensor memory, shared memory,
  clusters, launch limits, device printf formats, division by constants).
* `params`: kernel parameters (the signature of a kernel's arguments, the parameter buffer).
* `plans`, `encodings`: host-side plans and bit-exact hardware encodings.
* `support`: what every layer uses (the error hierarchy, knobs, the version, lazy modules).
"""
