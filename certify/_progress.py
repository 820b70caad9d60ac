"""Progress of long runs on stderr: a tqdm bar on a terminal, a few plain lines in a log.

On a terminal the bar redraws in place (tqdm). When stderr is redirected to a file or a pipe, a
redrawn bar would leave hundreds of carriage-return-joined fragments in the log, so
:class:`Progress` writes whole lines instead, and only a few: when the work passes each further
tenth of its total and when :data:`LINE_INTERVAL` seconds passed since the last line (both
checked at updates), plus one final line.
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
    """Whether ``stream`` is an interactive terminal."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


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
    h:mm:ss"``.

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
                total=self.total_weight,
                desc=label,
                file=self._stream,
                bar_format="{desc} |{bar}| {percentage:3.0f}% {postfix} [{elapsed}<{remaining}]",
                dynamic_ncols=True,
                leave=True,
            )
            self._bar.set_postfix_str(f"0/{self.count}", refresh=False)
        else:
            self._line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def share(self) -> float:
        """Share of the total weight done, in [0, 1]."""
        if self.total_weight <= 0.0:
            return 1.0 if self.done >= self.count else 0.0
        return min(1.0, self.done_weight / self.total_weight)

    def _steps_done(self) -> int:
        """Whole ``1 / LINE_STEPS`` shares done (exact for integer weights)."""
        if self.total_weight <= 0.0:
            return LINE_STEPS if self.done >= self.count else 0
        return min(LINE_STEPS, int(self.done_weight * LINE_STEPS // self.total_weight))

    def update(self, weight: float = 1.0) -> None:
        """Record one finished task of the given weight."""
        self.done += 1
        self.done_weight += weight
        if not self.enabled or self._closed:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self.done}/{self.count}", refresh=False)
            self._bar.update(weight)
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
        elapsed = now - self._start
        share = self.share
        left = max(0.0, self.total_weight - self.done_weight)
        eta = "?" if self.done_weight <= 0 else _clock(elapsed / self.done_weight * left)
        self._stream.write(
            f"{self.label} {self.done}/{self.count} ({100 * share:.0f}%) "
            f"elapsed {_clock(elapsed)} eta {eta}\n"
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
