"""The analyzer: CFG, loops, dataflow, dynamic estimates, patterns and reports (``validate-kernel``)."""

import isa.dataclass_code  # noqa: F401 - isa's import installs it: this package's dataclasses take cached code
