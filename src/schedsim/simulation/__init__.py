"""What users run on the snapshot: scheduling cycles (scale-up and scale-down come later)."""

from schedsim.simulation.scheduling import (
    PodOutcome,
    SimulationResult,
    queue_order,
    run_scheduling_cycle,
    simulate,
)

__all__ = ["PodOutcome", "SimulationResult", "queue_order", "run_scheduling_cycle", "simulate"]
