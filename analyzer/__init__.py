"""The analyzer: CFG, loops, dataflow, dynamic estimates, patterns and reports (``validate-kernel``).

(The package imports nothing itself: ``python -m analyzer.cli`` imports it before the program
pauses the collector for the imports that follow, :func:`kernlens.cli.validate_entry`. Its
modules import :mod:`isa` before defining their dataclasses, whose methods' code then comes from
:mod:`isa.dataclass_code`.)"""
