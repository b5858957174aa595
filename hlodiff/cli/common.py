"""Shared pieces of the command line: the handler every command runs in.

It turns bad input (HlodiffError) into one line on stderr and exit status 2, an interrupt
(Ctrl-C, or SIGTERM) into exit status 130 (143) with no traceback, a closed pipe
(``hlodiff ... | head``) into a quiet exit, and makes every message and every rich output
safe for a terminal (control characters from dumps become visible escapes).
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
import warnings

import click

from ..errors import HlodiffError
from ..hlo.gcpause import freeze_after_build
from ..textsafe import guard_rich, safe_text

__all__ = ["handle_errors", "safe_text", "echo_safe", "finite_number"]


def finite_number(ctx, param, value):
    """A click callback: refuse nan and infinity (FloatRange lets them through)."""
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def echo_safe(text: str, err: bool = False) -> None:
    """``click.echo`` of text that may hold names from a dump."""
    click.echo(safe_text(text), err=err)


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that cleanup (temporary files, Graphviz) runs."""


def _exit_now(signum, frame):  # pragma: no cover - exercised by the subprocess probes
    os._exit(128 + signum)  # while importing: nothing to clean up yet


def install_early_signals() -> None:
    """When run as the ``hlodiff`` program: an interrupt while the modules load exits at
    once (status 128+signal) instead of printing an import traceback. The command's
    handler (below) puts the normal KeyboardInterrupt back before any work starts."""
    prog = os.path.basename(sys.argv[0]) if sys.argv else ""
    if prog not in ("hlodiff", "__main__.py"):
        return  # imported as a library or under a test runner: leave signals alone
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _exit_now)
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _exit_now)
    except ValueError:
        pass


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by the subprocess probes
    raise _Terminated()


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the exit-time flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


RECURSION_LIMIT = 8000


def _inputs_named() -> str:
    """The command's input paths (for a message that cannot tell which file it was)."""
    try:
        params = click.get_current_context().params
    except RuntimeError:
        return "input"
    paths = [v for v in params.values() if isinstance(v, str) and v and os.path.exists(v)]
    return ", ".join(paths) or "input"


def _stop_children() -> None:
    from ..render.svg import kill_running

    kill_running()


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings about the input (HloWarning) as one ``hlodiff: warning:`` line each; the
    first of each text only, and other libraries' warnings as Python shows them."""
    from ..errors import HloWarning

    if issubclass(category, HloWarning):
        text = safe_text(str(message), keep_newlines=False)
        if text not in _shown:
            _shown.add(text)
            click.echo(f"hlodiff: warning: {text}", err=True)
        return
    _default_showwarning(message, category, filename, lineno, file, line)


_shown: set[str] = set()
_default_showwarning = warnings.showwarning


def handle_errors(fn):
    """Run a command with the exits described in this module's docstring."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        guard_rich()
        warnings.showwarning = _show_warning
        freeze_after_build()  # a command is a short-lived process: see hlo/gcpause.py
        # XLA accepts tuples and calls nested hundreds deep; the model's recursive helpers
        # need more than Python's default 1,000 frames for them.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        try:
            if signal.getsignal(signal.SIGINT) is _exit_now:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, _exit_now):
                signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread (embedded use): leave signals alone
            pass
        try:
            value = fn(*args, **kwargs)
            sys.stdout.flush()  # a closed pipe shows here, not in click's exit-time flush
            return value
        except HlodiffError as e:
            click.echo(f"hlodiff: {safe_text(str(e), keep_newlines=False)}", err=True)
            sys.exit(e.exit_code)
        except RecursionError:
            click.echo(f"hlodiff: {safe_text(_inputs_named())}: nested too deeply to process "
                       f"(over about {RECURSION_LIMIT // 3:,} levels)", err=True)
            sys.exit(2)
        except BrokenPipeError:
            _quiet_stdout()
            sys.exit(141)
        except KeyboardInterrupt:
            _stop_children()
            click.echo("hlodiff: interrupted", err=True)
            sys.exit(130)
        except _Terminated:
            _stop_children()
            sys.exit(143)
        except MemoryError:
            click.echo("hlodiff: out of memory", err=True)
            sys.exit(2)
        finally:  # called in-process (tests, scripts): the collector as it was
            freeze_after_build(False)
            gc.unfreeze()

    return wrapper
