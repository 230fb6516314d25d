"""The audit chain is keyed: each row records the id of the HMAC key that signed it
(backend/store/audit.py), and on PostgreSQL the trigger only numbers and links a row,
since the HMAC is computed where the key is, outside the database.

Rows from before keep key_id NULL and their unkeyed hashes, which still verify as the
log's prefix.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# Same lock and numbering as 0001's trigger; the hash is set by an UPDATE in the same
# transaction (backend.store.audit.sign_inserted). A row without a key id is refused: it
# could only be an unkeyed row written past the keys.
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
    NEW.hash := '';
    RETURN NEW;
END
$$
"""

# 0001's function, for downgrade
CHAIN_FUNCTION = """
CREATE OR REPLACE FUNCTION railyard_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE prev text; last_id integer;
BEGIN
    PERFORM pg_advisory_xact_lock(7351812);
    SELECT id, hash INTO last_id, prev FROM audit ORDER BY id DESC LIMIT 1;
    NEW.id := coalesce(last_id, 0) + 1;
    NEW.prev_hash := coalesce(prev, repeat('0', 64));
    NEW.hash := encode(sha256(convert_to(NEW.prev_hash || NEW.digest, 'UTF8')), 'hex');
    RETURN NEW;
END
$$
"""


def upgrade() -> None:
    op.add_column("audit", sa.Column("key_id", sa.String(32), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(LINK_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(CHAIN_FUNCTION)
    with op.batch_alter_table("audit") as batch:
        batch.drop_column("key_id")
