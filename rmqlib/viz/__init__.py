"""Figures and widget panels for the book (plotly + ipywidgets).

The core of rmqlib never imports this package. Figure builders are pure
(inputs in, ``plotly.graph_objects.Figure`` out, no ``show()``); panels wrap
them and update one ``FigureWidget`` in place.
"""

from rmqlib.viz.colors import PALETTE, UNASSIGNED_COLOR, color_of, consumer_colors
from rmqlib.viz.figures import (
    MACHINE_ROOM_STRATEGIES, ROOMS, allocation_figure, allocation_view, imbalance_spread,
    imbalance_vs_vnodes_figure, machine_room_figure, machine_room_layout, machine_room_view,
    moved_on_scale_out, moved_queues_figure, multi_topic_figure, queue_label, queues_per_consumer_figure,
    random_assignment_imbalance, random_cids, ring_figure, ring_view, spread_queues,
)
from rmqlib.viz.panels import Panel, allocation_panel, machine_room_panel, ring_panel, update_in_place

__all__ = [
    "PALETTE", "UNASSIGNED_COLOR", "color_of", "consumer_colors",
    "MACHINE_ROOM_STRATEGIES", "ROOMS", "allocation_figure", "allocation_view", "imbalance_spread",
    "imbalance_vs_vnodes_figure", "machine_room_figure", "machine_room_layout", "machine_room_view",
    "moved_on_scale_out", "moved_queues_figure", "multi_topic_figure", "queue_label",
    "queues_per_consumer_figure", "random_assignment_imbalance", "random_cids", "ring_figure", "ring_view", "spread_queues",
    "Panel", "allocation_panel", "machine_room_panel", "ring_panel", "update_in_place",
]
