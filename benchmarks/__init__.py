"""Throughput and solver benchmarks, side by side with peer libraries (``python -m benchmarks``)."""
