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


def app_from_environment() -> FastAPI:
    raw = json.loads(os.environ[SETTINGS_ENV])
    raw["root"] = Path(raw["root"])
    raw["config_path"] = Path(raw["config_path"]) if raw.get("config_path") else None
    raw["allowed_hosts"] = tuple(raw.get("allowed_hosts") or ())
    return create_app(ServiceSettings(**raw))
