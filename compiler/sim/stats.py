"""What a launch returns, on either engine: :class:`LaunchStats`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LaunchStats"]


@dataclass
class LaunchStats:
    """What a launch executed.  Counts follow NVIDIA's profilers: an instruction counts once per
    warp (``warp_instructions``) and once per thread (``thread_instructions``) that reaches it,
    whether or not its guard predicate is true."""

    thread_instructions: int
    warp_instructions: int
    cycles: int | None = None  # from the cycle model (xcc.sim.perf.timing); None with timing=False
    instructions_executed: dict[str, int] = field(default_factory=dict)  # mnemonic -> warp-level count
    kernel: str = ""
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    steps: int = 0  # scheduler steps (one instruction for a group of threads at one pc)
    printf_output: str = ""  # device printf output of the launch, in thread order (both engines)
    metrics: dict[str, float | int | str] = field(default_factory=dict)  # Nsight Compute names (timing.py)
    profile: object = None  # launch(..., profile=True): an xcc.profile.Profile (docs/profiles.md)
    # what re-running the cycle model needs (xcc.sim.perf.timing.TimedLaunch; None without timing), and the
    # PTX the kernel came from (an xcc.sources.Source: its name and .file table name the advisor's locations)
    timed: object = field(default=None, repr=False, compare=False)
    sources: object = field(default=None, repr=False, compare=False)

    @property
    def ipc(self) -> float | None:
        """Warp-instructions issued per active SM cycle (Nsight's ``sm__inst_executed.avg.per_cycle_active``)."""
        return self.metrics.get("sm__inst_executed.avg.per_cycle_active")

    @property
    def stall_reasons(self) -> dict[str, int]:
        """Warp-cycles per stall reason (``smsp__pcsamp_warps_issue_stalled_<reason>``), summing to the
        launch's resident warp-cycles."""
        pre = "smsp__pcsamp_warps_issue_stalled_"
        return {k[len(pre):]: v for k, v in self.metrics.items() if k.startswith(pre)}

    def report(self, advise: bool = False) -> str:
        """The statistics as Nsight Compute's text report (:func:`xcc.sim.perf.report.format_report`);
        ``advise``: its Advisor section with the estimates measured."""
        from xcc.sim.perf.report import format_report

        return format_report(self, advise)

    def advise(self) -> list:
        """The advisor's findings on this launch, most promising first: a list of :class:`xcc.Finding`
        (:func:`xcc.sim.perf.advisor.advise`; empty without the cycle model)."""
        from xcc.sim.perf.advisor import advise

        return advise(self)
