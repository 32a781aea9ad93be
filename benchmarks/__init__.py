"""The benchmark runner: measure arm combinations on BEIR-layout data, quality and cost.

``octomem bench`` (see :mod:`octomem.benchmarks.command`) is the entry; committed reports
live in ``benchmarks/results/<dataset>/`` and are listed in ``docs/benchmarks.md``.
Two focused measurements run on their own: :mod:`.mcp_startup` (MCP server spawn ->
first answers) and :mod:`.ingest_overhead` (ingest time by part).
"""
