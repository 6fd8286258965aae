"""The devices Triton sees when xcc is its driver: an xcc :class:`~xcc.runtime.Device` and the CUDA
target Triton's NVIDIA backend lowers for it.

Triton keys its per-device caches (the bound-argument binder with its target) on the integer its driver
calls the current device, so each (xcc device, capability) pair selected here gets its own number, in
selection order: switching ``arch`` after kernels have launched gives fresh caches, not stale PTX.

The target is ``sm_80`` unless chosen otherwise (``activate(arch=...)`` or ``XCC_TRITON_ARCH``);
``sm_90a`` is the other capability xcc takes from Triton (``wgmma`` for ``tl.dot``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xcc.diagnostics import XccError

ENV_ENABLE = "XCC_TRITON"  # "1": xcc is Triton's driver without a call to activate()
ENV_ARCH = "XCC_TRITON_ARCH"  # the target of the environment path: sm_80 (the default) or sm_90a
ARCHES = {"sm_80": 80, "sm_90a": 90}  # the targets xcc accepts, as Triton's CUDA capability numbers
DEFAULT_ARCH = "sm_80"


@dataclass(frozen=True)
class Target:
    device: object  # xcc.runtime.Device
    capability: int  # 80 or 90: Triton's NVIDIA backend emits PTX for sm_80 or sm_90a

    @property
    def arch(self) -> str:
        return next(name for name, cap in ARCHES.items() if cap == self.capability)


_targets: list[Target] = []
_current: int | None = None
_activated = False


def parse_arch(arch: str | int) -> int:
    """The capability number of ``arch``: ``"sm_80"``, ``"sm_90a"`` (``"sm_90"`` and the integers 80 and 90
    name the same two); anything else is an :class:`XccError` listing what is accepted."""
    text = str(arch).strip().lower()
    aliases = {**ARCHES, "sm_90": 90, "80": 80, "90": 90, "sm80": 80, "sm90": 90, "sm90a": 90}
    if text not in aliases:
        raise XccError(f"xcc runs Triton kernels for {' or '.join(ARCHES)}, not '{arch}'")
    return aliases[text]


def env_enabled() -> bool:
    """Whether the environment asks for xcc as Triton's driver (``XCC_TRITON=1``)."""
    return os.environ.get(ENV_ENABLE, "").strip().lower() in ("1", "true", "yes", "on")


def enabled() -> bool:
    """Whether xcc is to be Triton's driver: :func:`select` was called, or the environment asks."""
    return _activated or env_enabled()


def select(arch: str | int, device=None) -> int:
    """Make (``device`` or xcc's default device, ``arch``) the current target and return its device number."""
    global _current, _activated
    from xcc.runtime import default_device

    wanted = Target(device or default_device(), parse_arch(arch))
    for i, t in enumerate(_targets):
        if t.device is wanted.device and t.capability == wanted.capability:
            _current = i
            break
    else:
        _targets.append(wanted)
        _current = len(_targets) - 1
    _activated = True
    return _current


def deselect() -> None:
    """Forget the activation (the devices keep their numbers)."""
    global _activated
    _activated = False


def current() -> int:
    """The current device number; on the environment path the first use selects ``XCC_TRITON_ARCH``."""
    if _current is None:
        select(os.environ.get(ENV_ARCH, DEFAULT_ARCH))
    return _current


def set_current(index: int) -> None:
    global _current
    get(index)
    _current = index


def get(index: int | None = None) -> Target:
    """The target of device number ``index`` (the current one by default)."""
    index = current() if index is None else index
    if not 0 <= index < len(_targets):
        raise XccError(f"no xcc Triton device {index} (there are {len(_targets)})")
    return _targets[index]
