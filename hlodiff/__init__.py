"""hlodiff: what XLA did to your program, instruction by instruction."""

__version__ = "0.1.0"

from .errors import HloSyntaxError, HlodiffError, InputError  # noqa: E402
from .model import Computation, Instruction, Module, Shape  # noqa: E402
from .capture import Capture, capture  # noqa: E402
from .graph import call_graph, computation_graph, to_networkx  # noqa: E402
from .loader import load  # noqa: E402
from .parser import parse  # noqa: E402

__all__ = ["parse", "load", "capture", "Capture", "to_networkx", "computation_graph", "call_graph", "Module", "Computation", "Instruction", "Shape", "HlodiffError",
           "HloSyntaxError", "InputError", "__version__"]
