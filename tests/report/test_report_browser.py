"""The HTML report in a real headless Chromium: numbers, click-through, escaping, speed at 50,000 samples."""
from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.judge_agreement import compare_pair
from harness.generate import GenerateConfig, run_generation
from harness.rundir import RunDir
from engine.base import SamplingParams
from tasks import get_task
from tests.judges_llm.runs import AnswerEngine, make_run
from tests.report.browser import ARTIFACTS, start_chromium, wait_for
from tests.report.fixtures import (ANSWERS, INJECTED, INJECTED_ITEM, LONG_ITEM, aime_answer_b, build_fixture,
                                   summaries)


@pytest.fixture(scope="module")
def browser():
    driver, profile = start_chromium()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(root / "xdg"))
    try:
        paths = build_fixture(root)
    finally:
        mp.undo()
    out = root / "out"
    assert main(["report", str(root / "runs"), str(root / "sweeps"), "-o", str(out)]) == 0
    return paths, out / "index.html"


def open_report(browser, index: Path) -> None:
    browser.get(index.as_uri())
    wait_for(lambda: browser.execute_script("return document.body.getAttribute('data-hr-ready')"), what="sample list")


def js(browser, script: str, *args):
    return browser.execute_script(script, *args)


def choose_run(browser, run: Path) -> None:
    js(browser, """var s = document.getElementById('hr-run');
        s.value = Array.from(s.options).find(o => o.text.startsWith(arguments[0])).value;
        s.dispatchEvent(new Event('change'));""", str(run))
    wait_for(lambda: js(browser, "return document.getElementById('hr-count').textContent").endswith("samples"),
             what="run index")


def filter_item(browser, item: str) -> None:
    from selenium.webdriver.common.by import By

    box = browser.find_element(By.ID, "hr-item")
    box.clear()
    box.send_keys("=" + item)


def open_first_row(browser) -> None:
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, "#hr-list tbody tr").click()
    wait_for(lambda: js(browser, "return document.getElementById('hr-detail').getAttribute('data-item')"), what="detail")


def open_item_sample(browser, index: Path, run: Path, item: str) -> None:
    """The first of the item's two samples in one run, opened in the viewer."""
    open_report(browser, index)
    choose_run(browser, run)
    filter_item(browser, item)
    wait_for(lambda: js(browser, "return document.querySelectorAll('#hr-list tbody tr').length") == 2, what="filter")
    open_first_row(browser)


def test_overview_numbers_match_summary_json(browser, built):
    paths, index = built
    open_report(browser, index)
    rows = js(browser, """return Array.from(document.querySelectorAll('#overview-table tbody tr')).map(tr => ({
        run: tr.dataset.run, judge: tr.dataset.judge, pass1: tr.querySelector('.pass1').dataset.pass1,
        text: tr.querySelector('.pass1').textContent.trim(), coverage: tr.querySelector('.coverage').textContent.trim(),
        counts: Object.fromEntries(Array.from(tr.querySelectorAll('[data-count]')).map(s => [s.dataset.count, +s.dataset.n]))}))""")
    expected = {(str(p), s["judge"]["id"]): s for key in ("a", "b", "hle") for p in [paths[key]]
                for s in summaries(p).values()}
    assert {(r["run"], r["judge"]) for r in rows} == set(expected)
    for r in rows:
        s = expected[(r["run"], r["judge"])]
        assert float(r["pass1"]) == pytest.approx(s["pass@1"])
        assert r["text"] == f"{100 * s['pass@1']:.1f}% ± {100 * 1.96 * s['pass@1_stderr']:.1f}%"
        assert r["counts"] == {k: s["counts"][k] for k in r["counts"]}
        assert r["coverage"] == "valid"


def test_heat_map_hle_and_sweeps_are_drawn(browser, built):
    paths, index = built
    open_report(browser, index)
    aime_cells = js(browser, "return document.querySelectorAll('#items table')[0].querySelectorAll('td.heat').length")
    assert aime_cells == len(ANSWERS) * 3  # run A x 2 judges + run B x 1
    hle = summaries(paths["hle"])
    [s] = hle.values()
    text = js(browser, "return document.getElementById('hle').textContent")
    assert f"accuracy {s['accuracy']:.1f}% ± {s['accuracy_ci95_half_width']:.1f}%" in " ".join(text.split())
    assert js(browser, "return document.querySelectorAll('#hle svg rect.bar').length") == 2  # confidences 30 and 90
    assert js(browser, "return document.querySelectorAll('#sweeps svg.chart').length") == 3  # two tags + overlay
    assert js(browser, "return document.querySelectorAll('#sweeps .sweep tbody tr').length") == 10


