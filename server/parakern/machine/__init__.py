"""GPUs: the profiles of real devices, CUDA's launch limits, the targets registers are counted for."""
