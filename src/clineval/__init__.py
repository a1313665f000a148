"""clineval: evaluation harness for clinical AI."""

from typing import TYPE_CHECKING

from clineval.core import __all__ as _core_all
from clineval.core.helpers.lazy import lazy_exports
from clineval.core.helpers.moved import install as _install_moved

if TYPE_CHECKING:
    from clineval.core import *  # noqa: F403

__version__ = "0.1.0"
__all__ = [*_core_all, "__version__"]
# The core values, re-exported lazily: `import clineval.cli.main` must not build every model (fast start).
__getattr__, __dir__ = lazy_exports(__name__, {"clineval.core": _core_all})
# The import paths of modules moved by the regrouping by clinical domain keep working for one release.
_install_moved()
