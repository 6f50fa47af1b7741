"""NumPy's BLAS on one thread in the server's process.

Every product Eko runs with NumPy is small: one query against one partition's matrix (a few
milliseconds at 10,000 rows), a k-means split in the background. OpenBLAS spreads such a
product over every core, then its idle threads spin-wait for the next one: at 10,000 turns,
a posted message cost 55 ms of CPU instead of 27 for the same 27 ms of wall time, and with the
other core busy (the local model writing someone else's reply) its overhead went from 27 to
57 ms p50 (`eko bench pipeline`'s measurement, docs/benchmarks.md). One thread loses nothing
measurable and leaves the other core to the model.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def limit_blas_threads(threads: int = 1) -> None:
    """Hold the process's BLAS libraries (OpenBLAS, MKL) to `threads` threads from now on."""
    threadpool_limits(limits=threads, user_api="blas")
