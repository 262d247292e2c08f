"""Packaging that keeps `make demo` quiet (issue #15: the demo printed setuptools' banners).

setuptools >= 70 chooses how an editable install (`pip install -e .`, the Makefile) finds the
packages: with ``package-dir = {"" = DIR}`` and every package under DIR by its name, a plain
``.pth`` file (no output); otherwise an import finder, announced by a "BuildBackendWarning: Editable
installation ... Please be careful with folders in your working directory" banner on every install
(twice in `make demo`). The banner is setuptools' output, so the test checks the condition that
selects the quiet strategy (setuptools' ``_select_strategy``/``_simple_layout``)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_editable_install_takes_the_quiet_pth_strategy():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    st = py["tool"]["setuptools"]
    assert st.get("package-dir") == {"": "."}
    # the simple layout: each top-level package is the folder of its name under the root
    for pattern in st["packages"]["find"]["include"]:
        top = pattern.rstrip("*")
        assert (ROOT / top / "__init__.py").is_file(), top
