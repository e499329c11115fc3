"""The transformations: what changes a table so that it meets a target, and the searches
that choose the change.

``generalization`` (full-domain generalization: one space of generalizations, the proven
least-loss search and Arca & Hewett's), ``frontier`` (Xia et al.'s policy lattice and
risk-utility frontier), ``geo`` (Croft et al.'s regional aggregation), ``schedule`` (Caballero et
al.'s screening schedules), ``suppression`` (local suppression), ``microaggregation``
(MDAV), ``coding`` (top and bottom coding), ``synthetic``; the papers' experiments in
``anonymize_experiments`` and ``schedule_experiments``. They import the measures and
``anonlib.core``, never the workflow above them.
"""
