"""A Chinese matrix as a browser draws it (issue 27): Chinese breaks between any two characters,
so an outcome's badge or a column's heading in a narrow column broke into one character a line
("重/复", "崩溃/点"); each must stay on one line. Drawn by Debian's Chromium, headless."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.studies.explorer.report import Exploration, PointResult

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs /usr/bin/chromium")

WRONG = "ledger.jsonl 有 9 行，而不崩溃的运行留下 8 行" * 3  # a long complaint: a narrow outcome


LINES = """element => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map(box => Math.round(box.top))).size;
}"""


def point(n: int | None, outcome: str) -> PointResult:
    where = None if n is None else "graphs.py:75"
    folder = f"/tmp/labkit-runs-0/explore-ycwpplc/point-{n or 0:03d}"
    return PointResult(n, "write", "ledger.jsonl", where, outcome, WRONG, folder)


def test_a_chinese_matrixs_badges_and_headings_stay_on_one_line(chinese):
    from playwright.sync_api import sync_playwright

    from labkit.views.explorer import matrix_html

    points = [point(None, "consistent"), point(4, "duplicate"), point(5, "lost")]
    html = matrix_html(Exploration("lab:linear", "graph", "/tmp/x", points, 2, 2))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 900, "height": 700})
        page.set_content(f'<body style="font-size:14px">{html}</body>')
        lines = {  # how many lines each text is drawn on: the tops of its range's boxes
            text: element.evaluate(LINES)
            for selector in ("b", "th", "tr td:first-child")
            for element in page.locator(selector).all()
            if (text := element.inner_text())
        }
        browser.close()
    assert {"重复", "丢失", "一致", "崩溃点", "无崩溃"} <= set(lines), lines
    broken = {text: n for text, n in lines.items() if n > 1}
    assert broken == {}, broken
