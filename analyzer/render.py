"""Reports as text (rich tables), JSON and SARIF 2.1.0.

SARIF rule ids are stable:

==========  ==========================================================
KL001       an expectation (``--expect``) does not hold
KL002       a forbidden class or opcode (``--forbid``) is used
KL003       local-memory traffic (register spills or local arrays)
KL004       a loop trip count could not be derived (estimate assumed)
KL005       a precision-mode rule is broken (``--precision-mode``)
==========  ==========================================================
"""

from __future__ import annotations

import re

from .jsontext import dumps
from .report import KernelReport

RULES = {
    "KL001": ("expectation-failed", "An instruction expectation does not hold", "error"),
    "KL002": ("forbidden-instruction", "A forbidden instruction class or opcode is used", "error"),
    "KL003": ("local-memory-spill", "The kernel moves data through local memory (register spills)", "warning"),
    "KL004": ("unknown-trip-count", "A loop trip count could not be derived; dynamic figures are estimates", "note"),
    "KL005": ("precision-violation", "An arithmetic instruction breaks the selected precision mode", "error"),
}


_WIDTH_SUFFIX = re.compile(r"_\d+$")     # LOAD_SHARED_128: a class's width-suffixed subclass


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1e6 or abs(v) < 1e-2:
            return f"{v:.3g}"
        return f"{v:,.2f}"
    if isinstance(v, int) and abs(v) >= 10000:
        return f"{v:.4g}" if abs(v) >= 1e9 else f"{v:,}"
    return str(v)


