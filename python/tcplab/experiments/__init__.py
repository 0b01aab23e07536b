"""Reproductions of published studies: each module runs its experiments as stored sweeps and writes
figures, tables and a report comparing the paper's numbers with tcplab's.

    tcplab reproduce mathis97 [--quick] [--out DIR]
    tcplab reproduce rfc2415 [--quick] [--out DIR]
    tcplab reproduce allman98 [--quick] [--out DIR]
    tcplab reproduce ladha04 [--quick] [--out DIR]
    tcplab reproduce seddigh01 [--quick] [--out DIR]
"""

STUDIES = ("mathis97", "rfc2415", "allman98", "ladha04", "seddigh01")
