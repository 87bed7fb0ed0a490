"""Arrays, devices and ``wl.launch`` (see :mod:`warp_lab.runtime.launch`)."""
