"""Schemathesis against the service's own OpenAPI schema: requests generated from every operation's
declared parameters and bodies (valid and invalid) never get an HTTP 500.

The fast part runs a few examples per operation in CI; THINKGRAPH_ROBUSTNESS_LONG=1 runs many more."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import FakeOpenAIServer
from test_service import ALPHA, BETA, config
from thinkgraph.service.app import create_app
from thinkgraph.service.settings import ServiceSettings

LONG = bool(os.environ.get("THINKGRAPH_ROBUSTNESS_LONG"))
EXAMPLES = 60 if LONG else 6


@pytest.fixture(scope="module")
def fake_llm() -> FakeOpenAIServer:
    with FakeOpenAIServer() as server:
        server.responder = lambda payload: "Joseph Okafor [1]"
        yield server


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeOpenAIServer):  # noqa: ANN201
    from fastapi.testclient import TestClient

    root = tmp_path_factory.mktemp("fuzz-service")
    # "testserver" is the Host of ASGI test clients; allowed like any name on the allow-list
    application = create_app(ServiceSettings(root=root / "ws", config_path=config(root, fake_llm.url),
                                             max_request_bytes=200_000, allowed_hosts=("testserver",)))
    with TestClient(application) as client:  # a workspace with documents to find
        client.post("/v1/workspaces/alpha")
        client.put("/v1/workspaces/alpha/documents/rowing.txt", json={"text": ALPHA, "title": "Rowing"})
        client.put("/v1/workspaces/alpha/documents/scope.txt", json={"text": BETA})
    return application


def test_no_request_gets_a_server_error(app, figures: Callable[..., None]) -> None:  # noqa: ANN001
    """Every operation of the schema, valid and invalid data (schemathesis' strategies driven by
    hypothesis directly: its pytest plugin does not load under pytest 9)."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    requests = 0
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15

    for operation in operations:
        @given(case=operation.as_strategy(), real_workspace=st.booleans())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  derandomize=True, database=None)
        def call(case: schemathesis.Case, real_workspace: bool) -> None:
            if real_workspace and "ws" in (case.path_parameters or {}):
                case.path_parameters["ws"] = "alpha"  # reach the handlers behind the workspace check
            nonlocal requests
            requests += 1
            response = case.call()
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: "
                                f"{response.text[:200]}")

        call()
    figures("schemathesis requests against the service's OpenAPI schema", runs=requests, http_500=len(failures))
    assert not failures, "\n".join(failures[:10])
