"""``wp.config``: Warp's global settings that warp_lab reads.

``mode``: ``"release"`` (default) or ``"debug"``; ``"debug"`` compiles every launched
kernel with ``debug=True`` (bounds-checked array accesses, located traps), as Warp's
debug mode checks them. The others are kept for code that sets them and are not read.
"""

mode = "release"
verify_fp = False
verify_cuda = False
verbose = False
quiet = False
print_launches = False
cache_kernels = True
kernel_cache_dir = None
enable_backward = False
max_unroll = 16
