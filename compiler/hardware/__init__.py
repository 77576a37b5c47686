"""The machine's facts as plain values: element types (`dtypes`, `fp8`) and PTX types
(`ptx_types`), tensor memory (`tmem`), shared memory (`shared_memory`), clusters (`cluster`),
launch limits (`launch_limits`), device printf formats (`printf`) and division by a constant
(`int_division`)."""
