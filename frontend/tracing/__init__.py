"""Turning a kernel's Python into IR: the trace context (`tracing`), the AST rewrite of runtime
control flow (`rewrite`) and its builders (`control_flow`, `carried`, `unbound`), and the
kernel's source with the mapping of errors back to the user's lines (`source`)."""
