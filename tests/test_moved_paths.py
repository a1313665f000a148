"""Every import path of a module moved by the regrouping by clinical domain (issue 24) keeps working for one
release: importing it warns with a DeprecationWarning naming the new path and gives the new module's objects
(``clineval.core.helpers.moved``)."""

from __future__ import annotations

import importlib
import re
import sys
import warnings

import pytest

from clineval.core.helpers.moved import MOVED_MODULES, MOVED_NAMES


def _forget(old: str) -> None:
    """Drop the alias modules of ``old`` (and of its old submodules) so that importing it runs again."""
    for name in [n for n in sys.modules if n in MOVED_MODULES and (n == old or n.startswith(old + "."))]:
        del sys.modules[name]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_an_old_module_path_warns_and_gives_the_new_objects(old: str, new: str) -> None:
    _forget(old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"{old} is deprecated: import {new} instead")):
        module = importlib.import_module(old)
    target = importlib.import_module(new)
    public = [name for name in vars(target) if not name.startswith("__")]
    assert public, new
    for name in public:
        assert getattr(module, name) is getattr(target, name), name
    assert module.__doc__ == target.__doc__


@pytest.mark.parametrize(
    ("package", "name", "new"),
    sorted((package, name, new) for package, names in MOVED_NAMES.items() for name, new in names.items()),
)
def test_a_name_a_package_used_to_export_warns_and_is_the_same(package: str, name: str, new: str) -> None:
    module = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=re.escape(f"import {new}.{name} instead")):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_the_warning_points_at_the_importing_line() -> None:
    old = sorted(MOVED_MODULES)[0]
    _forget(old)
    code = compile(f"import {old}\n", __file__, "exec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, {})
    found = [w for w in caught if issubclass(w.category, DeprecationWarning) and old in str(w.message)]
    assert found and found[0].filename == __file__, [(w.filename, str(w.message)) for w in caught]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("clineval.core.no_such_module")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(importlib.import_module("clineval.text"), "no_such_name")  # noqa: B009
