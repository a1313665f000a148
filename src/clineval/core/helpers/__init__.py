"""Engine helpers with no clinical meaning, beside the core values: lazy package exports (``lazy``), YAML read
safely with line numbers (``safe_yaml``), bounded JSON line reading (``lines``), compact id indexes
(``id_index``), column-wise score storage (``columns``), secret redaction (``redaction``) and URL display
(``urls``). Like the rest of ``clineval.core`` they import nothing of clineval outside ``core``."""