def render_text(reports: list[KernelReport], *, width: int | None = None, precision: dict | None = None) -> str:
    from .plaintext import Console, Table  # rich's output, without rich where it is not needed

    console = Console(width=width or 110)
    for r in reports:
        data = r.to_json()
        dyn = data["dynamic"]
        console.rule(f"{r.name}  ({r.path}, {data['target'] or r.module.isa})")
        summary = Table(show_header=False, box=None, pad_edge=False)
        summary.add_column(style="bold")
        summary.add_column()
        est = "" if dyn["exact"] else "≈ "        # an estimate is marked beside every number it touches
        summary.add_row("totals", dyn["totals"])
        summary.add_row("instructions", f"{len(r.instructions)} static, {est}{_fmt(dyn['instructions']['value'])} executed "
                        f"per {dyn['per']}" + ("" if dyn["exact"] else " (estimate)"))
        if not dyn["exact"]:
            summary.add_row("estimate rests on", _guesses(dyn))
        summary.add_row("loops", ", ".join(
            f"L{li['lines'][0]}-{li['lines'][1]} depth {li['depth']}: "
            + ("not entered" if li.get("entered") is False
               else f"{li['iterations']} iteration{'' if li['iterations'] == 1 else 's'}"
               + (" (average per entry)" if isinstance(li["iterations"], float) else "") if li["iterations"] is not None
               else f"iterations unknown (assumed {dyn['assumed_iterations']})")
            for li in data["loops"]) or "none")
        if data["isa"] == "ascend":      # no registers, shared or local memory; work from the .meta shapes
            _ascend_work(summary, data, est)
        else:
            regs = data["registers"]
            shared = data["shared"]
            summary.add_row("registers", f"{regs['virtual_32bit']} virtual 32-bit, {regs['predicates']} predicates")
            summary.add_row("shared memory", f"{shared['static_bytes']} B static" + (" + dynamic" if shared["dynamic"] else ""))
            summary.add_row("local memory", f"{data['local_bytes']} B, {data['spills']['static']} spill instructions")
            flops = dyn["flops"]
            summary.add_row("FLOPs", f"{'' if flops['exact'] else '≈ '}{_fmt(flops['value'])} per {dyn['per']} "
                            + ", ".join(f"{k} {_fmt(v)}" for k, v in flops["by_dtype"].items()))
            if dyn["int_ops"]["value"]:
                summary.add_row("integer ops", f"{est}{_fmt(dyn['int_ops']['value'])} "
                                + ", ".join(f"{k} {_fmt(v)}" for k, v in dyn["int_ops"]["by_dtype"].items()))
            gb = dyn["bytes"].get("global", {}).get("value", 0)
            summary.add_row("global bytes", f"{est}{_fmt(gb)} per {dyn['per']}")
            summary.add_row("intensity", f"{est}{_fmt(dyn['intensity']['value'])} FLOP/B")
        sass = data.get("sass")
        if sass and sass.get("available"):
            summary.add_row("SASS", f"{sass['instructions']} instructions; {sass['registers']} registers "
                            f"(allocated {sass['registers_allocated']}), spills {sass['spill_stores']} B stored / "
                            f"{sass['spill_loads']} B loaded, {sass['shared_bytes']} B shared (ptxas -v)")
        roof = dyn.get("roofline")
        if roof and roof.get("bound"):
            summary.add_row("roofline", f"{est}{roof['bound']}-bound on {roof['machine']}: attainable "
                            f"{_fmt((roof['attainable_ops_per_s'] or 0) / 1e12)} TFLOP/s of peak "
                            f"{_fmt((roof['peak_ops_per_s'] or 0) / 1e12)} (a model: global bytes taken as DRAM "
                            "bytes, no caches)")
        console.print(summary)
        with_sass = bool(sass and sass.get("available"))
        classes = Table(title="instruction classes" + (" (PTX and SASS)" if with_sass else ""), title_justify="left")
        classes.add_column("class")
        classes.add_column("static" if not with_sass else "PTX static", justify="right")
        classes.add_column(f"executed per {dyn['per']}", justify="right")
        if with_sass:
            classes.add_column("SASS static", justify="right")
        # width-suffixed subclasses (LOAD_SHARED_128) are folded into their class; MTE2, CUBE_S8 stay,
        # and so do the widths of shared loads and stores beside SASS (ptxas merges and splits them)
        keep = re.compile(r"(LOAD|STORE)_SHARED_\d+$") if with_sass else None
        names = list(data["classes"]) + ([c for c in sass["classes"] if c not in data["classes"]] if with_sass else [])
        main = sorted(c for c in names if not _WIDTH_SUFFIX.search(c) or (keep and keep.match(c)))
        for c in main:
            approx = "" if dyn["mix_exact"].get(c, True) else "≈ "
            row = [c, str(data["classes"].get(c, 0)), approx + _fmt(dyn["mix"].get(c, 0))]
            if with_sass:
                row.append(str(sass["classes"].get(c, 0)))
            classes.add_row(*row)
        console.print(classes)
        if not dyn["exact"]:
            console.print("≈: an estimate (see 'estimate rests on'); numbers without it are exact", markup=False)
        console.print(_opcode_table("opcodes", data["opcodes"]))
        if with_sass:
            console.print(_opcode_table("SASS opcodes", sass["opcodes"]))
        elif sass:
            console.print(f"note: SASS: {sass['note']}", markup=False)
        if r.outcomes and r.outcomes[0].parts:
            console.print(f"mix kernel '{r.mix_of}': expectations checked once, on both code segments "
                          f"({' + '.join(p.name for p, _ in r.outcomes[0].parts)})", markup=False)
        elif r.mix_of is not None and not r.outcomes:
            console.print(f"mix kernel '{r.mix_of}': its expectations are checked with its cube segment",
                          markup=False)
        if r.outcomes:
            ex = Table(title="expectations", title_justify="left")
            ex.add_column("expectation")
            ex.add_column("found", justify="right")
            ex.add_column("result")
            for o in r.outcomes:
                ex.add_row(str(o.expectation), str(o.found), "PASS" if o.holds else "FAIL")
            console.print(ex)
            for o in r.outcomes:
                if not o.holds:
                    console.print("FAIL " + o.message(r), markup=False)
        for note in dyn["notes"]:
            console.print(f"note: {note}", markup=False)
    if precision:
        for v in precision["violations"]:
            console.print(f"precision: {v['file']}:{v['line']}: {v['message']}", markup=False)
        if not precision["violations"]:
            console.print(f"precision: complies with {precision['mode']} "
                          f"({precision['checked']} arithmetic instructions checked)", markup=False)
    return console.getvalue()


