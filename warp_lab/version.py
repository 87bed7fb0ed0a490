"""warp_lab's version (``wl.__version__``), on the ground floor: the compile cache's key
includes it (:func:`warp_lab.compiler.pipeline.toolchain_versions`), so a new warp_lab
never reuses an old one's artifacts. Kept equal to ``pyproject.toml``'s ``version``."""

__version__ = "0.1.0"
