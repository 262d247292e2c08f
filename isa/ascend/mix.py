"""Mix kernels: ``.mix NAME CUBE_KERNEL VECTOR_KERNEL`` names one kernel made of two code segments,
one for the cube cores (AIC) and one for the vector cores (AIV), over one GM. The simulator runs
them together (``sim.ascend.engine``); the analyzer checks a mix's expectations once, on the two
segments together (``analyzer.report.check_mix``)."""

from __future__ import annotations

from .. import ir
from ..errors import InputError


def mix_kernels(module: ir.Module) -> dict[str, tuple[ir.Function, ir.Function]]:
    """``.mix NAME CUBE_KERNEL VECTOR_KERNEL`` directives: a mix kernel's two code segments."""
    out = {}
    for item in module.items:
        if isinstance(item, ir.Directive) and item.name == "mix":
            words = item.args.split()
            if len(words) != 3:
                raise InputError(".mix takes a name, the cube kernel and the vector kernel: "
                                 "'.mix NAME CUBE_KERNEL VECTOR_KERNEL'", item.span)
            name, aic, aiv = words
            fa, fv = module.function(aic), module.function(aiv)
            if fa.attributes != ("cube",) or fv.attributes != ("vector",):
                raise InputError(f".mix {name}: '{aic}' must be a .cube kernel and '{aiv}' a .vector kernel", item.span)
            pa = [(p.space, p.type, p.name, p.dims) for p in fa.params]
            pv = [(p.space, p.type, p.name, p.dims) for p in fv.params]
            if pa != pv:
                raise InputError(f".mix {name}: '{aic}' and '{aiv}' must declare the same parameters (one GM for both)",
                                 fv.span)
            out[name] = (fa, fv)
    return out
