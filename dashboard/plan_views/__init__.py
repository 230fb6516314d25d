"""The plan UI, in one room: what the reassignments, shrinks and plan pages show of a
plan, and the callbacks they share.

- ``preview``: cards, words, before/after bars, the diff grid, the exports (builders that
  take data and ids);
- ``kinds``: each plan kind's page block, looked up by the kind's name;
- ``stored``: a stored plan's page: its facts, the actions the services allow this user,
  the execution panel and its answers (named, not positional);
- ``progress``: an execution's bar and figures;
- ``grids``: stored plans' diff grids and how a page names the plan it shows;
- ``callbacks``: page the grid, refilter it, send the JSON file, propose a draft;
- ``shared``: what the monitoring and audit pages use too (refusals, markers, the audit
  grid, the Propose row).
Pages lay these out and call the services; nothing here decides a rule.
"""

from __future__ import annotations

from dashboard.plan_views.callbacks import download, grid_rows, propose, refilter
from dashboard.plan_views.shared import REFUSALS, audit_grid, events_in, propose_row

__all__ = ["REFUSALS", "audit_grid", "download", "events_in", "grid_rows", "propose",
           "propose_row", "refilter"]
