"""Alembic environment: the store passes its open connection (see backend.store.engine)."""

from alembic import context

from backend.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
