"""What each figure of ``result.timing`` is: ``exact``, ``measured``, ``modelled`` or ``guessed``.

``result.timing["labels"]`` maps a field's dotted path (``"memory.l2_hit_rate"``, ``"occupancy.theoretical"``)
or a section (``"pipes"``, ``"stalls"``: every field under it) to its kind; :func:`label_of` finds a
field's kind (its own entry, else its section's). The kinds:

* ``exact``: counted by the functional simulator over every CTA of the launch, or computed from such
  counts and documented H200 limits (CTAs, occupancy from ptxas's register count, the SASS's merged loads);
* ``measured``: timed on this machine (the model's own run time), not on the GPU;
* ``modelled``: the H200 timing model's output (cycles, pipes, stalls, cache hit rates, DRAM bytes), or
  an exact count scaled from the sampled CTAs to the launch;
* ``guessed``: an assumption with no model behind it (none in ``result.timing`` today).

The rule in the table below is per launch: a sampled run (``sampled``) turns the counts into modelled
figures, and registers estimated from the PTX (no ptxas here) make the occupancy modelled.
"""

from __future__ import annotations

KINDS = ("exact", "measured", "modelled", "guessed")

#: fields that are the timing model's output whatever the launch
MODELLED = ("cycles", "seconds", "sm_cycles", "dram_cycles", "l2_cycles", "atomic_cycles", "atomic_wait",
            "dram_latency", "ipc",
            "bound", "top_stall", "pipes", "stalls", "memory", "occupancy.achieved",
            # the median residual of the calibration small launches (sim/machines/h200.toml [fitted])
            "launch_overhead")
#: counts of the functional run: exact over the whole launch, modelled when scaled from a sample
COUNTED = ("issued_warp_instructions", "work")
#: the launch's geometry and what the model ran
EXACT = ("model", "label", "sampled", "simulated_ctas", "ctas", "slowest_sm")
#: wall time of the model on this machine
MEASURED = ("model_seconds", "predict_seconds")
#: occupancy from the registers per thread and Hopper's documented limits
OCCUPANCY = ("occupancy.theoretical", "occupancy.limiter", "occupancy.limiters", "occupancy.limits",
             "occupancy.ctas_per_sm", "occupancy.carveout_bytes", "occupancy.waves", "occupancy.wave_count",
             "occupancy.tail_wave", "occupancy.registers_per_thread", "occupancy.registers_source")


def field_labels(tm: dict, shared_limits: bool = False) -> dict[str, str]:
    """The ``labels`` mapping of a ``result.timing`` dict (see the module docstring); ``shared_limits``:
    shared memory is one of the occupancy's limiters (``Occupancy.limiters``)."""
    counted = "modelled" if tm.get("sampled") else "exact"
    occ = tm.get("occupancy") or {}
    # registers from ptxas -v are exact; estimated from the PTX, the occupancy built on them is a model.
    # Where shared memory limits the CTAs, the carve-out the driver picks is a rule fitted on ncu
    # (sim.timing.occupancy.driver_carveout): a model too
    occ_kind = "exact" if occ.get("registers_source") == "ptxas" and not shared_limits else "modelled"
    out = {k: "modelled" for k in MODELLED}
    out.update({k: counted for k in COUNTED})
    out.update({k: "exact" for k in EXACT})
    out.update({k: "measured" for k in MEASURED})
    out.update({k: occ_kind for k in OCCUPANCY})
    if occ.get("registers_source") == "ptxas":
        out["occupancy.registers_per_thread"] = "exact"
    sm = tm.get("shared_merges")
    if sm is not None:
        out["shared_merges"] = "exact" if sm.get("source") == "sass" else "modelled"
    return {k: out[k] for k in sorted(out)}


def label_of(labels: dict[str, str], path: str) -> str | None:
    """The kind of the field at dotted ``path``: its own entry, else the nearest section's."""
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        k = ".".join(parts[:n])
        if k in labels:
            return labels[k]
    return None


def unlabelled(tm: dict, labels: dict[str, str] | None = None) -> list[str]:
    """Dotted paths of the fields of ``tm`` that no label covers (private ``_`` fields aside)."""
    labels = tm.get("labels", {}) if labels is None else labels
    missing = []

    def walk(d: dict, prefix: str) -> None:
        for k, v in d.items():
            if k.startswith("_") or (not prefix and k == "labels"):
                continue
            p = f"{prefix}{k}"
            if label_of(labels, p) is None:
                if isinstance(v, dict) and v:
                    walk(v, p + ".")
                else:
                    missing.append(p)
    walk(tm, "")
    return missing


__all__ = ["KINDS", "field_labels", "label_of", "unlabelled"]
