"""Middle truncation of tool output, with the full output saved to a file.

Behaviour (DESIGN.md section 4, issue 3; the head 30% / tail 70% split and the marker naming the
saved file follow OpenCLI and Claude Code, the rest is ours):

- Text sent to the model is first *normalised*: ANSI escape sequences (SGR colours, cursor moves,
  OSC titles) are removed, CRLF becomes LF, a line made of CR-separated progress frames keeps only
  its last frame, backspace overstrikes are resolved, NUL becomes U+2400 and other control
  characters are dropped, lone surrogates become U+FFFD. The budget is measured on that text.
- Over the budget (``max_chars`` characters; 0 = no truncation) the middle is cut: the head keeps
  30% of the budget, the tail 70%. Each cut snaps to a line boundary when one lies within 10% of
  that part's budget. Cuts work on ``str`` after normalisation, so they never split a UTF-8
  sequence, an escape sequence or a CRLF pair.
- A marker line between head and tail states how many characters were cut, the line range, and
  the absolute path of the saved full output (or why it could not be saved). ``MARKER_RE`` finds it.
- Binary output (NUL bytes or mostly invalid UTF-8 in the first 8 KB) is replaced by a one-line
  note with its size and saved path, never shown as mojibake.
- The saved file holds the raw bytes exactly as produced, at
  ``<output_dir>/tool-output-<call_id>.txt`` (mode 0600; a numeric suffix when the name is taken,
  since some providers reuse call ids). It is written only when truncation happened or the output
  is binary. A failed save is reported in the marker and is never fatal.

``BoundedOutput`` is the streaming form used by the bash tool: memory stays bounded (about 4 MiB
plus the head/tail buffers) however many bytes are fed, and the saved file is written by a
background thread while the pipe is read. ``truncate_text`` is the pure ``str`` form.
"""

from __future__ import annotations

import codecs
import os
import queue
import re
import threading
import uuid
import weakref
from collections import deque
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

#: Default cap on model-facing tool output (characters), as ``OPENCLI_MAX_TOOL_OUTPUT``.
DEFAULT_MAX_CHARS = 20000
#: Share of the budget kept from the start of the output; the rest is kept from the end.
HEAD_FRACTION = 0.3
#: A cut moves to a line boundary when one lies within this share of the part's budget.
LINE_SNAP_FRACTION = 0.1
#: Bytes inspected to decide whether output is binary.
BINARY_SAMPLE_BYTES = 8192
#: Output up to this many bytes is kept whole in memory (exact counts); beyond, head/tail only.
MEMORY_BYTES = 1 << 20
#: Size (bytes) of each reusable buffer that spilled output streams through to the saved file.
STREAM_SLOT_BYTES = 1 << 20
#: Number of those buffers per output: one filling while the others are being written.
STREAM_SLOTS = 3
#: Piece size (bytes) for counting newlines with ``bytes.replace`` (below malloc's mmap threshold).
_COUNT_PIECE = 1 << 16
#: Lines longer than this on average (bytes) make the memchr-based newline count the faster one.
_SPARSE_BYTES_PER_LINE = 32

#: Finds the marker line (with the newline on each side) inside a truncated text.
MARKER_RE = re.compile(r"\n\[\.\.\. (?:about )?(?P<chars>\d+) chars truncated, from line (?P<line>\d+)[^\n]*\.\.\.\]\n")

