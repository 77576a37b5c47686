"""Hardware encodings: bit-exact descriptor words and the tables they are built from.

Each encoding (swizzle-mode codes, the wgmma shared-memory descriptor, the tcgen05 descriptors,
TMEM addresses) lives in exactly one table here, with the PTX ISA section it restates. Every
descriptor word is packed and unpacked by `bitfields`; what the wgmma and tcgen05 shared-memory
descriptors share (address encoding, LBO/SBO choice, base offset) is in `matrix_descriptor`."""
