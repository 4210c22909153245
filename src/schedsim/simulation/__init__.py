"""What users run on the snapshot: scheduling cycles (scale-up and scale-down come later)."""

from schedsim.simulation.scheduling import (
    PLACEMENTS,
    PodOutcome,
    QueueOptions,
    SchedulingPass,
    SimulationResult,
    gc_paused,
    queue_order,
    run_scheduling_cycle,
    simulate,
)

__all__ = [
    "PLACEMENTS",
    "PodOutcome",
    "QueueOptions",
    "SchedulingPass",
    "SimulationResult",
    "gc_paused",
    "queue_order",
    "run_scheduling_cycle",
    "simulate",
]
