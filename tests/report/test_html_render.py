"""Reports render in a real browser: self-contained HTML, every figure loads, statuses stay apart."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

CHECKER = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
  document.title = 'IMAGES ' + imgs.length + ' BROKEN ' + broken;
});
</script>"""


def make_evaluation_report(out: Path, seed: int) -> Path:
    """Run a tiny pre-registered audit and write its report; return the HTML path."""
    import certify as cf
    from certify.report import certificate_bars, confidence_corners, evaluation_markdown, write_report

    rng = np.random.default_rng(seed)
    labels = np.repeat(["a", "b", "c", "d"], 30)
    x = rng.normal(size=(120, 4)) * 0.1 + np.repeat(np.eye(4) * 5, 30, axis=0)
    table = cf.EmbeddingTable.from_arrays(labels, x)
    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="render-test")
    protocol.register(cf.FixedTest.fit(None, split.development, cf.Pair("a", "b"), folds=3))
    protocol.register(cf.FixedTest.fit(None, split.development, cf.Pair("c", "d"), folds=3))
    family = protocol.seal(split.reserved, ledger=cf.Ledger(out / "l.ledger")).evaluate()
    claim = cf.Claim(epsilon=0.5)
    figures = [
        ("Certified lower bounds", certificate_bars(family, claim)),
        ("Corners", confidence_corners(family)),
    ]
    md = evaluation_markdown(family, claim=claim, figures=[c for c, _ in figures])
    _, html_path = write_report(out, "evaluation", md, figures, title="render test")
    return html_path


def test_html_is_self_contained(tmp_path: Path, seed: int) -> None:
    """The HTML embeds its figures and references no external resource or script."""
    html = make_evaluation_report(tmp_path, seed).read_text()
    assert html.count("data:image/png;base64,") == 2
    assert "<script" not in html
    external = re.findall(r'(?:src|href)="(?!data:)([^"]+)"', html)
    assert external == []
    assert "## " not in html and "<h2>Certificates</h2>" in html


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it)")
def test_html_loads_in_headless_chromium_with_all_images(tmp_path: Path, seed: int) -> None:
    """Headless Chromium loads the report and every embedded figure decodes."""
    html_path = make_evaluation_report(tmp_path, seed)
    probe = tmp_path / "probe.html"
    probe.write_text(html_path.read_text().replace("</body>", CHECKER + "</body>"))
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<title>IMAGES 2 BROKEN 0</title>" in done.stdout
    assert "This is a lower confidence bound" in done.stdout


def test_markdown_tables_inline_and_escaping() -> None:
    """Pipe tables, bold and code render as HTML; raw HTML in the text is shown, not run."""
    from certify.report import markdown_to_html

    page = markdown_to_html(
        "# Title\n\nA **bold** `x < y` <b>raw</b>\n\n| pair | value |\n|---|---:|\n| a~b | **1.5** |\n",
        {}, "t <&>",
    )
    assert "<title>t &lt;&amp;&gt;</title>" in page
    assert "<h1>Title</h1>" in page
    assert "<strong>bold</strong> <code>x &lt; y</code> &lt;b&gt;raw&lt;/b&gt;" in page
    assert "<th>pair</th>" in page and "<strong>1.5</strong></td>" in page
    assert "<b>" not in page


def test_markdown_figures_inlined_and_unknown_images_dropped() -> None:
    """A known image becomes a figure with its caption as a data URI; an unknown one leaves nothing."""
    from certify.report import markdown_to_html

    text = "![Bars & more](bars.png)\n\n![Gone](missing.png)\n\nend\nline"
    page = markdown_to_html(text, {"bars.png": b"PNG"}, "t")
    assert '<figure><img alt="Bars &amp; more" src="data:image/png;base64,UE5H">' in page
    assert "<figcaption>Bars &amp; more</figcaption></figure>" in page
    assert "missing.png" not in page and "Gone" not in page and "<p></p>" not in page
    assert "<p>end<br />\nline</p>" in page