def _ascend_work(summary, data: dict, est: str) -> None:
    """An Ascend-like kernel's FLOPs, global bytes and intensity for the launch, from its ``.meta``
    shapes (the per-core counts above cannot see work held in register operands)."""
    w = data.get("work_from_meta")
    if str(data["flops"].get("basis", "")).startswith("stepped"):
        _ascend_stepped_work(summary, data, w)
        return
    if w is None:
        summary.add_row("work", "unknown: no .meta header with the shapes (`kernlens run` measures the kernel)")
        return
    if w.get("int_ops") is not None:
        summary.add_row("integer ops", f"{_fmt(w['int_ops'])} per launch ({w['rule']})")
    else:
        summary.add_row("FLOPs", f"{_fmt(w['flops'])} per launch ({w['rule']})" if w.get("flops") is not None
                        else w["rule"])
    summary.add_row("global bytes", f"≥ {_fmt(w['global_bytes'])} per launch ({w['bytes_rule']})")
    if data.get("intensity") is not None:
        unit = "op/B" if w.get("int_ops") is not None else "FLOP/B"
        summary.add_row("intensity", f"≤ {_fmt(data['intensity'])} {unit} (work / the lower bound on bytes)")


def _ascend_stepped_work(summary, data: dict, meta: dict | None) -> None:
    """An Ascend-like kernel's work, exact from its stepped operands, with the ``.meta`` figure beside
    it as a cross-check."""
    f, b = data["flops"], data["bytes"]
    mark = "" if f["exact"] else "≈ "
    is_int = bool(f["int_ops"]) and not f["total"]
    ops = f["int_ops"] if is_int else f["total"]
    key = "int_ops" if is_int else "flops"
    beside = f"; .meta {meta['rule'].replace(' (.meta)', '')} = {_fmt(meta[key])}" if meta and meta.get(key) else ""
    summary.add_row("integer ops" if is_int else "FLOPs", f"{mark}{_fmt(ops)} per launch ("
                    + ("exact" if f["exact"] else "estimate") + f", from the stepped operands{beside})")
    paths = ", ".join(f"{p} {_fmt(v)}" for p, v in b.get("by_path", {}).items())
    low = f"; ≥ {_fmt(meta['global_bytes'])} by .meta, each array once" if meta else ""
    summary.add_row("global bytes", f"{'' if b['exact'] else '≈ '}{_fmt(b['global'])} per launch moved between GM and "
                    f"the cores ({paths}{low})")
    if data.get("intensity") is not None:
        unit = "op/B" if is_int else "FLOP/B"
        summary.add_row("intensity", f"{'' if f['exact'] and b['exact'] else '≈ '}{_fmt(data['intensity'])} {unit} "
                        "(work / the bytes moved)")


def _opcode_table(title: str, opcodes: dict[str, int], shown: int = 25):
    """The ``shown`` most frequent opcodes (static counts; ties by name) and how many more there are."""
    from .plaintext import Table

    t = Table(title=title, title_justify="left")
    t.add_column("opcode")
    t.add_column("static", justify="right")
    for name, n in sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))[:shown]:
        t.add_row(name, str(n))
    if len(opcodes) > shown:
        t.add_row(f"... {len(opcodes) - shown} more", "")
    return t


def _guesses(dyn: dict) -> str:
    """What an estimate rests on, in words: ``2 loops assumed 16 iterations (lines 78, 168): exact
    with --param hgemm_wmma_param_5``."""
    parts = [f"scalar program {g['assumed']} (line {g['line']})" for g in dyn["guesses"]
             if g["what"] == "the scalar program"]      # an Ascend-like kernel whose counts could not be stepped
    loops = [g for g in dyn["guesses"] if g["what"] == "loop iterations"]
    if loops:
        lines = ", ".join(str(g["line"]) for g in loops)
        parts.append(f"{len(loops)} loop(s) assumed {dyn['assumed_iterations']} iterations (line {lines})")
    for what in ("branch to an exit (bounds check)", "branch on the thread index", "branch on data"):
        hits = [g for g in dyn["guesses"] if g["what"] == what]
        if hits:
            parts.append(f"{len(hits)} {what} (line {', '.join(str(g['line']) for g in hits)}): "
                         f"{hits[0]['assumed']}")
    needs = sorted({w for g in dyn["guesses"] for w in g["exact_with"]})
    text = "; ".join(parts) or "inexact branches"
    text += f"; exact with {' '.join(needs)}" if needs else ""
    stepped_with = any(g["what"] == "the scalar program" and g["exact_with"] for g in dyn["guesses"])
    if not stepped_with and any(not g["exact_with"] for g in dyn["guesses"]):   # no parameter decides these
        text += ("; the others" if needs else "; no parameter decides these,") + " only a run counts (`kernlens run`)"
    return text


