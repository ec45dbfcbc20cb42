"""The service as users run it: `thinkgraph serve` with two worker processes under concurrent
clients (no lost or torn writes), and the web page end to end in headless Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from support import FakeOpenAIServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ALPHA = ("Lena Sorensen trained with coach Joseph Okafor in Velden. Okafor founded the Velden Rowing Club in 1988. "
         "The club won the northern cup twice.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("serve")
    with FakeOpenAIServer() as llm:
        llm.responder = lambda payload: "Joseph Okafor [1]"
        config = tmp / "thinkgraph.toml"
        config.write_text(f'[embedding]\nprovider = "hashing"\ndim = 64\n[llm]\nbase_url = "{llm.url}"\n')
        port = free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "thinkgraph", "-c", str(config), "serve", "--root",
                                 str(tmp / "ws"), "--port", str(port), "--workers", "2"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{url}/v1/health", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            proc.kill()
            pytest.fail(f"server did not start: {proc.stdout.read() if proc.stdout else ''}")
        httpx.post(f"{url}/v1/workspaces/default")
        httpx.put(f"{url}/v1/workspaces/default/documents/rowing.txt", json={"text": ALPHA, "title": "Rowing"},
                  timeout=60)
        yield url
        proc.terminate()
        proc.wait(timeout=20)


def test_concurrent_upserts_and_asks_across_workers_lose_nothing(server: str) -> None:
    httpx.post(f"{server}/v1/workspaces/load")

    def client(n: int) -> list[int]:
        codes = []
        with httpx.Client(base_url=server, timeout=120) as c:
            for i in range(3):
                text = f"Report {n}-{i}: the harbour of Town{n}x{i} opened in {1900 + 10 * n + i}."
                codes.append(c.put(f"/v1/workspaces/load/documents/doc-{n}-{i}.txt", json={"text": text}).status_code)
                codes.append(c.post("/v1/workspaces/load/ask", json={"question": f"When did Town{n}x{i} open?",
                                                                      "method": "naive"}).status_code)
            codes.append(c.put(f"/v1/workspaces/load/documents/doc-{n}-0.txt",  # an update racing other writes
                               json={"text": f"Report {n}-0 (revised): Town{n}x0 opened in 1899."}).status_code)
        return codes

    with ThreadPoolExecutor(6) as pool:
        codes = [code for result in pool.map(client, range(6)) for code in result]
    assert set(codes) == {200}
    docs = {d["id"]: d for d in httpx.get(f"{server}/v1/workspaces/load/documents").json()}
    assert len(docs) == 18 and all(d["status"] == "done" for d in docs.values())
    for n in range(6):
        hits = httpx.get(f"{server}/v1/workspaces/load/search",
                         params={"q": f"Report {n}-0 (revised): Town{n}x0 opened in 1899.", "type": "chunk", "k": 1})
        assert "revised" in hits.json()[0]["text"]  # every worker sees the last write
    answer = httpx.post(f"{server}/v1/workspaces/load/ask", json={"question": "Town3x2", "method": "naive"}).json()
    assert answer["citations"] and all(c["doc_id"].startswith("doc-") for c in answer["citations"])


def _browser():  # noqa: ANN202
    if CHROMIUM is None:
        if os.environ.get("THINKGRAPH_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (THINKGRAPH_REQUIRE_BROWSER) but not installed")
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    return sync_playwright()


def _shot(page, name: str, tmp_path: Path) -> Path:  # noqa: ANN001
    """Screenshots land in THINKGRAPH_SCREENSHOTS when set (the README's pictures), else in tmp_path."""
    folder = Path(os.environ.get("THINKGRAPH_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))
    return folder / f"{name}.png"


def test_workbench_workspace_upload_ask_stream_cite_and_explore(server: str, tmp_path: Path) -> None:
    from PIL import Image

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "observatory.md").write_text("# Hill Observatory\nAda Quinn founded the Hill Observatory in 1931. "
                                        "The Morrow Refractor is its largest telescope.", encoding="utf-8")
    (docs / "rowing.txt").write_text(ALPHA, encoding="utf-8")
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server)
        page.fill("#new-workspace-name", "research")
        page.click("#new-workspace button")
        page.wait_for_function("document.getElementById('workspace').value === 'research'")
        assert page.is_visible("#tab-documents")
        page.set_input_files("#files", [str(docs / "observatory.md"), str(docs / "rowing.txt")])
        page.click("#upload-form button")
        page.wait_for_function("[...document.querySelectorAll('#documents .badge')].length === 2 && "
                               "[...document.querySelectorAll('#documents .badge')]"
                               ".every(b => b.textContent === 'done')",
                               timeout=60_000)
        _shot(page, "workbench-documents", tmp_path)
        page.click("nav#tabs button[data-tab=ask]")
        page.wait_for_function("document.querySelectorAll('#method option').length > 3")
        page.fill("#question", "Who trained Lena Sorensen?")
        page.select_option("#method", "ppr")
        page.evaluate("""() => { window.seen = []; new MutationObserver(() => window.seen.push(
            [document.querySelectorAll('#trace li').length, document.getElementById('status').textContent]))
            .observe(document.body, {subtree: true, childList: true, characterData: true}); }""")
        page.click("#ask")
        assert page.is_disabled("#ask") or page.inner_text("#status") != "running"  # no second run can start
        page.wait_for_function("document.getElementById('status').textContent === 'answered'", timeout=60_000)
        seen = page.evaluate("window.seen")
        assert any(steps >= 1 and status == "running" for steps, status in seen)  # a step before the answer
        assert page.inner_text("#answer").startswith("Joseph Okafor") and not page.is_disabled("#ask")
        assert page.locator("#citations a.citation").count() >= 1
        page.locator("#citations a.citation").first.click()
        page.wait_for_selector("#highlight")
        assert "Okafor" in page.inner_text("#highlight") and "Rowing" not in page.inner_text("#highlight")
        page.wait_for_function("window.evidenceGraphReady === true")
        assert "passage" in page.inner_text("#legend") and "entity" in page.inner_text("#legend")
        page.wait_for_timeout(300)
        graph = tmp_path / "graph.png"
        page.locator("#graph").screenshot(path=str(graph))
        _shot(page, "workbench-ask", tmp_path)
        page.route("**/ask", lambda route: route.fulfill(status=400, content_type="application/json",
                                                         body='{"error": {"message": "no such thing", "type": "x"}}'))
        page.click("#ask")
        page.wait_for_function("document.getElementById('status').textContent === 'failed'")
        assert page.inner_text("#answer") == "no such thing" and page.locator("#citations li").count() == 0
        page.unroute("**/ask")
        page.click("nav#tabs button[data-tab=explore]")
        page.fill("#search", "Joseph Okafor")
        page.click("#search-form button[type=submit]")
        page.wait_for_selector("#hits a.hit")
        page.locator("#hits a.hit").first.click()
        page.wait_for_function("window.explorerReady === true")
        page.wait_for_selector("#node a.source")
        assert "Mentioned in" in page.inner_text("#node")
        page.wait_for_timeout(300)
        _shot(page, "workbench-explorer", tmp_path)
        page.locator("#node a.source").first.click()
        page.wait_for_selector("#tab-ask:not([hidden]) #highlight")
        page.set_viewport_size({"width": 420, "height": 860})
        page.click("nav#tabs button[data-tab=ask]")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")  # reflows
        _shot(page, "workbench-phone", tmp_path)
        browser.close()
    image = Image.open(graph).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    blue = sum(count for count, (r, g, b) in colours if b > 150 and r < 110 and g < 160)  # entity nodes
    grey = sum(count for count, (r, g, b) in colours if abs(r - 154) < 25 and abs(g - 165) < 25 and abs(b - 181) < 25)
    assert image.size[1] > 300 and len(colours) > 20 and blue > 50 and grey > 10  # nodes and edges drawn


def test_the_page_and_docs_load_nothing_from_outside(server: str) -> None:
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        outside: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(server) else outside.append(r.url))
        page.goto(server)
        page.goto(f"{server}/docs")
        page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
        assert page.locator(".opblock").count() > 10
        browser.close()
    assert outside == []
