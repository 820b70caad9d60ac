"""Tests for certify._progress: a tqdm bar on terminals, a few whole lines in logs."""

from __future__ import annotations

import io

import pytest

from certify._progress import LINE_INTERVAL, Progress, progress_callback


class _Clock:
    """A hand-driven clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    """A text stream that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


def test_log_gets_about_one_line_per_tenth_and_no_carriage_returns() -> None:
    """Without a terminal, 1,000 quick updates give a start line, ten tenths and nothing redrawn."""
    out = io.StringIO()
    with Progress("settings", 1000, stream=out, clock=_Clock()) as bar:
        for _ in range(1000):
            bar.update()
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 11
    assert lines[0].startswith("settings 0/1000 (0%)")
    counts = [line.split(" (")[0] for line in lines[1:]]
    assert counts == [f"settings {k}/1000" for k in range(100, 1001, 100)]


def test_log_line_after_interval_even_without_progress_of_a_tenth() -> None:
    """A slow run still writes a line once LINE_INTERVAL seconds passed since the last one."""
    out, clock = io.StringIO(), _Clock()
    bar = Progress("pairs", 1000, stream=out, clock=clock)
    bar.update()
    assert len(out.getvalue().splitlines()) == 1
    clock.now = LINE_INTERVAL + 1.0
    bar.update()
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("pairs 2/1000 (0%) elapsed 0:00:31 eta ")
    bar.close()
    assert out.getvalue().splitlines()[-1].startswith("pairs 2/1000")


def test_weights_drive_the_eta_and_the_percentage_matches_the_count() -> None:
    """The ETA follows the tasks' weights; the percentage shown is the count's."""
    out, clock = io.StringIO(), _Clock()
    bar = Progress("settings", 2, total_weight=10.0, stream=out, clock=clock)
    clock.now = 60.0
    bar.update(9.0)
    assert bar.work_share == pytest.approx(0.9)
    # the percentage is the share of settings done, as the count beside it says; the ETA
    # follows the expected costs (9 of 10 done in 60 s: 7 s left)
    assert bar.share == pytest.approx(0.5)
    assert out.getvalue().splitlines()[-1] == "settings 1/2 (50%) elapsed 0:01:00 eta 0:00:07"


def test_terminal_uses_a_redrawn_bar_and_finishes_it() -> None:
    """On a terminal the bar redraws in place (tqdm) and ends with the final count."""
    out = _Terminal()
    with Progress("settings", 3, stream=out) as bar:
        for _ in range(3):
            bar.update()
    text = out.getvalue()
    assert "\r" in text and "3/3" in text and "100%" in text


def test_disabled_or_empty_shows_nothing() -> None:
    """enabled=False, or nothing to count, writes nothing at all."""
    out = io.StringIO()
    with Progress("settings", 5, enabled=False, stream=out) as bar:
        bar.update()
    Progress("settings", 0, stream=out).close()
    assert out.getvalue() == ""


def test_callback_follows_done_and_total() -> None:
    """The (done, total) callback counts up to total and closes with one final line."""
    out = io.StringIO()
    show = progress_callback("pairs", stream=out)
    for done in (1, 5, 9, 10):
        show(done, 10)
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("pairs 10/10 (100%)")
    assert sum(line.startswith("pairs 10/10") for line in lines) == 1


def test_weighted_log_lines_print_percentages_of_the_count() -> None:
    """Heavy first tasks do not make 2/41 read 15%: every line's percentage is done / count."""
    out = io.StringIO()
    weights = [30.0, 30.0] + [1.0] * 39
    with Progress("settings", 41, total_weight=sum(weights), stream=out, clock=_Clock()) as bar:
        for w in weights:
            bar.update(w)
    for line in out.getvalue().splitlines():
        done, count = line.split(" ")[1].split("/")
        percent = int(line.split("(")[1].split("%")[0])
        assert percent == round(100 * int(done) / int(count)), line


def test_terminal_bar_reads_count_then_percentage() -> None:
    """The bar shows '2/20 ( 10%)' with the ETA after the elapsed time, never '10% , 2/20'."""
    out = _Terminal()
    bar = Progress("settings", 20, total_weight=100.0, stream=out, clock=_Clock())
    bar.update(50.0)
    bar.update(1.0)
    bar.close()  # the bar is drawn as it stands
    text = out.getvalue()
    assert "2/20 ( 10%) elapsed" in text
    assert "% ," not in text


def test_terminal_without_a_size_gets_lines() -> None:
    """A pseudo-terminal that reports width 0 (where tqdm draws a blank line) gets whole lines."""
    import os
    import pty
    import select

    master, slave = pty.openpty()
    try:
        with open(slave, "w", closefd=False) as stream:
            assert os.get_terminal_size(slave).columns == 0
            with Progress("pairs", 3, stream=stream, clock=_Clock()) as bar:
                for _ in range(3):
                    bar.update()
            stream.flush()
        # a pseudo-terminal hands its output over in pieces: read until nothing more comes
        chunks = []
        while select.select([master], [], [], 1.0)[0]:
            chunks.append(os.read(master, 10_000))
            if b"3/3" in b"".join(chunks) and chunks[-1].endswith(b"\n"):
                break
        text = b"".join(chunks).decode()
    finally:
        os.close(master)
        os.close(slave)
    assert "pairs 3/3 (100%)" in text and "\r" not in text.replace("\r\n", "")
