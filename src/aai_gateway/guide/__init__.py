"""Guide layer: an app descriptor rendered as the markdown operation guide an agent reads.

Pure functions, no I/O: `render_guide` builds the guide, `example_arguments` the arguments of an
example call from a tool's parameter schema.
"""

from .examples import example_arguments
from .render import render_guide

__all__ = ["example_arguments", "render_guide"]
