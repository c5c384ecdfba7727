"""A fake pycuda for parakern's bench tests: the part of pycuda.driver that
parakern.bench.runner uses, with kernels run on parakern's CPU emulation (parakern_cpu.h).
See driver.py. Put tests/fakes (and tests/fakes/bin, for nvcc) first on the paths."""
VERSION = (2026, 1)
