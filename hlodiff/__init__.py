"""hlodiff: what XLA did to your program, instruction by instruction.

The public names below are imported on first use, so that ``import hlodiff`` (and
``hlodiff --version``) stays fast: the parser, networkx and JAX load only when needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "parse": "hlodiff.hlo.parser",
    "load": "hlodiff.dumps.loader",
    "capture": "hlodiff.jaxrun.capture",
    "Capture": "hlodiff.jaxrun.capture",
    "to_networkx": "hlodiff.hlo.graph",
    "computation_graph": "hlodiff.hlo.graph",
    "call_graph": "hlodiff.hlo.graph",
    "Module": "hlodiff.hlo.model",
    "Computation": "hlodiff.hlo.model",
    "Instruction": "hlodiff.hlo.model",
    "Shape": "hlodiff.hlo.model",
    "HlodiffError": "hlodiff.errors",
    "HloSyntaxError": "hlodiff.errors",
    "InputError": "hlodiff.errors",
    "diff_modules": "hlodiff.diff",
    "diff_files": "hlodiff.diff",
    "time_step": "hlodiff.jaxrun.timestep",
    "StepTiming": "hlodiff.jaxrun.timestep",
}

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ imports lazily
    from .diff import diff_files, diff_modules
    from .jaxrun.capture import Capture, capture
    from .dumps.loader import load
    from .errors import HloSyntaxError, HlodiffError, InputError
    from .hlo.graph import call_graph, computation_graph, to_networkx
    from .hlo.model import Computation, Instruction, Module, Shape
    from .hlo.parser import parse
    from .jaxrun.timestep import StepTiming, time_step


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hlodiff' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
