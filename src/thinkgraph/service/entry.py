"""The uvicorn factory for `thinkgraph serve`: worker processes rebuild the settings the command
passed them in one environment variable (set by the command, read when a worker starts)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fastapi import FastAPI

from thinkgraph.service.app import create_app
from thinkgraph.service.settings import ServiceSettings

SETTINGS_ENV = "THINKGRAPH_SERVICE_SETTINGS"


def limit_blas_threads() -> None:
    """One BLAS thread per serving process. Retrieval's matrix products are small, and OpenBLAS's
    second thread spin-waited between them: one `serve` worker used 1.97 cores at 82 requests/s
    with two BLAS threads and 1.17 cores at 88 requests/s with one (the spinning core was taken from
    everything else on the machine, a local LLM server among them)."""
    import numpy  # noqa: F401 - loads OpenBLAS, which threadpoolctl finds among the loaded libraries
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def app_from_environment() -> FastAPI:
    limit_blas_threads()
    raw = json.loads(os.environ[SETTINGS_ENV])
    raw["root"] = Path(raw["root"])
    raw["config_path"] = Path(raw["config_path"]) if raw.get("config_path") else None
    raw["allowed_hosts"] = tuple(raw.get("allowed_hosts") or ())
    return create_app(ServiceSettings(**raw))
