"""Kernel generators (CATLASS-style templates) for the Ascend-like assembly.

``gemm.gemm_kernel(GemmConfig(...))`` (cube cores), ``vector.reduce_kernel`` and
``vector.softmax_kernel`` (vector cores) return assembly text whose ``.meta`` header records the
operation, shapes, layouts and dtypes, so ``kernlens run --check`` can build inputs and the
numpy reference by itself. ``cli`` is ``kernlens generate``.
"""
