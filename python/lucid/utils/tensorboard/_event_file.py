"""Event files: TFRecord-framed `Event` messages, named and started as TensorBoard's
EventFileWriter does, with the pending records written out every `max_queue` events
and every `flush_secs` seconds (by a daemon thread, so quiet runs still show up).
"""

import itertools
import os
import socket
import struct
import threading
import time

from . import _proto as pb
from ._crc32c import masked_crc32c

_FILE_VERSION = "brain.Event:2"
_WRITER_NAME = "lucid.utils.tensorboard"
_file_numbers = itertools.count()  # the <n> that keeps one process's file names apart


def frame_record(data):
    """TFRecord framing: uint64 length, masked CRC32C of the length, data, its CRC."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def encode_event(wall_time, step=None, summary=None, file_version=None,
                 session_log_start=False, source_metadata=False):
    """Event: wall_time = 1, step = 2, file_version = 3, summary = 5, session_log = 7,
    source_metadata = 10 (naming the writer, in a file's first event)."""
    out = pb.optional(pb.double_field, 1, wall_time)
    if step is not None:
        out += pb.optional(pb.int_field, 2, int(step))
    if file_version is not None:
        out += pb.bytes_field(3, file_version)
    if summary is not None:
        out += pb.bytes_field(5, summary)
    if session_log_start:
        out += pb.bytes_field(7, pb.int_field(1, 1))  # SessionLog.status = START
    if source_metadata:
        out += pb.bytes_field(10, pb.bytes_field(1, _WRITER_NAME))  # SourceMetadata.writer
    return out


class EventFileWriter:
    """One events.out.tfevents.<time>.<host>.<pid>.<n><suffix> file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._log_dir = str(log_dir)
        os.makedirs(self._log_dir, exist_ok=True)
        name = "events.out.tfevents.%010d.%s.%s.%s" % (
            time.time(), socket.gethostname(), os.getpid(), next(_file_numbers))
        self.path = os.path.join(self._log_dir, name + filename_suffix)
        self._file = open(self.path, "wb")
        self._pending = []
        self._max_queue = max(int(max_queue), 1)
        self._lock = threading.Lock()
        self._closed = False
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_every, args=(flush_secs,),
                                         name="lucid-tensorboard-flush", daemon=True)
        self.add_event(encode_event(time.time(), file_version=_FILE_VERSION,
                                    source_metadata=True))
        self.flush()
        self._flusher.start()

    def get_logdir(self):
        return self._log_dir

    def add_event(self, event_bytes):
        with self._lock:
            if self._closed:
                raise IOError("Writer is closed")
            self._pending.append(frame_record(event_bytes))
            if len(self._pending) >= self._max_queue:
                self._write_pending()

    def _write_pending(self):
        self._file.write(b"".join(self._pending))
        self._pending.clear()
        self._file.flush()

    def flush(self):
        with self._lock:
            if self._closed:
                raise IOError("Writer is closed")
            self._write_pending()

    def _flush_every(self, seconds):
        while not self._stop.wait(seconds):
            with self._lock:
                if self._closed:
                    return
                self._write_pending()

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._write_pending()
            self._file.close()
            self._closed = True
        self._stop.set()
