"""Seeded mutation fuzzing of the front ends and the simulator (issue #15), bounded.

Every mutated input must end in a parsed module or a located ``KernlensError`` (``file:line:col``,
the line inside the file), never another exception; a mutated kernel that parses must run to a
result or a ``KernlensError`` under a step limit, never hang or crash. The mutations are seeded
(the same cases on every run) and few (a few hundred parses, a few dozen runs); each case prints
its seed when it fails.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import isa
from isa.errors import KernlensError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SMALL = 12_000
SOURCES = sorted(p for p in list(EXAMPLES.rglob("*.ptx")) + list(EXAMPLES.rglob("*.asm")) if p.stat().st_size <= SMALL)

# integer literals a mutation puts in place of a number: edge cases of every front end's lexer
LITERALS = ["0", "08", "09", "0x", "0xg1", "0b102", "1e999", "-0", "0f7FC00000", "0d7FF0000000000000", "4294967296",
            "18446744073709551616", "-9223372036854775809", "0.5", "1.", ".5", "0f", "0x7fffffff", "00", "1_0", "1U", "-"]
PUNCT = list("{}()[];,.:%@!+-*/<>=|&^~\"'\\#$") + ["//", "/*", "*/", "\t", "\n", ""]
_NUM = re.compile(r"(?<![\w.%$])\d+(?:\.\d+)?")
_TOKEN = re.compile(r"[%$.\w]+|[^\s\w]")


def mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    kind = rng.randrange(8)
    i = rng.randrange(len(lines))
    if kind == 0:                                   # a number becomes an edge-case literal
        nums = list(_NUM.finditer(text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(LITERALS) + text[m.end():]
    if kind == 1:                                   # a token deleted
        toks = list(_TOKEN.finditer(text))
        if toks:
            m = rng.choice(toks)
            return text[:m.start()] + text[m.end():]
    if kind == 2:                                   # a token duplicated or swapped with another
        toks = list(_TOKEN.finditer(text))
        if len(toks) > 1:
            a, b = sorted(rng.sample(toks, 2), key=lambda m: m.start())
            return text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]
    if kind == 3:                                   # punctuation inserted
        pos = rng.randrange(len(text) + 1)
        return text[:pos] + rng.choice(PUNCT) + text[pos:]
    if kind == 4:                                   # a line deleted or duplicated
        return "\n".join(lines[:i] + ([lines[i]] * rng.choice([0, 2])) + lines[i + 1:])
    if kind == 5:                                   # cut short
        return text[: rng.randrange(len(text) + 1)]
    if kind == 6:                                   # two lines swapped
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    # a byte of odd text
    pos = rng.randrange(len(text) + 1)
    return text[:pos] + rng.choice(["\x00", "\u00e9", "\r", "\x7f", "\ufeff", " " * 300]) + text[pos:]


def check_located(exc: KernlensError, text: str, name: str) -> None:
    rendered = exc.render()
    assert "Traceback" not in rendered
    span = exc.span
    if span is not None and span.line:
        assert span.file == name, rendered
        assert 1 <= span.line <= text.count("\n") + 2, rendered
        assert rendered.startswith(f"{name}:{span.line}:"), rendered


CASES = 400


@pytest.mark.parametrize("chunk", range(4))
def test_mutated_inputs_parse_or_give_a_located_error(chunk):
    assert SOURCES, "no bundled examples"
    texts = [(p, p.read_text()) for p in SOURCES]
    per = CASES // 4
    for case in range(chunk * per, (chunk + 1) * per):
        rng = random.Random(case)
        path, text = texts[case % len(texts)]
        for _ in range(rng.choice([1, 1, 2, 3])):
            text = mutate(text, rng)
        name = path.name
        try:
            module = isa.loads(text, name, isa="ascend" if path.suffix == ".asm" else "ptx")
        except KernlensError as exc:
            check_located(exc, text, name)
            continue
        except RecursionError:
            continue                                  # nesting deeper than Python's stack: not a lexer bug
        except Exception as exc:                      # pragma: no cover - what the fuzzer is for
            raise AssertionError(f"case {case} ({name}): {type(exc).__name__}: {exc}") from exc
        try:
            module.emit()
        except KernlensError:
            pass
        except Exception as exc:                      # pragma: no cover
            raise AssertionError(f"case {case} ({name}): emit: {type(exc).__name__}: {exc}") from exc


def test_the_08_literal_is_located_with_a_caret(tmp_path, capsys):
    from kernlens.cli import main

    path = tmp_path / "k.ptx"
    path.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                    " .reg .b32 %r<2>;\n mov.u32 %r1, 08;\n ret;\n}\n")
    assert main(["fmt", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:7:") and "error" in err and "internal error" not in err
    assert "^" in err.splitlines()[2]


# -- the simulator ----------------------------------------------------------------------------

RUNS = ["reduce_sum", "hfma2_axpy", "dot_dp4a", "oob_write", "missing_sync", "uninit_smem"]
_OPS = {"lt": "ge", "ge": "lt", "gt": "le", "le": "gt", "eq": "ne", "ne": "eq"}
_REG = re.compile(r"%(r|rd|f|p|h|hh)(\d+)\b")


def mutate_semantics(text: str, rng: random.Random) -> str:
    """A change that keeps the kernel parseable more often than not: a compare flipped, a
    register renamed to another of its kind, an immediate changed, an instruction dropped."""
    kind = rng.randrange(4)
    if kind == 0:
        ms = list(re.finditer(r"setp\.(lt|ge|gt|le|eq|ne)\b", text))
        if ms:
            m = rng.choice(ms)
            return text[:m.start(1)] + _OPS[m.group(1)] + text[m.end(1):]
    if kind == 1:
        ms = list(_REG.finditer(text))
        if ms:
            m = rng.choice(ms)
            same = [x for x in ms if x.group(1) == m.group(1)]
            other = rng.choice(same).group(2)
            return text[:m.start(2)] + other + text[m.end(2):]
    if kind == 2:
        ms = list(re.finditer(r",\s*(-?\d+);", text))
        if ms:
            m = rng.choice(ms)
            return text[:m.start(1)] + str(rng.choice([0, 1, -1, 2, 7, 31, 32, 255, 4096, -4096])) + text[m.end(1):]
    lines = text.split("\n")
    body = [i for i, s in enumerate(lines) if s.strip().endswith(";") and not s.strip().startswith(".")]
    if body:
        del lines[rng.choice(body)]
    return "\n".join(lines)


@pytest.mark.parametrize("entry", RUNS)
def test_mutated_kernels_run_or_fail_cleanly_under_a_step_limit(entry):
    import json

    from sim import launch as L

    manifest = json.loads((EXAMPLES / "manifest.json").read_text())
    (e,) = [x for x in manifest["entries"] if x["name"] == entry]
    rel = e["ptx"].get("sm_90") or next(iter(e["ptx"].values()))
    base = (EXAMPLES / rel).read_text()
    spec = L.spec_from_entry(e)
    for case in range(6):
        rng = random.Random(f"{entry}-{case}")
        text = base
        for _ in range(rng.choice([1, 2])):
            text = mutate_semantics(text, rng)
        try:
            module = isa.loads(text, Path(rel).name)
            ex = L.execute(module, spec, e["entry"], seed=case, max_steps=20_000)
        except KernlensError as exc:
            check_located(exc, text, Path(rel).name) if exc.span and exc.span.file == Path(rel).name else None
            continue
        except Exception as exc:                      # pragma: no cover - what the fuzzer is for
            raise AssertionError(f"{entry} case {case}: {type(exc).__name__}: {exc}") from exc
        assert ex.outputs is not None and isinstance(ex.problems, tuple)


def test_found_by_the_fuzzer_ascend_leading_zero_literal_is_located():
    text = ".kernel k .vector (.gm .f16 %x[09])\n{\n}\n"
    with pytest.raises(KernlensError) as info:
        isa.loads(text, "k.asm", isa="ascend")
    assert info.value.render().startswith("k.asm:1:") and "09" in str(info.value)


def test_found_by_the_fuzzer_an_address_near_2_64_is_out_of_bounds_not_an_index_error():
    import numpy as np

    from sim.ptx.memory import Region

    r = Region("shared", 64, 2)
    addr = np.array([0, 60, 61, 2**64 - 2, 2**64 - 1], dtype=np.uint64)
    _, ok = r.check(np.zeros(5, np.int64), addr, 4)
    assert ok.tolist() == [True, True, False, False, False]
