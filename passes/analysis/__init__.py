"""Analyses and helpers the passes share, none of them a pass: `op_table` (handlers by op class),
`pointer_analysis` (constants, pointer chains, alignments), `plan_vectors` (vector widths of tile
copies), `target_option` (the ``arch`` option's check)."""
