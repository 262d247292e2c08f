"""What an instruction does, as data: family, unit, dtypes, work and traffic.

The analyzer and the simulators read these facts; neither matches opcode strings itself.
Each ISA fills the same :class:`OpInfo` from its own tables (``isa.ptx.semantics``,
``isa.ascend.semantics``); :func:`describe` dispatches on the module's ISA.

A real PTX line and its facts::

    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {...}, {...}, {...};

    OpInfo(family='mma', unit=Unit.TENSOR, classes={'TENSOR_CORE'}, in_dtype='f16',
           acc_dtype='f32', flops=4096, scope=Scope.WARP, shape=(16, 8, 16))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .ir import Instruction


class Unit(str, Enum):
    """The execution unit (GPU) or pipe (DaVinci) an instruction occupies."""

    TENSOR = "tensor"      # mma/wmma/wgmma
    FP32 = "fp32"          # FFMA/FADD/FMUL pipe
    FP16 = "fp16"          # HFMA2 pipe (f16/bf16 scalar and packed)
    FP64 = "fp64"
    INT = "int"            # integer ALU, logic, compares, moves, dp4a
    SFU = "sfu"            # MUFU: ex2, rsqrt, rcp, sin, cos, lg2, tanh
    LSU = "lsu"            # loads/stores/atomics/shuffles/ldmatrix/cp.async
    CONTROL = "control"    # branches, calls, exit
    SYNC = "sync"          # barriers, fences, mbarrier, commit/wait groups
    # DaVinci AI Core pipes
    CUBE = "cube"          # PIPE_M
    VECTOR = "vector"      # PIPE_V
    SCALAR = "scalar"      # PIPE_S
    MTE1 = "mte1"          # L1 -> L0A/L0B
    MTE2 = "mte2"          # GM -> L1/UB
    MTE3 = "mte3"          # UB -> GM
    FIXPIPE = "fixpipe"    # L0C -> GM/L1 with conversion


class Scope(str, Enum):
    """Who performs the work counted in :attr:`OpInfo.flops` and :attr:`OpInfo.bytes`."""

    LANE = "lane"              # per active thread (PTX SIMT instructions)
    WARP = "warp"              # per warp (mma.sync, wmma)
    WARPGROUP = "warpgroup"    # per 4 warps (wgmma)
    INSTRUCTION = "instruction"  # per issued instruction (DaVinci: the whole repeat/copy)


# Named instruction classes, as kernel authors' checkers spell them.
FP16_FMA = "FP16_FMA"
BF16_FMA = "BF16_FMA"
FP32_FMA = "FP32_FMA"
FP64_FMA = "FP64_FMA"
INT8_DP4A = "INT8_DP4A"
TENSOR_CORE = "TENSOR_CORE"


@dataclass(frozen=True)
class OpInfo:
    """The facts about one instruction.

    ``flops`` counts floating-point operations (an FMA is 2) and ``int_ops`` integer
    multiply-accumulate work (``dp4a`` is 8), both per :attr:`scope`. ``bytes`` is the data
    moved per scope in ``space`` (``global``, ``shared``, ``local``, ``const``, ``param``, or a
    DaVinci buffer path such as ``gm->l1``). ``known`` is False for an opcode the tables do not
    describe (it then counts as ``OTHER``).
    """

    family: str
    unit: Unit
    classes: frozenset[str] = frozenset()
    in_dtype: str | None = None
    acc_dtype: str | None = None
    out_dtype: str | None = None
    flops: int = 0
    int_ops: int = 0
    scope: Scope = Scope.LANE
    bytes: int = 0
    space: str | None = None
    is_load: bool = False
    is_store: bool = False
    is_atomic: bool = False
    shape: tuple[int, int, int] | None = None
    rounding: str | None = None
    known: bool = True
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def registers(instr: Instruction, isa: str = "ptx"):
    """Registers ``instr`` reads and writes (:class:`isa.ptx.registers.RegisterUse`); the PTX
    tables only (Ascend-like instructions name buffers, not registers: empty use)."""
    from .ptx.registers import RegisterUse, registers as ptx_registers

    if isa == "ascend":
        return RegisterUse((), ())
    return ptx_registers(instr)


def written_registers(instr: Instruction, isa: str = "ptx") -> tuple[str, ...]:
    """The registers ``instr`` writes: ``registers(instr, isa).writes``, without the reads."""
    if isa == "ascend":
        return ()
    return (_PTX_WRITES or _ptx_writes())(instr)


def _ptx_writes():
    global _PTX_WRITES
    if _PTX_WRITES is None:
        from .ptx.registers import writes

        _PTX_WRITES = writes
    return _PTX_WRITES


_PTX_WRITES = None


def describe(instr: Instruction, isa: str = "ptx") -> OpInfo:
    """The :class:`OpInfo` for ``instr`` under ``isa`` (``ptx``, ``ascend`` or ``sass``)."""
    if isa == "sass":
        from .sass.semantics import describe as describe_sass

        return describe_sass(instr)
    if isa == "ascend":
        from .ascend.semantics import describe as describe_ascend

        return describe_ascend(instr)
    from .ptx.semantics import describe as describe_ptx

    return describe_ptx(instr)
