"""What every layer uses: the error hierarchy (`errors`), the settings read from the environment
(`knobs`), the release (`version`) and numpy and ml_dtypes imported on first use
(`lazy_modules`)."""
