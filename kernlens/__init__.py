"""kernlens: read GPU/NPU kernel assembly, tell what it really executes, run it on a simulated machine."""

#: the one place the version is written (pyproject.toml reads it: ``[tool.setuptools.dynamic]``)
__version__ = "0.1.0"