_ESCAPE_RE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*(?:[@-~]|\Z)"  # CSI (SGR colours, cursor moves); unfinished at the end too
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\|\Z)"  # OSC (titles, hyperlinks), ended by BEL or ST
    r"|[PX^_][^\x1b]*(?:\x1b\\|\Z)"  # DCS, SOS, PM, APC strings
    r"|[ -/]+[0-~]?"  # nF escapes such as charset selection
    r"|[0-~]"  # two-character escapes (ESC 7, ESC M, ESC c ...)
    r"|\Z)"
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CR_LINE_RE = re.compile(r"[^\n]*\r[^\n]*")
_OVERSTRIKE_RE = re.compile(r"[^\n\x08]\x08")
_CONTROL_RE = re.compile(r"[\x01-\x08\x0b-\x1f\x7f-\x9f]")
_BINARY_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class TruncationResult:
    """The model-facing form of one tool output.

    - ``text``: what the model sees (normalised; ``head + "\\n" + marker + "\\n" + tail`` when
      truncated, a one-line note when binary).
    - ``truncated``: the middle was cut. ``saved_path``: absolute path of the raw full output, or
      ``None`` (not truncated, or the save failed: then ``save_error`` says why).
    - ``head`` / ``tail``: the kept parts (``head`` is the whole text when not truncated).
    - ``omitted_chars``: characters cut (``approximate`` when the output was too large to count
      exactly after normalisation). ``first_line`` / ``last_line``: 1-based lines of the cut.
    - ``total_bytes``: raw size (bytes) when known; ``total_lines``: lines in the output.
    - ``binary``: the output was binary and replaced by a note.
    """

    text: str
    truncated: bool = False
    saved_path: str | None = None
    head: str = ""
    tail: str = ""
    omitted_chars: int = 0
    approximate: bool = False
    first_line: int = 0
    last_line: int = 0
    total_bytes: int | None = None
    total_lines: int = 0
    binary: bool = False
    save_error: str | None = None
    #: For the UI: the same text with ANSI SGR colour codes kept, when the output had any and was
    #: not truncated (``None`` otherwise: show ``text``).
    display: str | None = None


_SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")


def display_output(text: str) -> str:
    """Return ``text`` normalised like ``normalize_output`` but with SGR colour codes kept (for
    the UI, which renders them; every other escape sequence is removed)."""
    if "\x1b" not in text:
        return normalize_output(text)
    kept: list[str] = []

    def stash(match: re.Match[str]) -> str:
        kept.append(match.group())
        return f"\ue000{len(kept) - 1}\ue001"

    protected = normalize_output(_SGR_RE.sub(stash, text.replace("\ue000", "").replace("\ue001", "")))
    return re.sub("\ue000(\\d+)\ue001", lambda m: kept[int(m.group(1))], protected)


