"""Figures and widget panels for the book (plotly + ipywidgets).

The core of rmqlib never imports this package. Figure builders are pure
(inputs in, ``plotly.graph_objects.Figure`` out, no ``show()``); panels wrap
them and update one ``FigureWidget`` in place.
"""

from rmqlib.viz.colors import PALETTE, UNASSIGNED_COLOR, color_of, consumer_colors
from rmqlib.viz.figures import (
    MACHINE_ROOM_STRATEGIES,
    ROOMS,
    allocation_figure,
    allocation_view,
    imbalance_vs_vnodes_figure,
    machine_room_figure,
    machine_room_layout,
    machine_room_view,
    moved_queues_figure,
    multi_topic_figure,
    queue_label,
    queues_per_consumer_figure,
    ring_figure,
    ring_view,
    shared_id_view,
)
from rmqlib.viz.panels import (
    Panel,
    allocation_panel,
    machine_room_panel,
    ring_panel,
    shared_id_panel,
    update_in_place,
)

__all__ = [
    "PALETTE",
    "UNASSIGNED_COLOR",
    "color_of",
    "consumer_colors",
    "MACHINE_ROOM_STRATEGIES",
    "ROOMS",
    "allocation_figure",
    "allocation_view",
    "imbalance_vs_vnodes_figure",
    "machine_room_figure",
    "machine_room_layout",
    "machine_room_view",
    "moved_queues_figure",
    "multi_topic_figure",
    "queue_label",
    "queues_per_consumer_figure",
    "ring_figure",
    "ring_view",
    "shared_id_view",
    "Panel",
    "allocation_panel",
    "machine_room_panel",
    "ring_panel",
    "shared_id_panel",
    "update_in_place",
]

# Simulation timelines and sweeps (chapters 06-11), and the ProcessQueue step-through.
from rmqlib.viz.process_queue import (  # noqa: E402
    Step,
    ack_order,
    process_queue_panel,
    process_queue_steps,
    process_queue_view,
)
from rmqlib.viz.timeline import (  # noqa: E402
    TIMELINE_EVENTS,
    backlog_figure,
    consumed_by_queue_figure,
    dashboard_figure,
    latency_figure,
    load_figure,
    lock_timeline_figure,
    ownership_timeline_figure,
    retry_figure,
    short_queue,
    sweep_figure,
)

__all__ += [
    "TIMELINE_EVENTS",
    "backlog_figure",
    "consumed_by_queue_figure",
    "dashboard_figure",
    "latency_figure",
    "load_figure",
    "lock_timeline_figure",
    "ownership_timeline_figure",
    "retry_figure",
    "short_queue",
    "sweep_figure",
    "Step",
    "ack_order",
    "process_queue_panel",
    "process_queue_steps",
    "process_queue_view",
]

# The hand-over: one rebalance round step by step, and one queue changing owner in a run.
from rmqlib.viz.handover import (  # noqa: E402
    handover_figure,
    handover_panel,
    handover_view,
    moved_queues,
    queue_handover_figure,
)

__all__ += ["handover_figure", "handover_panel", "handover_view", "moved_queues", "queue_handover_figure"]

# Chapter 09: an orderly queue while its broker's master is away, by replica setting.
from rmqlib.viz.replicas import (  # noqa: E402
    MASTER_AWAY,
    REPLICA_SETUPS,
    replica_locks_figure,
    replica_locks_panel,
    replica_locks_view,
)

__all__ += ["MASTER_AWAY", "REPLICA_SETUPS", "replica_locks_figure", "replica_locks_panel", "replica_locks_view"]

# A sequence diagram drawn from a traced run's own log.
from rmqlib.viz.sequence import sequence_figure  # noqa: E402

__all__ += ["sequence_figure"]

# Predict, then see: the reader commits to an answer, the model gives it.
from rmqlib.viz.predict import Prediction  # noqa: E402

__all__ += ["Prediction"]

# Kernel-free slider figures for the static site. Importing this package changes no plotly setting: the site
# build (python -m rmqlib.site build) sets RMQLIB_STATIC=1 and runs use_static_renderer() in each kernel itself.
from rmqlib.viz.static import (  # noqa: E402
    allocation_frames_figure,
    frames_figure,
    handover_frames_figure,
    is_static,
    machine_room_frames_figure,
    process_queue_frames_figure,
    replica_locks_frames_figure,
    ring_frames_figure,
    shared_id_frames_figure,
    show_panel,
    use_static_renderer,
)

__all__ += [
    "allocation_frames_figure",
    "frames_figure",
    "handover_frames_figure",
    "is_static",
    "machine_room_frames_figure",
    "process_queue_frames_figure",
    "replica_locks_frames_figure",
    "ring_frames_figure",
    "shared_id_frames_figure",
    "show_panel",
    "use_static_renderer",
]

from rmqlib.viz.i18n import language, language_of, use_language  # noqa: E402

__all__ += ["language", "language_of", "use_language"]
