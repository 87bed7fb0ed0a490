"""The notebook side of warp_lab: the ``%%warp_kernel`` magic, views, widgets, charts.

Only this package imports IPython, ipywidgets and matplotlib; everything it
shows is read from :class:`~warp_lab.compiler.artifact.CompiledKernel` and
``LaunchResult`` records.
"""