def test_click_through_to_a_long_sample(browser, built):
    paths, index = built
    open_item_sample(browser, index, paths["a"], LONG_ITEM)
    detail = js(browser, """var d = document.getElementById('hr-detail'); return {item: d.dataset.item,
        target: d.querySelector('.target').textContent, folded: d.querySelectorAll('details.fold').length,
        extracted: Array.from(d.querySelectorAll('.judge')).map(j => [j.dataset.judge, j.querySelector('.extracted').textContent])}""")
    assert detail["item"] == LONG_ITEM and detail["target"] == ANSWERS[LONG_ITEM]
    assert detail["folded"] >= 1  # a 4,000-character response is folded
    assert dict(detail["extracted"]) == {j: str(int(ANSWERS[LONG_ITEM])) for j, _ in detail["extracted"]}


def test_disagreement_filter_lists_exactly_the_judges_disagreements(browser, built):
    paths, index = built
    run = RunDir(paths["a"])
    judges = run.list_judges()
    pair = compare_pair(judges[0], run.read_grades(judges[0]), judges[1], run.read_grades(judges[1]))
    expected = {(d["item_id"], d["sample"]) for d in pair["disagreements"]}
    assert expected
    open_report(browser, index)
    choose_run(browser, paths["a"])
    js(browser, "var b = document.querySelector('[data-filter=disagree]'); b.click();")
    listed = wait_for(lambda: js(browser, """return Array.from(document.querySelectorAll('#hr-list tbody tr'))
        .map(tr => [tr.children[0].textContent, +tr.children[1].textContent])"""), what="filtered rows")
    assert {tuple(x) for x in listed} == expected
    open_first_row(browser)
    verdicts = js(browser, "return Array.from(document.querySelectorAll('#hr-detail .verdict')).map(v => v.textContent)")
    assert len(verdicts) == 2 and len({v.split(" ")[0] for v in verdicts}) == 2  # one right, one not


def test_injected_markup_is_shown_as_text_and_never_runs(browser, built):
    paths, index = built
    open_item_sample(browser, index, paths["a"], INJECTED_ITEM)
    shown = js(browser, """var d = document.getElementById('hr-detail'); return {
        response: d.querySelector('.response').textContent, scripts: d.querySelectorAll('script, img, b').length,
        reasons: Array.from(d.querySelectorAll('.reason')).map(r => r.textContent), pwned: window.__pwned === undefined ? null : window.__pwned}""")
    assert INJECTED in shown["response"]
    assert shown["scripts"] == 0 and shown["pwned"] is None
    assert any("<b onmouseover=alert(1)>" in r for r in shown["reasons"])
    ARTIFACTS.mkdir(exist_ok=True)
    js(browser, "document.getElementById('samples').scrollIntoView()")
    shot = ARTIFACTS / "report-samples.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def test_fifty_thousand_samples_stay_interactive(browser, built, tmp_path):
    """Time to a usable sample list, 50,000 samples vs the 40-sample fixture, same browser (ratio, not seconds)."""
    _, small_index = built
    data = tmp_path / "big.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i:05d}", "problem": f"What is {i} + 1?", "answer": str((i + 1) % 1000)}) + "\n"
                            for i in range(5000)))
    run = make_run(tmp_path / "runs" / "big", "aime", lambda r: "The answer is \\boxed{%d}." % (len(r.request_id) % 7),
                   samples=10, data=data)
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    assert main(["report", str(run), "-o", str(tmp_path / "out")]) == 0

    def ready_ms(index: Path) -> float:
        open_report(browser, index)
        return float(js(browser, "return document.body.getAttribute('data-hr-ready-ms')"))

    ready_ms(small_index)  # warm the browser's caches once
    small = min(ready_ms(small_index) for _ in range(2))
    big = ready_ms(tmp_path / "out" / "index.html")
    print(f"sample list ready: 40 samples {small:.0f} ms, 50,000 samples {big:.0f} ms")
    assert js(browser, "return document.getElementById('hr-count').textContent") == "50000 of 50000 samples"
    assert big < 15 * max(small, 50.0)
    filter_item(browser, "q04999")
    wait_for(lambda: js(browser, "return document.querySelectorAll('#hr-list tbody tr').length") == 10, what="filter")
    open_first_row(browser)
    assert js(browser, "return document.getElementById('hr-detail').dataset.item") == "q04999"


