"""The Python frontend: decorated kernels, their tracing into the tylo dialect, and launches."""