def render_json(reports: list[KernelReport], *, precision: dict | None = None) -> str:
    return render_json_kernels([r.to_json() for r in reports], precision=precision)


def render_json_kernels(kernels: list[dict], *, precision: dict | None = None) -> str:
    """The JSON document of the kernels' ``to_json()`` sections (kept without their reports)."""
    doc = {"tool": "kernlens validate-kernel", "format": 1,
           "ok": all(o["result"] == "pass" for k in kernels for o in k.get("expectations", ())) and not (precision or {}).get("violations"),
           "kernels": kernels}
    if precision is not None:
        doc["precision"] = precision
    return dumps(doc) + "\n"


def _location(path: str, line: int, kernel: str) -> dict:
    from pathlib import Path      # (SARIF output only: the text report imports no pathlib)

    uri = Path(path).as_posix() if path else "<text>"
    return {"physicalLocation": {"artifactLocation": {"uri": uri},
                                 "region": {"startLine": max(1, line)}},
            "logicalLocations": [{"name": kernel, "kind": "function"}]}


def render_sarif(reports: list[KernelReport], *, precision: dict | None = None) -> str:
    return render_sarif_results([res for r in reports for res in sarif_results(r)], precision=precision)


def sarif_results(r: KernelReport) -> list[dict]:
    """The SARIF results of one kernel's report."""
    results = []
    for o in r.outcomes:
        if o.holds:
            continue
        rule = "KL002" if o.expectation.text.startswith("--forbid") else "KL001"
        # sass: outcomes point at the PTX lines their SASS instructions came from (-lineinfo); a mix
        # kernel's, at the instructions of both its code segments
        shown = [(rr, k, rr._expectation_lines(o, [k])[0]) for rr, k in r.shown(o)]
        lines = [ln for _, _, ln in shown if ln > 0] or [r.function.span.line]
        related = []
        for n, (rr, k, ln) in enumerate(shown[1:], 1):      # the first is the result's own location
            text = rr.sass.where(k) if o.level == "sass" else rr.where(k)
            related.append({"id": n, **_location(rr.path, ln or rr.function.span.line, rr.name),
                            "message": {"text": text}})
        results.append({
            "ruleId": rule, "level": "error",
            "message": {"text": o.message(r)},
            "locations": [_location(r.path, lines[0], r.name)],
            "relatedLocations": related,
            "properties": {"kernel": o.mix or r.name, "expectation": str(o.expectation), "found": o.found,
                           "level": o.level, "instructions": "nearest" if not o.matches else "matching"},
        })
    spills = r.matching("SPILL")
    if spills:
        results.append({
            "ruleId": "KL003", "level": "warning",
            "message": {"text": f"kernel '{r.name}': {len(spills)} local-memory instructions (spills)"},
            "locations": [_location(r.path, r.instructions[spills[0]].span.line, r.name)],
        })
    for li in r.loops:
        if li.iterations is None and r.estimate.counts.get(li.header, 0) > 0:
            results.append({
                "ruleId": "KL004", "level": "note",
                "message": {"text": f"kernel '{r.name}': loop trip count unknown: {li.reason}"},
                "locations": [_location(r.path, li.first_line, r.name)],
            })
    return results


def render_sarif_results(results: list[dict], *, precision: dict | None = None) -> str:
    """The SARIF document of the kernels' results and the precision check's violations."""
    results = list(results)
    for v in (precision or {}).get("violations", ()):
        results.append({"ruleId": "KL005", "level": "error", "message": {"text": v["message"]},
                        "locations": [_location(v["file"], v["line"], v.get("kernel", ""))]})
    rules = [{"id": rid, "name": name, "shortDescription": {"text": text},
              "defaultConfiguration": {"level": level}} for rid, (name, text, level) in RULES.items()]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kernlens validate-kernel",
                                "version": "0.1.0", "rules": rules}},
            "results": results,
        }],
    }
    return dumps(doc) + "\n"
