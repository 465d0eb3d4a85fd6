"""One status line kept under pytest's own output on a terminal, as tqdm keeps its bars.

pytest writes its dots (or ``-v`` lines) left to right on the current line; the status sits
on the line below and the cursor goes back to where pytest left it, so the dots go on as if
nothing were there. Whatever pytest is about to write past its line (a newline, or a line
that would wrap onto the status) first erases the status, so no status text is ever left
among pytest's lines; the next :meth:`StatusLine.draw` puts it back. The writes pass through
this object because it stands in for the file of pytest's terminal writer, which keeps its
own count of the current line's width: the status is written around that count, never
through it. Cursor moves are relative (down by a newline, up by one line), so the screen may
scroll under them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..output import for_terminal

if TYPE_CHECKING:
    from _pytest._io import TerminalWriter

ERASE_BELOW = "\x1b[J"  # from the cursor to the end of the screen: the status line below
UP = "\x1b[A"


class StatusLine:
    def __init__(self, writer: TerminalWriter) -> None:
        self._writer = writer
        self._file = writer._file
        self._width = writer.fullwidth
        self.shown = False
        writer._file = self  # pytest's terminal writes pass through write() below

    # -- the terminal writer's file

    def write(self, text: str) -> int:
        if self.shown and ("\n" in text or self._column() >= self._width - 1):
            self.erase()  # before pytest's text runs onto the status line
        return self._file.write(text)

    def flush(self) -> None:
        self._file.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno: the file's own
        return getattr(self._file, name)

    # -- the status

    def _column(self) -> int:
        """Where pytest's cursor is on its line (the text it wrote since its last newline,
        already counted by its writer when it hands us the text); -1 when unknown (a
        carriage return in it)."""
        line = self._writer._current_line
        if "\r" in line:
            return -1
        return len(line) if line.isascii() else self._writer.width_of_current_line

    def draw(self, text: str) -> None:
        """Show ``text`` (cut to the screen's width) on the line below pytest's cursor; not
        while pytest's own line fills the screen's width, where the cursor's place is unsure."""
        self._width = self._writer.fullwidth
        column = self._column()
        if not 0 <= column < self._width - 1:
            self.erase()
            return
        back = f"\x1b[{column}C" if column else ""
        # escaped before it is cut (an escape sequence half cut is still one), one column a character
        shown = (
            for_terminal(text, one_line=True)[: self._width - 1].encode("ascii", "replace").decode("ascii")
        )
        self._file.write(f"{ERASE_BELOW}\r\n{shown}{UP}\r{back}")
        self._file.flush()
        self.shown = True

    def erase(self) -> None:
        if self.shown:
            self._file.write(ERASE_BELOW)
            self._file.flush()
            self.shown = False

    def close(self) -> None:
        """Erase the status and hand pytest's writer its file back."""
        self.erase()
        if self._writer._file is self:
            self._writer._file = self._file
