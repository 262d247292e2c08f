"""Ascend-like DaVinci AI Core assembly: grammar, parser into the shared IR, emitter, semantics.

``isa.ascend.parse(text, file)`` gives a :class:`isa.ir.Module` with ``isa='ascend'``;
``Module.emit()`` writes canonical text back; ``isa.ascend.semantics.describe`` gives the
:class:`isa.semantics.OpInfo` of an instruction. The language is described in docs/ascend-isa.md.
"""

from .parser import parse

__all__ = ["parse"]
