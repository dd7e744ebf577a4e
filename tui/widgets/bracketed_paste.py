"""Bracketed pastes kept whole: the pasted text arrives as one ``events.Paste``, never as keys.

The terminal wraps pasted text in ``ESC [200~`` ... ``ESC [201~``. Textual 8.2.8's input parser
(``textual._xterm_parser.XTermParser``) reads a paste one character at a time, and an ESC inside
the pasted text (coloured output copied from a terminal: ``ESC [31m``) starts its escape-sequence
reader: everything from that ESC up to the next ESC is posted as key presses (the ESC itself as
``^``) *before* the paste, and the paste keeps only the text before the first ESC. A newline or
carriage return in that stretch arrives as Ctrl+J or Enter, which sends a half-pasted prompt.

``PasteSafeParser`` wraps the stock parser: it cuts the pastes out of the raw input itself and
passes everything else on unchanged. ``PasteSafeLinuxDriver`` is Textual's Linux driver reading
the terminal through it, and ``paste_safe_driver_class(base)`` returns it in place of
``LinuxDriver`` (any other driver is returned as it is), for ``App.get_driver_class``.
Cleaning the pasted text (escape sequences, control characters) is the receiving widget's job:
see ``tui.widgets.prompt_input.clean_paste``.
"""

from __future__ import annotations

import codecs
import os
import selectors
import time
from typing import Iterable

from textual import constants, events
from textual._xterm_parser import XTermParser
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

