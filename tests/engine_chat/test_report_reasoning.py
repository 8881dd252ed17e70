"""The HTML report in headless Chromium shows a sample's reasoning folded (<details>) above its response."""
from __future__ import annotations

import json

from harness.cli import main
from tests.engine_chat.test_reasoning_records import ITEMS, _generate, thinking_oracle
from tests.report.browser import wait_for
from tests.report.test_report_browser import browser  # noqa: F401 - the shared headless Chromium fixture
from tests.support.scripted_server import ScriptedServer


def test_reasoning_is_folded_above_the_response(browser, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = tmp_path / "runs" / "thinking"
    with ScriptedServer(thinking_oracle("tags")) as server:
        assert _generate(server, run) == 0
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    record = next(json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()
                  if json.loads(line)["item_id"] == ITEMS[0].id)
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "runs"), "-o", str(out)]) == 0

    browser.get((out / "index.html").as_uri())
    wait_for(lambda: browser.execute_script("return document.body.getAttribute('data-hr-ready')"), what="sample list")
    browser.execute_script("document.querySelector('#hr-list tbody tr').click()")
    wait_for(lambda: browser.execute_script("return document.getElementById('hr-detail').dataset.item"), what="detail")
    shown = browser.execute_script("""var d = document.getElementById('hr-detail'), r = d.querySelector('details.reasoning');
        return {item: d.dataset.item, open: r && r.open, summary: r && r.querySelector('summary').textContent,
                text: r && r.querySelector('pre').textContent, visible: r && r.querySelector('pre').checkVisibility(),
                response: d.querySelector('.response').textContent,
                before: Array.from(d.children).indexOf(r) <
                        Array.from(d.children).findIndex(c => c.tagName === 'H4' && c.textContent === 'response')}""")
    assert shown["item"] == ITEMS[0].id and shown["open"] is False and shown["visible"] is False  # folded
    assert shown["summary"].startswith("reasoning (") and "not graded" in shown["summary"]
    assert shown["text"] == record["reasoning"] and shown["response"] == record["response"]
    assert "Try \\boxed" not in shown["response"]
    assert shown["before"] is True  # the reasoning comes above the response
