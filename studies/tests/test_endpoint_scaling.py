"""studies/benchmarks/endpoint_scaling.py: the requests the workbench keeps in flight against a
scripted endpoint follow llm.concurrency (what the benchmark's throughput ratios rest on)."""

from __future__ import annotations

from studies.benchmarks import endpoint_scaling


def test_the_workbench_keeps_llm_concurrency_requests_in_flight() -> None:
    one, eight = endpoint_scaling.rows(latency=0.2, levels=[1, 8])
    assert (one.requests, one.max_in_flight) == (4, 1)
    assert (eight.requests, eight.max_in_flight) == (16, 8)
    lines = endpoint_scaling.table([one, eight])
    assert lines[2].startswith("| 1 | 4 | 1 |") and lines[3].startswith("| 8 | 16 | 8 |")