def normalize_output(text: str) -> str:
    """Return ``text`` as the model and the UI should see it (characters in, characters out).

    Removes ANSI/VT escape sequences, turns CRLF into LF, keeps only the last non-empty
    CR-separated frame of each line (progress bars), resolves ``x\\b`` overstrikes, replaces NUL
    with U+2400, drops other C0/C1 control characters except tab and newline, and replaces lone
    surrogates with U+FFFD. Line count is preserved: a line of the input is a line of the output.
    """
    if "\x1b" in text or "\x9b" in text:
        text = _ESCAPE_RE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = _CR_LINE_RE.sub(_last_frame, text)
    if "\x08" in text:
        text = _OVERSTRIKE_RE.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "\u2400")
    text = _CONTROL_RE.sub("", text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE_RE.sub("\ufffd", text)
    return text


def _last_frame(match: re.Match[str]) -> str:
    for frame in reversed(match.group().split("\r")):
        if frame:
            return frame
    return ""


def looks_binary_output(sample: bytes) -> bool:
    """Return whether command output looks binary, judging its first 8 KB (bytes).

    Binary means at least 4 suspicious bytes making up more than 10% of the sample, counting NUL,
    control characters other than tab/newline/CR/FF/ESC, and bytes that are not valid UTF-8.
    Text with a few stray NULs (``find -print0``) or one odd byte (a latin-1 file name) stays
    text. (A lower bar than ``git``'s any-NUL rule, which is meant for files.)
    """
    sample = sample[:BINARY_SAMPLE_BYTES]
    text = codecs.getincrementaldecoder("utf-8")("ignore").decode(sample, final=False)
    if not sample:
        return False
    invalid = max(0, len(sample) - len(text.encode("utf-8")) - _incomplete_tail(sample))
    bad = invalid + len(_BINARY_CONTROL_RE.findall(text))
    return bad >= 4 and bad * 10 > len(sample)


def _incomplete_tail(data: bytes) -> int:
    """Bytes of a UTF-8 sequence cut at the end of ``data`` (0-3), not counted as invalid."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:
            if not 0xC2 <= byte <= 0xF4:
                return 0  # never a valid lead byte
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if back < need else 0
    return 0


def truncate_text(
    text: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    *,
    saved_path: str | None = None,
    save_error: str | None = None,
) -> TruncationResult:
    """Normalise ``text`` and middle-truncate it to ``max_chars`` characters (0 = no cap).

    Pure: nothing is written. ``saved_path`` (where the caller saved the full output) or
    ``save_error`` only change the marker wording. The kept head and tail together hold at most
    ``max_chars`` characters; the marker line comes on top (about 200-300 characters).
    Raises ``ValueError`` when ``max_chars`` is negative.
    """
    if max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    total_bytes = len(text.encode("utf-8", "surrogatepass")) if saved_path else None
    return _truncate_normalized(normalize_output(text), max_chars, saved_path, save_error, total_bytes)


def _truncate_normalized(
    norm: str, max_chars: int, saved_path: str | None, save_error: str | None, total_bytes: int | None
) -> TruncationResult:
    """``truncate_text`` on already normalised text; ``total_bytes`` is the raw size for the marker."""
    total_lines = _line_count(norm)
    if max_chars == 0 or len(norm) <= max_chars:
        return TruncationResult(text=norm, head=norm, total_lines=total_lines, total_bytes=total_bytes)
    head, tail, _ = _cut(norm, max_chars)
    tail_start = len(norm) - len(tail)
    first_line = head.count("\n") + 1
    last_line = norm.count("\n", 0, tail_start - 1) + 1
    omitted = len(norm) - len(head) - len(tail)
    marker = _marker(omitted, False, first_line, last_line, saved_path, save_error, total_bytes)
    return TruncationResult(
        text=f"{head}\n{marker}\n{tail}",
        truncated=True,
        saved_path=saved_path,
        head=head,
        tail=tail,
        omitted_chars=omitted,
        first_line=first_line,
        last_line=last_line,
        total_bytes=total_bytes,
        total_lines=total_lines,
        save_error=save_error,
    )


def split_truncated(text: str) -> tuple[str, str] | None:
    """Return ``(head, tail)`` around the truncation marker in ``text``, or ``None`` if absent."""
    match = MARKER_RE.search(text)
    if match is None:
        return None
    return text[: match.start()], text[match.end() :]


def truncate_and_save(data: bytes | str, ctx: Any) -> TruncationResult:
    """Truncate a whole tool output for the model, saving the raw output when truncated or binary.

    ``data`` is raw bytes, or text (saved as UTF-8). ``ctx`` is a ``ToolContext`` (its
    ``max_output_chars``, ``output_dir`` and ``call_id`` are used). Never raises for I/O errors.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    out = BoundedOutput.for_context(ctx)
    out.feed(data)
    return out.finish()


class BoundedOutput:
    """Streaming truncator: feed raw output, then ``finish()`` for the model-facing text.

    Output arrives either as byte chunks (``feed``) or straight from a pipe (``read_from``, which
    the bash tool uses: it reads into reusable buffers, so a read allocates nothing).

    Up to ``MEMORY_BYTES`` (1 MiB) everything stays in memory and the result is exact. Past that
    the output *spills*: the first ``8 * head budget`` bytes are kept as the head, the last
    ``8 * tail budget`` bytes as the tail, and every byte streams through ``STREAM_SLOTS``
    reusable buffers of ``STREAM_SLOT_BYTES`` that a background writer thread (one daemon thread
    for the whole process, running jobs in order) appends to the saved file while the next buffer
    fills. Memory therefore stays at about 4 MiB plus head and tail however many bytes arrive.
    Byte and newline counts stay exact; the number of characters cut is estimated from the
    characters-per-byte ratio of the head and tail (the marker says "about"). With
    ``max_chars == 0`` nothing is truncated and everything stays in memory.

    ``output_dir`` is where the full output is saved (``None``: never saved; the marker says so).
    Not thread-safe: one reader feeds it. Always call ``finish()`` (it waits for pending writes
    and closes the file); an abandoned instance closes its file when garbage-collected.
    """

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        output_dir: Path | None = None,
        call_id: str = "",
        *,
        memory_bytes: int = MEMORY_BYTES,
    ) -> None:
        if max_chars < 0:
            raise ValueError(f"max_chars must be >= 0, got {max_chars}")
        self._max_chars = max_chars
        self._output_dir = Path(output_dir).absolute() if output_dir is not None else None
        self._call_id = call_id
        self._head_budget = int(max_chars * HEAD_FRACTION)
        self._tail_budget = max_chars - self._head_budget
        self._head_cap = 8 * self._head_budget + 4096
        self._tail_cap = 8 * self._tail_budget + 4096
        self._memory_cap = max(memory_bytes, self._head_cap + self._tail_cap)
        self._mem = bytearray()
        self._head = b""
        self._tail = b""
        self._spilled = False
        self._total = 0
        self._newlines = 0  # counted by the reading thread
        self._writer_newlines = 0  # counted by the writer thread (added up once it is done)
        self._sparse = True  # newline density of the last counted piece (see _count_newlines)
        self._last_byte = b""
        # Spilled streaming: the buffer being filled, free buffers, buffers being written.
        self._slot = bytearray()
        self._view = memoryview(self._slot)
        self._fill = 0
        self._slots_made = 0
        self._free: list[bytearray] = []
        self._inflight: deque[tuple[_Job, bytearray | None]] = deque()
        # The saved file: a raw descriptor written with os.write.
        self._fd: int | None = None
        self._closer: weakref.finalize | None = None
        self._write_failure: Exception | None = None
        self._saved_path: str | None = None
        self._save_error: str | None = None
        self._result: TruncationResult | None = None

    @classmethod
    def for_context(cls, ctx: Any) -> "BoundedOutput":
        """Build one from a ``ToolContext`` (``max_output_chars``, ``output_dir``, ``call_id``); a
        relative ``output_dir`` is taken from the workspace."""
        output_dir = Path(ctx.output_dir) if ctx.output_dir is not None else None
        if output_dir is not None and not output_dir.is_absolute():
            output_dir = Path(ctx.workspace) / output_dir
        return cls(ctx.max_output_chars, output_dir, ctx.call_id)

    @property
    def total_bytes(self) -> int:
        """Bytes fed so far."""
        return self._total

    def feed(self, chunk: bytes) -> None:
        """Add the next raw bytes of the output (``bytes`` or ``bytearray``; not kept, so the caller
        may reuse its buffer). Raises ``RuntimeError`` after ``finish()``."""
        if self._result is not None:
            raise RuntimeError("BoundedOutput.feed() after finish()")
        size = len(chunk)
        if not size:
            return
        if not self._spilled:
            self._total += size
            self._newlines += chunk.count(b"\n")
            self._mem += chunk
            if self._max_chars > 0 and len(self._mem) > self._memory_cap:
                self._spill()
            return
        view = memoryview(chunk).cast("B")
        done = 0
        while done < size:
            take = min(size - done, STREAM_SLOT_BYTES - self._fill)
            self._view[self._fill : self._fill + take] = view[done : done + take]
            self._accept(take)
            done += take

    def read_from(self, fd: int) -> int:
        """Read once from the file descriptor ``fd`` (a pipe, usually non-blocking) into the
        output. Returns the number of bytes read, 0 at end of file. Raises ``BlockingIOError``
        when a non-blocking ``fd`` has nothing to read, other ``OSError`` on read errors, and
        ``RuntimeError`` after ``finish()``."""
        if self._result is not None:
            raise RuntimeError("BoundedOutput.read_from() after finish()")
        if not self._spilled:
            chunk = os.read(fd, STREAM_SLOT_BYTES)
            self.feed(chunk)
            return len(chunk)
        size = os.readv(fd, [self._view[self._fill :]])
        if size:
            self._accept(size)
        return size

    def finish(self) -> TruncationResult:
        """Wait for pending writes, close the saved file and return the model-facing result
        (the same object on later calls)."""
        if self._result is None:
            try:
                self._result = self._finish_spilled() if self._spilled else self._finish_in_memory()
            finally:
                self._close_file()
                self._mem = bytearray()
                self._head = self._tail = b""
                self._view.release()
                self._slot = bytearray()
                self._view = memoryview(self._slot)
                self._free.clear()
        return self._result

    # -- in-memory path: exact -------------------------------------------------------------

    def _finish_in_memory(self) -> TruncationResult:
        data = bytes(self._mem)
        self._last_byte = data[-1:]
        if looks_binary_output(data):
            self._save_whole(data)
            return self._binary_result()
        decoded = data.decode("utf-8", "replace")
        norm = normalize_output(decoded)
        if self._max_chars == 0 or len(norm) <= self._max_chars:
            result = _truncate_normalized(norm, 0, None, None, self._total)
            if "\x1b" in decoded:
                result = dataclasses.replace(result, display=display_output(decoded))
            return result
        self._save_whole(data)
        return _truncate_normalized(norm, self._max_chars, self._saved_path, self._save_error, self._total)

    def _save_whole(self, data: bytes) -> None:
        self._open_file()
        if self._fd is not None:
            try:
                _write_all(self._fd, data)
            except OSError as exc:
                self._write_failure = exc
        self._close_file()

    # -- spilled path: bounded memory ------------------------------------------------------

    def _spill(self) -> None:
        data = self._mem
        self._mem = bytearray()
        self._spilled = True
        self._head = bytes(data[: self._head_cap])
        self._tail = bytes(data[-self._tail_cap :])
        self._last_byte = bytes(data[-1:])
        self._open_file()
        self._submit(data, len(data), None)
        self._slot = self._take_slot()
        self._view = memoryview(self._slot)
        self._fill = 0

    def _accept(self, size: int) -> None:
        """Account for ``size`` new bytes just placed at ``_fill`` in the current buffer."""
        start = self._fill
        end = start + size
        self._total += size
        self._last_byte = self._slot[end - 1 : end]
        self._fill = end
        if end == STREAM_SLOT_BYTES:
            self._rotate()

    def _count_newlines(self, buf: bytearray, start: int, end: int) -> int:
        """Count b"\\n" in ``buf[start:end]`` at C speed.

        ``bytes.count`` for one byte is a plain loop (about 2 GB/s); ``bytes.replace`` finds the
        byte with ``memchr`` (several GB/s when lines are longer than a few dozen bytes), so it
        is used, on pieces of ``_COUNT_PIECE`` bytes (small enough that the temporary copies are
        recycled by the allocator), while the last piece had few newlines.
        """
        if not self._sparse:
            count = buf.count(b"\n", start, end)
        else:
            count = 0
            view = memoryview(buf)
            for piece_start in range(start, end, _COUNT_PIECE):
                piece = view[piece_start : min(end, piece_start + _COUNT_PIECE)].tobytes()
                count += len(piece) - len(piece.replace(b"\n", b""))
            view.release()
        self._sparse = count * _SPARSE_BYTES_PER_LINE < end - start
        return count

    def _rotate(self) -> None:
        """Hand the full current buffer to the writer and continue in a free one."""
        fill = self._fill
        if fill >= self._tail_cap:
            self._tail = bytes(self._view[fill - self._tail_cap : fill])
        else:
            self._tail = (self._tail + bytes(self._view[:fill]))[-self._tail_cap :]
        self._view.release()
        # Newlines are counted by whichever thread is free: the writer when it has caught up
        # (the reader keeps reading), else here (the reader waits for the writer anyway).
        writer_busy = bool(self._inflight) and not self._inflight[-1][0].done()
        if writer_busy:
            self._newlines += self._count_newlines(self._slot, 0, fill)
        self._submit(self._slot, fill, self._slot, count=not writer_busy)
        self._slot = self._take_slot()
        self._view = memoryview(self._slot)
        self._fill = 0

    def _take_slot(self) -> bytearray:
        """A free streaming buffer: a recycled one, a new one (up to ``STREAM_SLOTS``), or the
        oldest one being written once its write is done (back-pressure on the reader)."""
        while True:
            while self._inflight and self._inflight[0][0].done():
                self._reclaim(self._inflight.popleft())
            if self._free:
                return self._free.pop()
            if self._slots_made < STREAM_SLOTS:
                self._slots_made += 1
                return bytearray(STREAM_SLOT_BYTES)
            if not self._inflight:  # pragma: no cover - every slot is free, in use or in flight
                raise RuntimeError("BoundedOutput lost track of its buffers")
            entry = self._inflight.popleft()
            entry[0].result()
            self._reclaim(entry)

    def _reclaim(self, entry: tuple[_Job, bytearray | None]) -> None:
        if entry[1] is not None:
            self._free.append(entry[1])

    def _submit(self, buf: bytes | bytearray, size: int, slot: bytearray | None, count: bool = False) -> None:
        """Append ``buf[:size]`` to the saved file in the writer thread, counting its newlines
        first when ``count``; ``slot`` (the buffer, if it is a reusable one) becomes free once
        written."""
        if not count and (self._fd is None or self._write_failure is not None):
            if slot is not None:
                self._free.append(slot)
            return
        self._inflight.append((_output_writer().submit(self._write_job, buf, size, count), slot))

    def _write_job(self, buf: bytes | bytearray, size: int, count: bool) -> None:
        """Runs in the writer thread: count newlines if asked, write ``buf[:size]``; remember the
        first write failure."""
        if count:
            self._writer_newlines += self._count_newlines(buf, 0, size)
        if self._fd is None or self._write_failure is not None:
            return
        try:
            with memoryview(buf) as view:
                _write_all(self._fd, view[:size])
        except Exception as exc:  # noqa: BLE001 - reported by finish(), never raised from a write
            self._write_failure = exc

    def _finish_spilled(self) -> TruncationResult:
        if self._fill:
            self._tail = (self._tail + bytes(self._view[: self._fill]))[-self._tail_cap :]
            self._submit(self._slot, self._fill, None, count=True)
        self._close_file()
        self._newlines += self._writer_newlines
        self._writer_newlines = 0
        if looks_binary_output(self._head[:BINARY_SAMPLE_BYTES]):
            return self._binary_result()
        head_norm = normalize_output(_decode_prefix(self._head))
        head = _head_part(head_norm, self._head_budget)
        tail_text = _decode_suffix(self._tail)
        tail_norm = normalize_output(tail_text)
        if len(tail_norm) <= self._tail_budget:
            # The whole ring would be shown, so its arbitrary first bytes would be too: start at a
            # safe place instead (after the first newline, or at the first CR or ESC).
            tail_norm = normalize_output(tail_text[_safe_start(tail_text) :])
            tail, at_line_start = tail_norm, True
        else:
            tail, at_line_start = _tail_part(tail_norm, self._tail_budget)
        first_line = head.count("\n") + 1
        tail_line = self._newlines - tail.count("\n") + 1
        last_line = max(first_line, tail_line - 1 if at_line_start else tail_line)
        # Characters per raw byte, measured on the buffers, applied to the bytes never decoded.
        buffered = len(self._head) + len(self._tail)
        ratio = (len(head_norm) + len(tail_norm)) / buffered if buffered else 1.0
        unseen = max(0, self._total - buffered)
        omitted = round(unseen * ratio) + (len(head_norm) - len(head)) + (len(tail_norm) - len(tail))
        marker = _marker(omitted, True, first_line, last_line, self._saved_path, self._save_error, self._total)
        return TruncationResult(
            text=f"{head}\n{marker}\n{tail}",
            truncated=True,
            saved_path=self._saved_path,
            head=head,
            tail=tail,
            omitted_chars=omitted,
            approximate=True,
            first_line=first_line,
            last_line=last_line,
            total_bytes=self._total,
            total_lines=self._total_lines(),
            save_error=self._save_error,
        )

    # -- shared ----------------------------------------------------------------------------

    def _binary_result(self) -> TruncationResult:
        if self._saved_path:
            where = f"saved to {self._saved_path} (inspect it with e.g. `xxd FILE | head`)"
        else:
            where = f"not saved: {self._save_error or 'no output folder'}"
        note = f"[binary output, {self._total} bytes, not shown; {where}]"
        return TruncationResult(
            text=note,
            truncated=False,
            saved_path=self._saved_path,
            head=note,
            total_bytes=self._total,
            total_lines=self._total_lines(),
            binary=True,
            save_error=self._save_error,
        )

    def _total_lines(self) -> int:
        if self._total == 0:
            return 0
        return self._newlines + (0 if self._last_byte == b"\n" else 1)

    def _open_file(self) -> None:
        if self._output_dir is None:
            self._save_error = "no output folder configured"
            return
        try:
            self._fd, self._saved_path = _create_output_file(self._output_dir, self._call_id)
        except OSError as exc:
            self._save_error = _describe_os_error(exc)
            return
        self._closer = weakref.finalize(self, _close_quietly, self._fd)

    def _close_file(self) -> None:
        """Wait for pending writes, close the file; a failed write or close drops the file."""
        while self._inflight:
            entry = self._inflight.popleft()
            entry[0].result()
            self._reclaim(entry)
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if self._closer is not None:
            self._closer.detach()
            self._closer = None
        failure = self._write_failure
        try:
            os.close(fd)
        except OSError as exc:
            failure = failure or exc
        if failure is not None:
            self._save_error = (_describe_os_error(failure) if isinstance(failure, OSError)
                                else f"{type(failure).__name__}: {failure}")
            if self._saved_path:
                try:
                    os.unlink(self._saved_path)
                except OSError:
                    pass
            self._saved_path = None


