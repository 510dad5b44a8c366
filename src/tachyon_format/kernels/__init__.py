"""numpy kernels with stable signatures, shared by every format (no format knowledge)."""