def test_paired_comparison_matches_compare(browser, built):
    from harness.paired import compare_runs

    paths, index = built
    open_report(browser, index)
    rows = js(browser, """return Array.from(document.querySelectorAll('#paired-table tbody tr'))
        .map(tr => Array.from(tr.children).map(td => td.textContent.trim()))""")
    [rules] = RunDir(paths["b"]).list_judges()  # the judge both AIME runs share
    expected = compare_runs(paths["a"], paths["b"], rules)
    assert len(rows) == 1 and rows[0][:3] == [str(paths["a"]), str(paths["b"]), rules]
    assert rows[0][6] == f"{100 * expected['difference']['diff']:+.1f} pts" and rows[0][-1] == expected["verdict"]


def rid_of(browser, run: Path) -> str:
    return js(browser, """return Array.from(document.getElementById('hr-run').options)
        .find(o => o.text.startsWith(arguments[0] + ' (')).value""", str(run))


def listed_rows(browser) -> list[list]:
    return js(browser, """return Array.from(document.querySelectorAll('#hr-list tbody tr'))
        .map(tr => [tr.children[0].textContent, tr.children[2].textContent])""")


def rows_when(browser, ok, what: str) -> list[list]:
    def check():
        rows = listed_rows(browser)
        return rows if ok(rows) else None
    return wait_for(check, what=what)


def click_heat_cell(browser, rid: str, item: str) -> None:
    from selenium.webdriver.common.by import By

    cells = browser.find_elements(By.CSS_SELECTOR, f'#items a.cell-link[data-rid="{rid}"][data-item="{item}"]')
    assert cells, f"no clickable heat-map cell for run {rid}, item {item}"
    js(browser, "arguments[0].scrollIntoView({block: 'center'})", cells[0])
    cells[0].click()


def test_heat_map_cell_switches_the_viewer_to_its_run(browser, built):
    paths, index = built
    open_report(browser, index)
    choose_run(browser, paths["a"])
    rid_a, rid_b = rid_of(browser, paths["a"]), rid_of(browser, paths["b"])
    assert js(browser, "return document.getElementById('hr-run').value") == rid_a
    click_heat_cell(browser, rid_b, LONG_ITEM)  # run B's column while the viewer shows run A
    wait_for(lambda: js(browser, "return document.getElementById('hr-run').value") == rid_b, what="viewer on run B")
    rows = rows_when(browser, lambda rows: len(rows) == 2 and all(len(r[1]) == 1 for r in rows), "run B's rows")
    assert {r[0] for r in rows} == {LONG_ITEM}  # run B has one judge, so one verdict letter per row
    open_first_row(browser)
    assert js(browser, "return document.querySelectorAll('#hr-detail .judge').length") == 1
    click_heat_cell(browser, rid_a, INJECTED_ITEM)  # and back to run A, two judges
    wait_for(lambda: js(browser, "return document.getElementById('hr-run').value") == rid_a, what="viewer on run A")
    rows = rows_when(browser, lambda rows: rows and all(len(r[1]) == 2 for r in rows), "run A's rows")
    assert {r[0] for r in rows} == {INJECTED_ITEM} and len(rows) == 2


def test_overview_fits_a_1400_px_window_with_long_names(browser, tmp_path):
    task = get_task("aime")
    model = "/srv/checkpoints/" + "DeepSeek-V3-0324-distilled-into-a-small-llama-for-evaluation-" * 3 + "Q4_1.gguf"
    run = tmp_path / "runs" / ("aime-" + "with-a-folder-name-nobody-would-shorten-" * 3)
    cfg = GenerateConfig(task=task, data_path=task.demo_data_path, out=run, samples=1, limit=None,
                         sampling=SamplingParams(max_tokens=64), progress=False)
    asyncio.run(run_generation(cfg, AnswerEngine(aime_answer_b), task.load(task.demo_data_path), model))
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    assert main(["report", str(run), "-o", str(tmp_path / "out")]) == 0
    open_report(browser, tmp_path / "out" / "index.html")
    size = js(browser, """var t = document.getElementById('overview-table').getBoundingClientRect();
        var m = document.querySelector('#overview-table tbody td:nth-child(3)');
        return {right: t.right, inner: window.innerWidth, page: document.documentElement.scrollWidth,
                model: m.textContent, lines: m.getBoundingClientRect().height / parseFloat(getComputedStyle(m).lineHeight)}""")
    assert size["inner"] <= 1400
    assert size["right"] <= size["inner"] and size["page"] <= size["inner"], size
    assert size["model"] == model and size["lines"] > 1.5  # wrapped, never cut
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-overview-long-names.png"))