def _no_op(*_: Any) -> None:
    return None


class _Job:
    """One call run by the writer thread. ``done()`` polls, ``result()`` waits for it (it never
    raises: jobs record their own failures)."""

    __slots__ = ("_call", "_args", "_pending")

    def __init__(self, call: Callable[..., None], args: tuple) -> None:
        self._call = call
        self._args = args
        self._pending = threading.Lock()
        self._pending.acquire()  # released when the job has run

    def run(self) -> None:
        try:
            self._call(*self._args)
        except BaseException:  # noqa: BLE001 - a job must never kill the writer thread
            pass
        finally:
            self._call, self._args = _no_op, ()  # drop references (the output object) at once
            self._pending.release()

    def done(self) -> bool:
        return not self._pending.locked()

    def result(self) -> None:
        with self._pending:
            pass


class _Writer:
    """A daemon thread running jobs strictly in submission order (so each file's chunks are
    written in order). Lighter than a ``ThreadPoolExecutor`` and needs no extra imports."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="opencli-output-writer", daemon=True)
        self._thread.start()

    def submit(self, call: Callable[..., None], *args: Any) -> _Job:
        job = _Job(call, args)
        self._jobs.put(job)
        return job

    def _run(self) -> None:
        while True:
            self._jobs.get().run()


_writer_lock = threading.Lock()
_writer: _Writer | None = None


def _output_writer() -> _Writer:
    """The process-wide writer thread for saved outputs, started on first use (and again in a
    forked child, where the parent's thread does not exist)."""
    global _writer
    with _writer_lock:
        if _writer is None or _writer.pid != os.getpid():
            _writer = _Writer()
        return _writer


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked); raises OSError."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _create_output_file(output_dir: Path, call_id: str) -> tuple[int, str]:
    """Create ``tool-output-<call_id>.txt`` (0600) in ``output_dir``; return (descriptor, path)."""
    output_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:80].strip(".") or uuid.uuid4().hex[:12]
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        path = output_dir / f"tool-output-{stem}{suffix}.txt"
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        return fd, str(path)
    raise FileExistsError(f"too many saved outputs named tool-output-{stem}*.txt in {output_dir}")


