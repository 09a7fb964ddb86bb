"""Guide layer: an app descriptor rendered as the markdown operation guide an agent reads.

Pure functions, no I/O: `render_guide` builds the guide (an index for an app too big for one),
`render_operations` the full details of chosen operations, `example_arguments` the arguments of
an example call from a tool's parameter schema.
"""

from .examples import example_arguments
from .index import one_line
from .options import CHARS_PER_TOKEN, GUIDE_MAX_CHARS, GUIDE_MAX_TOKENS, GuideOptions
from .render import guide_with, render_guide, render_operations

__all__ = [
    "CHARS_PER_TOKEN",
    "GUIDE_MAX_CHARS",
    "GUIDE_MAX_TOKENS",
    "GuideOptions",
    "example_arguments",
    "guide_with",
    "one_line",
    "render_guide",
    "render_operations",
]
