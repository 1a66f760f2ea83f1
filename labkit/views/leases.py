"""Lesson 6's views: what a race left (the task row, the receiver's applied and refused writes,
the outcome in words), the sweep as a matrix, the LangGraph resumers and their forked
checkpoint chain, a timeline with a lane per worker (each lease a bar to its expiry, the pause
shaded), and a panel. Text for the terminal (`format_*`), HTML for a notebook (`*_html`);
matplotlib and ipywidgets are loaded only where a figure or the panel is made, so the command
line never pays for them. They read results and traces, nothing else.

The lesson imports them from here; each lives where its job is: the race in leases_race, the
outcome words in leases_words, the LangGraph race in leases_graph, the panel in lease_panel."""

from __future__ import annotations

from labkit.views.figures import figure_png
from labkit.views.lease_panel import LeasePanel
from labkit.views.leases_graph import format_graph_race, graph_race_html, show_graph_race
from labkit.views.leases_race import (
    CLAIM_COLUMNS,
    claim_html,
    claim_rows,
    claim_sweep_html,
    format_claim,
    format_claim_sweep,
    method_line,
    refusal_text,
    show_claim,
    show_claim_sweep,
    show_claim_timeline,
    timeline_figure,
)

__all__ = [
    "CLAIM_COLUMNS",
    "LeasePanel",
    "claim_html",
    "claim_rows",
    "claim_sweep_html",
    "figure_png",
    "format_claim",
    "format_claim_sweep",
    "format_graph_race",
    "graph_race_html",
    "method_line",
    "refusal_text",
    "show_claim",
    "show_claim_sweep",
    "show_claim_timeline",
    "show_graph_race",
    "timeline_figure",
]
