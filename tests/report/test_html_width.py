"""Report HTML at 1280 px: a wide status-labelled summary table is shown whole, never cut."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.report.test_html_render import CHROMIUM

MEASURE = """<script>
window.addEventListener('load', function () {
  var cut = 0, tables = document.querySelectorAll('table');
  for (var i = 0; i < tables.length; i++) {
    var box = tables[i].parentElement;
    var right = tables[i].getBoundingClientRect().right;
    if (right > window.innerWidth || box.scrollWidth > box.clientWidth) cut++;
  }
  document.title = 'TABLES ' + tables.length + ' CUT ' + cut + ' WIDTH ' + window.innerWidth;
});
</script>"""


def demo_summary_markdown() -> str:
    """The small benchmark's summary table (11 columns, the demo's own labels) as Markdown."""
    from certify.benchmark.demo import _summary
    from certify.benchmark.tables import markdown_table

    routes = ["gauss_mech", "kde_lr", "mmd_tv", "roc_oof", "certificate_learned", "certificate_oracle"]
    rows = [
        {"noise_family": fam, "epsilon_g": eps, "route": route, "value": 1.2345, "exact_epsilon": 0.5}
        for fam in ("gaussian", "laplace") for eps in (0.0, 1.0, 16.0) for route in routes
    ]
    frame = _summary(pd.DataFrame(rows))
    assert any("oracle" in c for c in frame.columns) and len(frame.columns) == 11
    return "# Small known-epsilon benchmark\n\n## Summary\n\n" + markdown_table(frame) + "\n"


def test_tables_sit_in_a_scrolling_box() -> None:
    """Every table is wrapped in a box that scrolls sideways rather than running off the page."""
    from certify.report import markdown_to_html

    page = markdown_to_html(demo_summary_markdown(), {}, "t")
    assert page.count('<div class="table"><table>') == 1 and "</table></div>" in page
    assert ".table{overflow-x:auto" in page
    assert not re.search(r"body\{[^}]*max-width", page)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it)")
def test_summary_table_fits_a_1280_pixel_window(tmp_path: Path) -> None:
    """Headless Chromium at 1280 px shows the whole summary table, oracle columns included."""
    from certify.report import markdown_to_html

    page = markdown_to_html(demo_summary_markdown(), {}, "width test")
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", MEASURE + "</body>"))
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
         "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    titles = re.findall("<title>.*?</title>", done.stdout)
    assert "<title>TABLES 1 CUT 0 WIDTH 1280</title>" in titles, titles

