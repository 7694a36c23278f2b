"""Side-by-side benchmarks of mcpgen against what users would pick instead.

``python -m benchmarks`` runs every section and writes ``docs/benchmarks.md`` and
``docs/benchmarks.json``; ``--quick`` is the smoke mode the test suite runs.
"""
