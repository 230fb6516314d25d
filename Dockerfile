# Railyard's image: the dashboard, the worker, the CLI, and (same Python, same packages)
# the Spark master and worker of docker-compose.yml. Slim Python, Java 17 for the Spark
# driver, a non-root user, and the same install as `make` (scripts/install.sh, here
# without the test-only packages).
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    RAILYARD_IMAGE=1 \
    PATH=/opt/railyard/.venv/bin:$PATH
# openjdk's post-install step expects the man folder slim images leave out
RUN mkdir -p /usr/share/man/man1 \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin railyard

WORKDIR /opt/railyard
COPY pyproject.toml README.md ./
COPY scripts ./scripts
COPY backend ./backend
COPY dashboard ./dashboard
COPY pages ./pages
COPY components ./components
COPY assets ./assets
COPY config ./config
COPY deploy/railyard/entrypoint.sh /usr/local/bin/railyard-entrypoint
RUN PYTHON=python3 bash scripts/install.sh \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /opt/railyard/var && chown railyard:railyard /opt/railyard/var

USER railyard
EXPOSE 8050
ENTRYPOINT ["railyard-entrypoint"]
CMD ["railyard", "serve", "--config", "/etc/railyard/railyard.yaml"]
