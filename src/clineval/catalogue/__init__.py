"""The task catalogue: packaged benchmarks runnable in one command (``clineval tasks``, ``clineval eval``).

``entries`` holds the catalogue (data, a registry), ``models`` the ``PROVIDER/MODEL`` specs, ``build`` turns
them into the suite a YAML file would hold. See docs/runs/catalogue.md.
"""
