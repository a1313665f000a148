"""Rule data: hashes, versions and the lock that pins them."""

import copy
import json

import pytest

from clineval.counterfactual.exclusions import exclusion_rules
from clineval.counterfactual.ruledata import (
    canonical_json,
    lock_entries,
    read_lock,
    rewrite_rule,
    rule_hash,
    rule_key,
    ruleset_hash,
)


def test_lock_pins_every_rule() -> None:
    """A rule whose data changed needs a version bump and a new lock entry (ruledata.write_lock)."""
    assert read_lock() == lock_entries(), "rule data changed: bump the rule's version and rewrite the lock"


def test_every_rule_has_a_version_and_a_sha256() -> None:
    entries = lock_entries()
    assert {"sex@1", "race@1", "ses@1"} <= set(entries)
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in entries.values())
    assert len([k for k in entries if k.startswith("exclusion:")]) == len(exclusion_rules())


def test_hash_is_sha256_of_canonical_json_without_examples() -> None:
    import hashlib

    rule = {"id": "x.y", "version": 1, "any": ["a"], "examples": {"hit": ["a"]}}
    expected = hashlib.sha256(
        json.dumps({"any": ["a"], "id": "x.y", "version": 1}, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert rule_hash(rule) == expected
    assert canonical_json(rule) == '{"any":["a"],"id":"x.y","version":1}'
    changed_examples = dict(rule, examples={"hit": ["b"]})
    assert rule_hash(changed_examples) == rule_hash(rule)
    assert rule_hash(dict(rule, any=["b"])) != rule_hash(rule)


def test_rewrite_rule_hash_changes_with_its_words() -> None:
    data = copy.deepcopy(rewrite_rule("sex"))
    before = rule_hash(data)
    data["pairs"].append(["king", "queen"])
    assert rule_hash(data) != before


def test_rule_key_requires_a_positive_integer_version() -> None:
    assert rule_key({"id": "a", "version": 2}) == "a@2"
    with pytest.raises(ValueError):
        rule_key({"id": "a", "version": "1"})
    with pytest.raises(ValueError):
        rule_key({"version": 1})


def test_ruleset_hash_is_order_free() -> None:
    assert ruleset_hash({"a": "1", "b": "2"}) == ruleset_hash({"b": "2", "a": "1"})
