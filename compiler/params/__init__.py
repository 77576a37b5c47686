"""Kernel parameters: what each Python argument is at compile time and passes at launch
(`signature`), and where each parameter's bytes go in a parameter buffer (`kernel_params`)."""
