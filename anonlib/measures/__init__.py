"""The measures: what a table gives away and what it is still worth, computed from class
counts (the kernel in ``anonlib.core.equivalence``, or an engine's group counts).

``profile`` (the Dataset page's picture), ``avector`` (Caballero et al.'s anonymity
vectors), ``risk`` (re-identification), ``models`` (k-anonymity's companions:
l-diversity, t-closeness, ...), ``leakage`` (Arca & Hewett), ``peers`` (Kroes et al.'s
individual privacy), ``metrics`` and ``utility`` (information loss), ``identifiers``.
They import only ``anonlib.core`` and ``anonlib.engine``.
"""
