"""Benchmarks for compaction-suite: traces to replay and the code that makes them."""
