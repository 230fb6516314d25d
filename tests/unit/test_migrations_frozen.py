"""A migration that has landed is never edited: a store already at its revision would never
run the edit (Alembic upgrades by revision, not by content), so it would differ from a
new one without anyone noticing. A change to the schema is a new migration; adding one
here, with its sha256, is part of landing it. (0001 was edited once, before any release,
when the PostgreSQL audit trigger was added; a store made before that must be made anew.)"""

from __future__ import annotations

import hashlib

from backend.store import audit
from backend.store.engine import MIGRATIONS

LANDED = {
    "0001_plans.py": "6207d0c7e0997e59f165ce79416192459ca94af1059668286b032fba01fca0c1",
    "0002_executor.py": "549efd04281135a6ae6abb4dc8091359c3fb5a456cfc8ea8835b42c53ffd857c",
    "0003_throttle_sightings.py":
        "e6cad3a60adf6354b6fa0014cdc503ff44e724e5dc2e892d76e1c624599f5e1b",
    "0004_sessions.py": "c7de9a82ef92d4b3ffc1511eb4da734927ae0861a73ebac1b56976d5dd6d68d0",
    "0005_audit_keys.py": "cec66bb0c57a8e11a5bcc4d95e0c5004e632bb2497942b23c11e5f3209750b57",
    "0006_audit_seals.py": "25fd289a922a2488a2867099dd23fbb02b329787b54d3750ace226d95514e975",
    "0007_approval_rules.py":
        "3b8e1b9a8aa29ccabc26b3e6b94254af35540fd2433cef132c973ea7086a7d77",
    "0008_guards.py": "919bbd8519633adc32f54d37cad2fad2cfc35cd4ebca27ce4b42c55f515ee1c2",
    "0009_adaptive_throttle.py":
        "899f28ddfb984f853f1914fc0408e4b05bab970a8b16f8b7af5e4024c9f20085",
}


def test_landed_migrations_are_unchanged_and_every_migration_is_listed():
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((MIGRATIONS / "versions").glob("*.py"))}
    unlisted = sorted(set(files) - set(LANDED))
    assert not unlisted, f"new migrations {unlisted}: list them here with their sha256"
    changed = [name for name, digest in LANDED.items() if files.get(name) != digest]
    assert not changed, f"migrations {changed} changed after they landed: revert the " \
                        f"edit and write a new migration instead"


def test_what_0001_takes_from_the_code_is_as_it_landed():
    """0001's PostgreSQL trigger uses the audit lock key and the chain's genesis hash from
    backend.store.audit: changing either would change the migration without touching it."""
    assert audit.AUDIT_LOCK == 7_351_812
    assert audit.GENESIS == "0" * 64
