"""The text report of a timed PTX launch, in the manner of Nsight Compute's sections: speed of
light (time, what bounds it, unit utilisation), occupancy, memory, and warp state (stall reasons
in warps stalled per issued instruction). Every number is modelled."""

from __future__ import annotations


def _waves(occ: dict) -> str:
    n, tail = occ.get("wave_count"), occ.get("tail_wave")
    if n is None or tail is None:
        return "waves of CTAs per SM x SMs"
    if n == 1:
        return f"one partial wave, {100 * tail:.0f}% of the CTA slots" if tail < 1 else "one full wave"
    return f"{n} waves, the tail wave {100 * tail:.0f}% full" if tail < 1 else f"{n} full waves"


def render(tm: dict) -> str:
    from .labels import field_labels, label_of

    occ, mem = tm["occupancy"], tm["memory"]
    labels = tm.get("labels") or field_labels(tm)
    kind = lambda path: label_of(labels, path) or "modelled"  # noqa: E731
    sampled = f", sampled {tm['simulated_ctas']} of {tm['ctas']} CTAs" if tm["sampled"] else ""
    out = [f"timing ({tm['model']}{sampled}; each section says whether its figures are exact, measured or modelled):",
           f"  GPU Speed Of Light ({kind('cycles')})",
           f"    duration                {tm['cycles']:14.0f} cycles   {tm['seconds'] * 1e6:10.2f} us",
           f"    SM time / DRAM / L2     {tm['sm_cycles']:14.0f} / {tm['dram_cycles']:.0f} / {tm['l2_cycles']:.0f} cycles"
           f"  (+ {tm['launch_overhead']:.0f} launch)",
           f"    bound                   {tm['bound']}",
           f"    IPC (per SM)            {tm['ipc']:14.2f}"]
    if "issued_warp_instructions" in tm:
        out.append(f"    warp-instructions       {tm['issued_warp_instructions']:14,.0f} ({kind('issued_warp_instructions')}: "
                   + ("counted in this run)" if kind("issued_warp_instructions") == "exact"
                      else "counted in the sampled CTAs, scaled to the launch)"))
    work = tm.get("work") or {}
    if work:
        dram = (mem.get("dram_bytes_read") or 0.0) + (mem.get("dram_bytes_write") or 0.0)
        tot = sum(work.values())
        out.append("    work (launch)           " + ", ".join(f"{k} {v:.4g}" for k, v in work.items())
                   + f" OP ({kind('work')}); {tot / tm['seconds']:.4g} OP/s"
                   + (f", {tot / dram:.3g} OP per DRAM byte" if dram else "") + f" ({kind('seconds')})")
    pipes = sorted(tm["pipes"].items(), key=lambda kv: -kv[1]["utilization"])
    out.append("    pipe utilisation        " + ", ".join(f"{k} {100 * v['utilization']:.1f}%" for k, v in pipes
                                                          if v["utilization"] > 0.001))
    ok = kind("occupancy.theoretical")
    out += ["  Occupancy",
            f"    theoretical / achieved  {100 * occ['theoretical']:.1f}% ({ok}) / {100 * occ['achieved']:.1f}% "
            f"({kind('occupancy.achieved')})  (limiter: {occ['limiter']}, {occ['ctas_per_sm']} CTAs/SM)",
            f"    waves                   {occ['waves']:.2f} ({_waves(occ)}; {kind('occupancy.waves')})",
            f"    registers per thread    {occ['registers_per_thread']} ({occ['registers_source']}; "
            f"{kind('occupancy.registers_per_thread')})",
            f"  Memory ({kind('memory')})"]
    f = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    out += [f"    L1 hit rate {f(mem['l1_hit_rate'])}, L2 hit rate {f(mem['l2_hit_rate'])}, "
            f"DRAM read {mem['dram_bytes_read'] / 1e6:.3f} MB, write {mem['dram_bytes_write'] / 1e6:.3f} MB, "
            f"shared wavefronts {mem['shared_wavefronts']:.0f}"]
    sm_ = tm.get("shared_merges")
    if sm_ and sm_.get("merged_loads"):
        out.append(f"    merged shared loads     {sm_['merged_loads']} PTX loads in {sm_['vector_loads']} vector loads "
                   f"({'exact: from the SASS ptxas emitted' if sm_['source'] == 'sass' else 'modelled: no SASS here'})")
    out += [f"  Warp State (warps stalled per issued instruction; {kind('stalls')})"]
    for k, v in list(tm["stalls"].items())[:8]:
        out.append(f"    {k:<24} {v:8.2f}")
    if tm.get("predict_seconds") is not None:
        out.append(f"  (the run and the model took {tm['predict_seconds']:.2f} s here: {kind('predict_seconds')} "
                   "on this machine, not a GPU time)")
    return "\n".join(out)


__all__ = ["render"]
