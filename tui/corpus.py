"""What the shared corpus knows about a kernel: its manifest entry and the H200 truth.

The corpus layout is ``corpus/manifest.json`` beside ``corpus/ptx/<stem>.<target>.ptx``; an entry
names its PTX per target (``"ptx": {"sm_80": "ptx/sgemm_naive.sm_80.ptx"}``) and its kernel
(``"entry": "sgemm_naive"``). Files outside a corpus simply have no entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class CorpusInfo:
    """The manifest entry (``entry``), the target key (``sm_80``), and the truth row if any."""

    root: Path
    entry: dict
    target: str
    truth: dict | None = None

    @property
    def expect(self) -> dict[str, str]:
        return dict(self.entry.get("expect", {}).get(self.target, {}))

    @property
    def launch(self) -> dict | None:
        return self.entry.get("launch")


@lru_cache(maxsize=16)
def _manifest(root: str) -> dict | None:
    try:
        data = json.loads((Path(root) / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "entries" in data else None


@lru_cache(maxsize=16)
def _truth(root: str, target: str) -> dict:
    arch = target.replace("_", "").rstrip("af")  # sm_90a -> sm90
    path = Path(root) / "h200" / f"truth_{arch}.json"
    try:
        rows = json.loads(path.read_text()).get("results", [])
    except (OSError, ValueError, AttributeError):
        return {}
    return {(r.get("ptx"), r.get("entry")): r for r in rows if isinstance(r, dict) and "ptx" in r}


def lookup(asm_path: str | Path | None, kernel: str) -> CorpusInfo | None:
    """The corpus entry for ``kernel`` in the file at ``asm_path``, or ``None``."""
    if not asm_path:
        return None
    p = Path(asm_path).resolve()
    for root in list(p.parents)[:3]:
        man = _manifest(str(root))
        if man is None:
            continue
        try:
            rel = p.relative_to(root).as_posix()
        except ValueError:
            continue
        for entry in man["entries"]:
            if entry.get("entry") != kernel:
                continue
            for target, ptx in (entry.get("ptx") or {}).items():
                if ptx == rel:
                    truth = _truth(str(root), target).get((rel, kernel))
                    return CorpusInfo(root, entry, target, truth)
    return None