def _describe_os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def _decode_prefix(data: bytes) -> str:
    """Decode a byte prefix as UTF-8, holding back a sequence cut at the end (invalid -> U+FFFD)."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)


def _decode_suffix(data: bytes) -> str:
    """Decode a byte suffix as UTF-8, skipping continuation bytes of a sequence cut at the start."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:
        start += 1
    return data[start:].decode("utf-8", "replace")


def _safe_start(text: str) -> int:
    """Index where a text that begins at an arbitrary byte can safely start."""
    newline = text.find("\n")
    if newline >= 0:
        return newline + 1
    for ch in ("\r", "\x1b"):
        index = text.find(ch)
        if index >= 0:
            return index
    return 0


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _cut(text: str, max_chars: int) -> tuple[str, str, bool]:
    """Split ``text`` (longer than ``max_chars``) into kept head and tail; see module docstring."""
    head_budget = int(max_chars * HEAD_FRACTION)
    head = _head_part(text, head_budget)
    tail, at_line_start = _tail_part(text, max_chars - head_budget)
    return head, tail, at_line_start


def _head_part(text: str, budget: int) -> str:
    if budget <= 0:
        return ""
    if len(text) <= budget:
        return text
    window = max(1, int(budget * LINE_SNAP_FRACTION))
    newline = text.rfind("\n", max(0, budget - window), budget)
    return text[: newline + 1] if newline >= 0 else text[:budget]


