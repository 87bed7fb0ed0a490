"""warp_lab's benchmarks: ``python -m benchmarks`` runs them all (see :mod:`benchmarks.run_all`).

Peers (NVRTC, Numba CUDA, Warp) are the ``bench`` extra: ``pip install -e .[bench]``.
"""
