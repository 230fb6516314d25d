"""Audit rows are linked in the database and sealed outside the chain's lock: the
PostgreSQL trigger links a row with the unkeyed sha256 of 0001 (so the INSERT is the only
statement under the lock), and a ``seal``, an HMAC of the row's id and link under the
audit key, is written once the transaction has committed (backend/store/audit.py).

Rows signed with 0005's keyed chain (``seal`` NULL, ``hash`` an HMAC) still verify.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

LINK_FUNCTION = """
CREATE OR REPLACE FUNCTION railyard_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE prev text; last_id integer;
BEGIN
    IF NEW.key_id IS NULL THEN
        RAISE EXCEPTION 'audit rows are signed: key_id is required';
    END IF;
    PERFORM pg_advisory_xact_lock(7351812);
    SELECT id, hash INTO last_id, prev FROM audit ORDER BY id DESC LIMIT 1;
    NEW.id := coalesce(last_id, 0) + 1;
    NEW.prev_hash := coalesce(prev, repeat('0', 64));
    NEW.hash := encode(sha256(convert_to(NEW.prev_hash || NEW.digest, 'UTF8')), 'hex');
    NEW.seal := NULL;
    RETURN NEW;
END
$$
"""

# 0005's function, for downgrade
KEYED_FUNCTION = """
CREATE OR REPLACE FUNCTION railyard_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE prev text; last_id integer;
BEGIN
    IF NEW.key_id IS NULL THEN
        RAISE EXCEPTION 'audit rows are signed: key_id is required';
    END IF;
    PERFORM pg_advisory_xact_lock(7351812);
    SELECT id, hash INTO last_id, prev FROM audit ORDER BY id DESC LIMIT 1;
    NEW.id := coalesce(last_id, 0) + 1;
    NEW.prev_hash := coalesce(prev, repeat('0', 64));
    NEW.hash := '';
    RETURN NEW;
END
$$
"""


def upgrade() -> None:
    op.add_column("audit", sa.Column("seal", sa.String(64), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(LINK_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(KEYED_FUNCTION)
    with op.batch_alter_table("audit") as batch:
        batch.drop_column("seal")