def _tail_part(text: str, budget: int) -> tuple[str, bool]:
    """Return the kept tail and whether it starts at the beginning of a line."""
    if budget <= 0:
        return "", True
    if len(text) <= budget:
        return text, True
    start = len(text) - budget
    window = max(1, int(budget * LINE_SNAP_FRACTION))
    newline = text.find("\n", start - 1, start - 1 + window)
    if newline >= 0:
        return text[newline + 1 :], True
    return text[start:], False


def _marker(
    omitted: int,
    approximate: bool,
    first_line: int,
    last_line: int,
    saved_path: str | None,
    save_error: str | None,
    total_bytes: int | None,
) -> str:
    amount = f"{'about ' if approximate else ''}{omitted} chars truncated"
    lines = f"from line {first_line}" + (f" to line {last_line}" if last_line > first_line else "")
    if saved_path:
        size = f" ({_human_size(total_bytes)})" if total_bytes is not None else ""
        where = (
            f"Full output{size} saved to {saved_path}; "
            f"page through it with read(path, offset={first_line}, limit=...)"
        )
    elif save_error:
        where = f"Full output could not be saved ({save_error})"
    else:
        where = "Full output not saved"
    return f"[... {amount}, {lines}. {where} ...]"


def _human_size(size: int | None) -> str:
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} bytes"
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}"
    return f"{size} bytes"  # pragma: no cover