#: What the terminal sends before and after pasted text.
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def _marker_start_at_end(text: str, marker: str) -> int:
    """Return the length of the longest tail of ``text`` that is a proper head of ``marker``
    (a marker cut in two by a read), 0 when there is none."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


class PasteSafeParser:
    """Terminal input parser: bracketed pastes become one ``events.Paste``, the rest goes to the
    stock ``XTermParser`` (keys, mouse, focus, resize reports).

    ``feed(data)`` takes decoded terminal input (a str, any chunk size) and returns the messages
    it completes; ``tick()`` must be called regularly (the driver does, at least every 0.1 s) and
    returns messages completed by time-outs. The pasted text is passed on as it was sent, NUL
    characters removed (as Textual does). A paste start marker split between two reads is held
    back for at most ``constants.ESCAPE_DELAY`` seconds, but a lone trailing ESC never is (so the
    Esc key is not slowed down); a start marker split right after its ESC is left to the stock
    parser.
    """

    def __init__(self, inner: XTermParser | None = None) -> None:
        self.inner = inner if inner is not None else XTermParser()
        self._in_paste = False
        self._pasted: list[str] = []
        self._held = ""  # the end of the last read, possibly the start of a marker
        self._held_at = 0.0  # time.monotonic() when _held was set (outside a paste)

    def feed(self, data: str) -> list[Message]:
        """Parse ``data``; an empty string means end of input. Returns the completed messages."""
        if not data:
            return self._end_of_input()
        out: list[Message] = []
        text, self._held = self._held + data, ""
        while text:
            if self._in_paste:
                end = text.find(PASTE_END)
                if end < 0:
                    keep = _marker_start_at_end(text, PASTE_END)
                    self._pasted.append(text[: len(text) - keep])
                    self._held = text[len(text) - keep:]
                    break
                self._pasted.append(text[:end])
                out.append(events.Paste("".join(self._pasted).replace("\x00", "")))
                self._in_paste, self._pasted = False, []
                text = text[end + len(PASTE_END):]
            else:
                start = text.find(PASTE_START)
                if start < 0:
                    keep = _marker_start_at_end(text, PASTE_START)
                    keep = keep if keep > 1 else 0  # a lone ESC is the Esc key: never hold it
                    out.extend(self._to_inner(text[: len(text) - keep]))
                    if keep:
                        self._held, self._held_at = text[len(text) - keep:], time.monotonic()
                    break
                out.extend(self._to_inner(text[:start]))
                self._in_paste = True
                text = text[start + len(PASTE_START):]
        return out

    def tick(self) -> list[Message]:
        """Return the messages completed by time-outs (an Esc key, a held partial marker)."""
        out: list[Message] = []
        if self._held and not self._in_paste and time.monotonic() - self._held_at >= constants.ESCAPE_DELAY:
            held, self._held = self._held, ""
            out.extend(self._to_inner(held))
        out.extend(self.inner.tick())
        return out

    def _to_inner(self, text: str) -> list[Message]:
        # The stock parser takes an empty string for the end of input: never pass one on.
        return list(self.inner.feed(text)) if text else []

    def _end_of_input(self) -> list[Message]:
        out: list[Message] = []
        if self._in_paste:
            self._pasted.append(self._held)
            out.append(events.Paste("".join(self._pasted).replace("\x00", "")))
        else:
            out.extend(self._to_inner(self._held))
        self._in_paste, self._pasted, self._held = False, [], ""
        out.extend(self.inner.feed(""))
        return out


class PasteSafeLinuxDriver(LinuxDriver):
    """Textual's Linux / macOS driver, reading the terminal through ``PasteSafeParser``; input
    already pending when it starts (typed ahead) goes through ``typeahead_keys`` first."""

    def run_input_thread(self) -> None:
        """Read the terminal (the input thread's body) until ``exit_event`` is set, and post
        every message the parser completes to the app."""
        parser = PasteSafeParser(XTermParser(self._debug))
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        with selectors.SelectSelector() as selector:
            selector.register(self.fileno, selectors.EVENT_READ)

            def read_ready(timeout_s: float, typed_ahead: bool = False) -> bool:
                """Read what is ready; False at end of input (the terminal is gone)."""
                for _key, mask in selector.select(timeout_s):
                    if mask & selectors.EVENT_READ:
                        raw = os.read(self.fileno, 4096)
                        if not raw:
                            return False
                        data = decode(raw)
                        if data:
                            self._post_all(parser.feed(typeahead_keys(data) if typed_ahead else data))
                self._post_all(parser.tick())
                return True

            # What was typed before the app took the terminal, then the input as it comes. At
            # end of input the loop stops (reading on would return nothing at once, forever).
            if read_ready(0, typed_ahead=True):
                while not self.exit_event.is_set() and read_ready(0.1):
                    pass
            # As the stock driver does: read what is still pending, so keys typed while the app
            # closes do not spill into the shell afterwards.
            if self.exit_event.is_set():
                read_ready(0.1)
            self._post_all(parser.feed(""))

    def _post_all(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.process_message(message)


def typeahead_keys(data: str) -> str:
    """Undo the cooked-mode translation of keys typed before the app took the terminal.

    Until the driver switches the terminal to raw mode (the app is still starting), the
    terminal's line discipline turns Enter's carriage return into a line feed (ICRNL). Read
    afterwards, that line feed would be Ctrl+J, the prompt's new-line key, so a task typed ahead
    with Enter would sit in the box instead of being sent. Text pasted in that instant arrives
    the same way (bracketed paste is not on yet), its lines ending in line feeds too.

    Returns ``data`` with the line feed that ends the typed-ahead text (before any bracketed
    paste) turned back into a carriage return: a task typed and sent with Enter is sent once;
    the line breaks inside stay new lines, so pasted lines stay one prompt instead of going to
    the model one by one. (Two tasks typed ahead become one two-line prompt.)"""
    head, marker, rest = data.partition(PASTE_START)
    if head.endswith("\n"):
        head = head[:-1] + "\r"
    return head + marker + rest


def paste_safe_driver_class(base: type[Driver]) -> type[Driver]:
    """Return the driver class to use instead of ``base``: ``PasteSafeLinuxDriver`` for Textual's
    ``LinuxDriver``, ``base`` itself for any other driver (Windows, web, headless, inline)."""
    return PasteSafeLinuxDriver if base is LinuxDriver else base
