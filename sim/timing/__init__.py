"""The one timing layer of kernlens, shared by the H200 SM model and the Ascend-like core model.

Generic pieces (no GPU or NPU knowledge):

* :mod:`sim.timing.units`: :class:`Unit` (a pipe with an initiation interval and busy time) and
  :class:`Queue` (finite depth, back-pressure: a full queue makes the caller wait);
* :mod:`sim.timing.stages`: LLVM-MCA-like stages that each say when an instruction may go and why
  not earlier, and a :class:`Pipeline` that charges every wait to a cause;
* :mod:`sim.timing.stalls`: :class:`Stalls`, cycles per cause (Nsight Compute's warp-state names
  where one exists, ``queue_full:<queue>`` for back-pressure);
* :mod:`sim.timing.trace`: :class:`Slice` and the Chrome/Perfetto trace writer.

Machine-specific pieces: :mod:`sim.timing.occupancy` (Hopper CTAs per SM) and :mod:`sim.timing.sm`
(the H200 model over the PTX simulator's per-warp event streams).
"""

from .stalls import NCU_NAMES, Stalls
from .stages import Pipeline, QueueStage, Stage, UnitStage
from .trace import Slice, chrome_trace, write_chrome_trace
from .units import Queue, Unit

__all__ = ["Unit", "Queue", "Stage", "Pipeline", "UnitStage", "QueueStage", "Stalls", "NCU_NAMES", "Slice",
           "chrome_trace", "write_chrome_trace"]
