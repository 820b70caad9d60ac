"""Progress of long runs on stderr: a tqdm bar on a terminal, a few plain lines in a log.

On a terminal the bar redraws in place (tqdm). When stderr is redirected to a file or a pipe, a
redrawn bar would leave hundreds of carriage-return-joined fragments in the log, so
:class:`Progress` writes whole lines instead, and only a few: when the count of finished tasks
passes each further tenth of its total and when :data:`LINE_INTERVAL` seconds passed since the
last line (both checked at updates), plus one final line. A terminal that reports no size (a
pseudo-terminal of width 0, where tqdm draws nothing) gets the lines too.

The percentage shown is always the share of tasks finished, so it matches the count beside it;
task weights (expected costs), when given, drive only the estimated time left.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Final, TextIO

__all__ = ["Progress", "progress_callback"]

LINE_STEPS: Final = 10
"""Without a terminal, a line each time the done share passes another ``1 / LINE_STEPS``."""
LINE_INTERVAL: Final = 30.0
"""Without a terminal, also a line when this many seconds passed since the last one."""


def _clock(seconds: float) -> str:
    """Seconds as h:mm:ss."""
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal with a known width (a bar can be drawn)."""
    import os

    isatty = getattr(stream, "isatty", None)
    try:
        if not (callable(isatty) and isatty()):
            return False
    except (OSError, ValueError):  # a closed or detached stream
        return False
    fileno = getattr(stream, "fileno", None)
    try:
        return os.get_terminal_size(fileno()).columns > 0 if callable(fileno) else True
    except (OSError, ValueError):  # no file descriptor, or not one with a window size
        return True


class Progress:
    """Progress of ``count`` tasks, optionally weighted by their expected cost.

    Parameters
    ----------
    label : str
        What is counted (``"settings"``, ``"pairs"``).
    count : int
        Number of tasks.
    total_weight : float, optional
        Sum of the tasks' weights (expected costs); the share done and the ETA follow the
        weights. Default: every task weighs 1.
    enabled : bool, default True
        False shows nothing.
    stream : text stream, optional
        Where to write; default ``sys.stderr`` at construction.
    terminal : bool, optional
        Force the terminal (tqdm bar) or the plain-line mode; default ``stream.isatty()``.
    clock : callable, optional
        Seconds since some fixed point (default :func:`time.monotonic`); for tests.

    Notes
    -----
    Use it as a context manager or call :meth:`close`; the bar or the last line is finished at
    the end. Plain lines read ``"{label} {done}/{count} ({percent}%) elapsed h:mm:ss eta
    h:mm:ss"``, the bar ``"{label} |####  | {done}/{count} ({percent}%) elapsed mm:ss, eta
    h:mm:ss"``; ``percent`` is ``100 * done / count``, and the ETA follows the weights.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress("tasks", 4, stream=out, terminal=False) as bar:
    ...     for _ in range(4):
    ...         bar.update()
    >>> print(out.getvalue().splitlines()[-1].split(" elapsed")[0])
    tasks 4/4 (100%)
    """

    def __init__(
        self,
        label: str,
        count: int,
        *,
        total_weight: float | None = None,
        enabled: bool = True,
        stream: TextIO | None = None,
        terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.count = int(count)
        self.total_weight = float(self.count if total_weight is None else total_weight)
        self.done = 0
        self.done_weight = 0.0
        self.enabled = enabled and self.count > 0
        self._stream: TextIO = sys.stderr if stream is None else stream
        self._clock = clock
        self._start = clock()
        self._last_line = self._start
        self._next_step = 1
        self._closed = False
        self._last_state: tuple[int, int] | None = None
        self._bar: Any = None
        self.terminal = _is_terminal(self._stream) if terminal is None else terminal
        if not self.enabled:
            return
        if self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.count,
                desc=label,
                file=self._stream,
                bar_format=(
                    "{desc} |{bar}| {n_fmt}/{total_fmt} ({percentage:3.0f}%) elapsed {elapsed}{postfix}"
                ),
                dynamic_ncols=True,
                leave=True,
            )
            self._bar.set_postfix_str("eta ?", refresh=False)
        else:
            self._line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def share(self) -> float:
        """Share of the tasks done, in [0, 1] (the percentage shown)."""
        return min(1.0, self.done / self.count) if self.count > 0 else 1.0

    @property
    def work_share(self) -> float:
        """Share of the total weight done, in [0, 1] (what the ETA follows)."""
        if self.total_weight <= 0.0:
            return 1.0 if self.done >= self.count else 0.0
        return min(1.0, self.done_weight / self.total_weight)

    def _eta(self) -> str:
        """Estimated time left from the weights done so far, h:mm:ss (``?`` before any)."""
        if self.done_weight <= 0:
            return "?"
        left = max(0.0, self.total_weight - self.done_weight)
        return _clock((self._clock() - self._start) / self.done_weight * left)

    def _steps_done(self) -> int:
        """Whole ``1 / LINE_STEPS`` shares of the tasks done."""
        return min(LINE_STEPS, self.done * LINE_STEPS // self.count) if self.count > 0 else LINE_STEPS

    def update(self, weight: float = 1.0) -> None:
        """Record one finished task of the given weight."""
        self.done += 1
        self.done_weight += weight
        if not self.enabled or self._closed:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(f"eta {self._eta()}", refresh=False)
            self._bar.update(1)
        else:
            now = self._clock()
            if self._steps_done() >= self._next_step or now - self._last_line >= LINE_INTERVAL:
                self._line()
        if self.done >= self.count:
            self.close()

    def close(self) -> None:
        """Finish the bar (or write the final line); later calls do nothing."""
        if self._closed or not self.enabled:
            self._closed = True
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self._last_state != (self.done, self.count):
            self._line()

    def _line(self) -> None:
        """Write one plain progress line."""
        now = self._clock()
        self._stream.write(
            f"{self.label} {self.done}/{self.count} ({100 * self.share:.0f}%) "
            f"elapsed {_clock(now - self._start)} eta {self._eta()}\n"
        )
        self._stream.flush()
        self._last_line = now
        self._last_state = (self.done, self.count)
        self._next_step = self._steps_done() + 1


def progress_callback(label: str, *, stream: TextIO | None = None) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback that drives a :class:`Progress`, for APIs that report so.

    Parameters
    ----------
    label : str
        What is counted.
    stream : text stream, optional
        Where to write; default ``sys.stderr``.

    Returns
    -------
    callable
        Call it with the number of tasks done so far and the total; the display starts at the
        first call and finishes when ``done`` reaches ``total``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> show = progress_callback("pairs", stream=out)
    >>> for k in range(1, 4):
    ...     show(k, 3)
    >>> out.getvalue().count("pairs 3/3 (100%)")
    1
    """
    state: dict[str, Progress] = {}

    def show(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None or bar.count != total:
            if bar is not None:
                bar.close()
            bar = state["bar"] = Progress(label, total, stream=stream)
        while bar.done < done:
            bar.update()

    return show
