"""Railyard's non-UI code: model, pure engines, adapters (sources) and services."""
