"""Simulator for the Ascend-like DaVinci AI Core assembly.

``engine`` executes kernels functionally (buffers, fractal layouts, cube, vector, movers, sync,
undefined-behaviour checks) and records :mod:`events`; ``timing`` schedules those events on
per-pipe in-order queues and prices them from the machine model; ``trace`` writes a Chrome/Perfetto
trace; ``cli`` is ``kernlens run FILE --machine davinci-a2``.
"""
