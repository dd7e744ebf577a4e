"""Streaming truncation of tool output with the full output saved to a file (``BoundedOutput``).

Memory stays bounded (about 4 MiB plus the head/tail buffers) however many bytes are fed, and the
saved file is written by a background thread (``writer``) while the pipe is read. The saved file
holds the raw bytes with secrets redacted (``agent.secrets.stream``), at
``<output_dir>/tool-output-<call_id>.txt`` (mode 0600 in a 0700 folder;
a numeric suffix when the name is taken, since some providers reuse call ids). It is written only
when truncation happened or the output is binary. A failed save is reported in the marker and is
never fatal. Binary output is replaced by a one-line note with its size and saved path.
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from collections import deque
from pathlib import Path
from typing import Any

from .normalise import (
    BINARY_SAMPLE_BYTES,
    decode_prefix,
    decode_suffix,
    display_output,
    encode_text,
    looks_binary_output,
    normalize_output,
)
from ...secrets.stream import StreamRedactor
from .saved_file import close_quietly, create_output_file, describe_os_error
from .truncate import (
    DEFAULT_MAX_CHARS,
    HEAD_FRACTION,
    TruncationResult,
    head_part,
    marker_line,
    safe_start,
    tail_part,
    truncate_normalized,
)
from .writer import WriteJob, output_writer

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


def truncate_and_save(data: bytes | str, ctx: Any) -> TruncationResult:
    """Truncate a whole tool output for the model, saving the raw output when truncated or binary.

    ``data`` is raw bytes, or text (saved as UTF-8). ``ctx`` is a ``ToolContext`` (its
    ``max_output_chars``, ``output_dir`` and ``call_id`` are used). Never raises for I/O errors.
    """
    if isinstance(data, str):
        data = encode_text(data)
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
    reusable buffers of ``STREAM_SLOT_BYTES`` that the background writer thread (``writer``)
    appends to the saved file while the next buffer fills. Memory therefore stays at about 4 MiB plus head and tail however many bytes arrive.
    Byte and newline counts stay exact; the characters cut are estimated from the head and
    tail's characters per byte (the marker says "about"). With
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
        self._inflight: deque[tuple[WriteJob, bytearray | None]] = deque()
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
        decoded = data.decode("utf-8", "surrogateescape")
        norm = normalize_output(decoded)
        if self._max_chars == 0 or len(norm) <= self._max_chars:
            result = truncate_normalized(norm, 0, None, None, self._total)
            if "\x1b" in decoded:
                result = dataclasses.replace(result, display=display_output(decoded))
            return result
        self._save_whole(data)
        return truncate_normalized(norm, self._max_chars, self._saved_path, self._save_error, self._total)

    def _save_whole(self, data: bytes) -> None:
        self._open_file()
        if self._fd is not None:
            try:
                _write_all(self._fd, self._redactor.feed(data))
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

    def _reclaim(self, entry: tuple[WriteJob, bytearray | None]) -> None:
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
        self._inflight.append((output_writer().submit(self._write_job, buf, size, count), slot))

    def _write_job(self, buf: bytes | bytearray, size: int, count: bool) -> None:
        """Runs in the writer thread: count newlines if asked, write ``buf[:size]``; remember the
        first write failure."""
        if count:
            self._writer_newlines += self._count_newlines(buf, 0, size)
        if self._fd is None or self._write_failure is not None:
            return
        try:
            with memoryview(buf) as view:
                for part in self._redactor.feed_parts(view[:size]):
                    _write_all(self._fd, part)
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
        head_norm = normalize_output(decode_prefix(self._head))
        head = head_part(head_norm, self._head_budget)
        tail_text = decode_suffix(self._tail)
        tail_norm = normalize_output(tail_text)
        if len(tail_norm) <= self._tail_budget:
            # The whole ring would be shown, so its arbitrary first bytes would be too: start at a
            # safe place instead (after the first newline, or at the first CR or ESC).
            tail_norm = normalize_output(tail_text[safe_start(tail_text) :])
            tail, at_line_start = tail_norm, True
        else:
            tail, at_line_start = tail_part(tail_norm, self._tail_budget)
        first_line = head.count("\n") + 1
        tail_line = self._newlines - tail.count("\n") + 1
        last_line = max(first_line, tail_line - 1 if at_line_start else tail_line)
        # Characters per raw byte, measured on the buffers, applied to the bytes never decoded.
        buffered = len(self._head) + len(self._tail)
        ratio = (len(head_norm) + len(tail_norm)) / buffered if buffered else 1.0
        unseen = max(0, self._total - buffered)
        omitted = round(unseen * ratio) + (len(head_norm) - len(head)) + (len(tail_norm) - len(tail))
        marker = marker_line(omitted, True, first_line, last_line, self._saved_path, self._save_error, self._total)
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
            self._fd, self._saved_path = create_output_file(self._output_dir, self._call_id)
        except OSError as exc:
            self._save_error = describe_os_error(exc)
            return
        self._redactor = StreamRedactor()
        self._closer = weakref.finalize(self, close_quietly, self._fd)

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
            if failure is None:
                _write_all(fd, self._redactor.flush())
        except OSError as exc:
            failure = exc
        try:
            os.close(fd)
        except OSError as exc:
            failure = failure or exc
        if failure is not None:
            self._save_error = (describe_os_error(failure) if isinstance(failure, OSError)
                                else f"{type(failure).__name__}: {failure}")
            if self._saved_path:
                try:
                    os.unlink(self._saved_path)
                except OSError:
                    pass
            self._saved_path = None


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked); raises OSError."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
