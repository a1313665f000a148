"""Rule data: loading the YAML files under ``clineval/counterfactual/data/``, hashing each rule, and the
lock that pins the hashes.

Every rule (the three rewrite rules ``sex``, ``race``, ``ses`` and every exclusion rule) is a mapping with an
``id`` (or ``name``) and an integer ``version``. Its **hash** is::

    sha256( json.dumps(rule_without_examples, sort_keys=True, separators=(",", ":"), ensure_ascii=False) )

over the UTF-8 bytes of that canonical JSON, i.e. over everything that can change what the rule does or why
(patterns, word lists, templates, reason, source), but not the ``examples`` block, which is test data. A
variant records ``<rule>@<version>`` and this hash, so a stored variant names the exact rule text that made
it.

``rules.lock.json`` pins ``<rule>@<version> -> sha256`` for every rule; the tests fail when a rule's data
change without a version bump and a new lock entry (``write_lock``), so a version always names one text.

File functions (``load_yaml``, ``write_lock``) are the only I/O of the package besides ``make.read_jsonl`` /
``write_jsonl`` and ``importers``' readers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

RULES_DIR = Path(__file__).resolve().parent / "data"
LOCK_FILE = RULES_DIR / "rules.lock.json"
REWRITE_RULE_FILES = {"sex": "sex.yaml", "race": "race.yaml", "ses": "ses.yaml"}
EXCLUSION_FILES = ("exclusions_sex.yaml", "exclusions_race.yaml", "exclusions_ses.yaml")
NOT_HASHED = ("examples",)


class RuleDataError(ValueError):
    """A rule file is malformed (names the file and the rule)."""


def canonical_json(data: Mapping[str, Any]) -> str:
    """The canonical JSON text of a rule: sorted keys, no whitespace, ``examples`` left out."""
    body = {k: v for k, v in data.items() if k not in NOT_HASHED}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def rule_hash(data: Mapping[str, Any]) -> str:
    """sha256 (hex) of ``canonical_json(data)`` encoded as UTF-8."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def rule_key(data: Mapping[str, Any]) -> str:
    """``<id>@<version>``: the name under which a rule is locked and recorded in provenance."""
    name = data.get("id", data.get("name"))
    if not isinstance(name, str) or not name:
        raise RuleDataError(f"rule without an id/name: {dict(data)!r:.120}")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise RuleDataError(f"rule {name!r}: version must be a positive integer, got {version!r}")
    return f"{name}@{version}"


def load_yaml(path: Path) -> Any:
    """``yaml.safe_load`` of a file (the only way rule data are read)."""
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@cache
def rewrite_rule(attribute: str) -> dict[str, Any]:
    """The rewrite rule of an attribute (``sex``, ``race``, ``ses``) as loaded from its YAML file."""
    if attribute not in REWRITE_RULE_FILES:
        raise RuleDataError(f"unknown attribute {attribute!r}; known: {sorted(REWRITE_RULE_FILES)}")
    data = load_yaml(RULES_DIR / REWRITE_RULE_FILES[attribute])
    if not isinstance(data, dict) or data.get("name") != attribute:
        raise RuleDataError(f"{REWRITE_RULE_FILES[attribute]}: expected a mapping with name: {attribute}")
    rule_key(data)
    return data


@cache
def exclusion_rules_data() -> tuple[dict[str, Any], ...]:
    """All exclusion rules, in file order (sex, race, ses), each a mapping with ``id`` and ``attribute``."""
    rules: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in EXCLUSION_FILES:
        data = load_yaml(RULES_DIR / name)
        if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
            raise RuleDataError(f"{name}: expected a mapping with a 'rules' list")
        for rule in data["rules"]:
            key = rule_key(rule)
            if rule["id"] in seen:
                raise RuleDataError(f"{name}: duplicate exclusion rule id {rule['id']!r}")
            for field in ("attribute", "kind", "reason", "source"):
                if not rule.get(field):
                    raise RuleDataError(f"{name}: rule {key} lacks {field!r}")
            seen.add(rule["id"])
            rules.append(rule)
    return tuple(rules)


def provenance(data: Mapping[str, Any]) -> dict[str, str]:
    """``{"rule": "<id>@<version>", "sha256": ...}`` of one rule."""
    return {"rule": rule_key(data), "sha256": rule_hash(data)}


def lock_entries() -> dict[str, str]:
    """``<rule>@<version> -> sha256`` of every rewrite and exclusion rule, as they are now."""
    entries = {rule_key(rewrite_rule(a)): rule_hash(rewrite_rule(a)) for a in REWRITE_RULE_FILES}
    entries.update({f"exclusion:{rule_key(r)}": rule_hash(r) for r in exclusion_rules_data()})
    return dict(sorted(entries.items()))


def read_lock(path: Path = LOCK_FILE) -> dict[str, str]:
    """The pinned hashes (empty when the lock file does not exist)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def write_lock(path: Path = LOCK_FILE) -> dict[str, str]:
    """Write ``lock_entries()`` to the lock file (after a deliberate rule change and version bump)."""
    entries = lock_entries()
    path.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return entries


def ruleset_hash(keys: Mapping[str, str]) -> str:
    """sha256 of the sorted ``key=hash`` lines: one hash naming a whole set of rules."""
    text = "\n".join(f"{k}={v}" for k, v in sorted(keys.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
