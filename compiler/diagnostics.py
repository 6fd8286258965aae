"""Errors as values with a place and a cause.

Every error xcc reports about its input is an :class:`XccError` carrying a
:class:`SourceLoc`; ``str(err)`` renders it the way compilers do::

    saxpy.ptx:12:5: error: unknown opcode 'ad.s32'
        ad.s32 %r1, %r2, %r3;
        ^

CLI exit codes follow from the class: :class:`XccError` (bad input, kernel
fault) exits 1, a usage error 2, anything else is a bug and exits 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceLoc:
    """A place in a source file: 1-based line and column."""

    file: str
    line: int
    col: int = 1
    source_line: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class XccError(Exception):
    """An error in the user's input or program, with the place it was found."""

    kind = "error"

    def __init__(self, message: str, loc: SourceLoc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.also: list[XccError] = []  # further errors found in the same run, in source order

    @property
    def errors(self) -> list[XccError]:
        """This error and the ones found with it."""
        return [self, *self.also]

    def __str__(self) -> str:
        text = self._render()
        if self.also:
            text = "\n".join([text, *(e._render() for e in self.also), f"{len(self.errors)} errors generated."])
        return text

    def _render(self) -> str:
        if self.loc is None:
            return f"{self.kind}: {self.message}"
        text = f"{self.loc}: {self.kind}: {self.message}"
        if self.loc.source_line is not None:
            line = self.loc.source_line.rstrip("\n").expandtabs(1)
            caret = " " * (max(self.loc.col, 1) - 1) + "^"
            text += f"\n{line}\n{caret}"
        return text


def raise_errors(errors: list[XccError]) -> None:
    """Raise the first of ``errors`` (its class decides the exit code), carrying the others."""
    if errors:
        first = errors[0]
        first.also = errors[1:]
        raise first


class PtxSyntaxError(XccError):
    """The PTX text does not parse."""


class PtxSemanticError(XccError):
    """The PTX parses but is not valid (undeclared name, wrong operand kind, ...)."""


class UnsupportedError(XccError):
    """Valid PTX that this version of xcc cannot compile yet; never silently dropped."""


class LinkError(XccError):
    """An unresolved or duplicate symbol across PTX modules."""


class ObjectFormatError(XccError):
    """A corrupt, truncated, tampered or unknown-version .xbin image."""


class KernelFault(XccError):
    """A kernel did something illegal at run time (out-of-bounds access, trap)."""


class LaunchInterrupted(KernelFault):
    """A launch stopped by Ctrl-C (KeyboardInterrupt), with the watchdog's report of where it was."""


class LaunchError(XccError):
    """A launch was asked for with bad arguments or an impossible configuration."""


@dataclass(frozen=True)
class Finding:
    """A performance finding of the advisor (:mod:`xcc.sim.perf.advisor`, ``LaunchStats.advise()``; ``xcc.Finding``):
    Nsight Compute's rule name, what it found, ``cycles now / cycles with the cause idealised`` (>= 1.0; 1.0 for a
    rule that only describes the launch), and the responsible lines as (PTX file, PTX line, source file or None,
    source line or None)."""

    rule: str
    message: str
    estimated_speedup: float
    locations: list = field(default_factory=list)
