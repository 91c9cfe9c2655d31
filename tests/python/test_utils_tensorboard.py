"""lucid.utils.tensorboard: event files read back through our own TFRecord/protobuf
reader (CRCs checked) and, where the tensorboard package is installed, compared
with what torch.utils.tensorboard's SummaryWriter writes for the same calls."""

import glob
import os
import re
import socket
import struct
import subprocess
import sys
import zlib

import pytest

import lucid
from lucid.utils.tensorboard import SummaryWriter
from lucid.utils.tensorboard._crc32c import crc32c, masked_crc32c
from lucid.utils.tensorboard._event_file import frame_record

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.compat.proto.event_pb2 import Event
    import torch
    from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter
    HAVE_TB = True
except ImportError:
    HAVE_TB = False

needs_tb = pytest.mark.skipif(not HAVE_TB, reason="needs the tensorboard package and torch")

# Deterministic data both frameworks get as float32 tensors.
DATA = [((i * 37) % 101) / 10.0 - 5.0 for i in range(500)]


# ---- an independent reader: TFRecord framing and protobuf wire format ----------

def read_records(path):
    with open(path, "rb") as f:
        blob = f.read()
    records, pos = [], 0
    while pos < len(blob):
        header = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        if length_crc != masked_crc32c(header):
            raise ValueError("bad length CRC")
        data = blob[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
        if data_crc != masked_crc32c(data):
            raise ValueError("bad data CRC")
        records.append(data)
        pos += 16 + length
    return records


def _read_varint(buf, pos):
    shift = value = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def decode(buf):
    """{field number: [raw values]}: ints for varints, bytes for the rest."""
    fields, pos = {}, 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(field, []).append(value)
    return fields


def event_files(logdir):
    return sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))


def own_events(logdir):
    (path,) = event_files(logdir)
    return [decode(r) for r in read_records(path)]


def own_summary_values(logdir):
    """[(step, {Summary.Value fields})] of the events carrying a summary."""
    out = []
    for event in own_events(logdir):
        if 5 in event:
            step = event.get(2, [0])[0]
            for value in decode(event[5][0])[1]:
                out.append((step, decode(value)))
    return out


# ---- CRC32C and framing -------------------------------------------------------

@pytest.mark.parametrize("data,expected", [
    (b"123456789", 0xE3069283),
    (b"", 0x00000000),
    (bytes(32), 0x8A9136AA),           # RFC 3720 B.4 vectors
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
])
def test_crc32c_known_vectors(data, expected):
    assert crc32c(data) == expected


def test_masked_crc32c_formula():
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_frame_record_layout_and_corruption_detected(tmp_path):
    record = frame_record(b"hello")
    assert len(record) == 8 + 4 + 5 + 4
    assert struct.unpack("<Q", record[:8])[0] == 5 and record[12:17] == b"hello"
    path = tmp_path / "f"
    path.write_bytes(record)
    assert read_records(path) == [b"hello"]
    path.write_bytes(record[:13] + b"X" + record[14:])
    with pytest.raises(ValueError, match="data CRC"):
        read_records(path)


# ---- files, directories, flushing ----------------------------------------------

def test_file_name_and_first_event(tmp_path):
    with SummaryWriter(tmp_path, filename_suffix=".v2") as w:
        assert w.get_logdir() == tmp_path
    (path,) = event_files(tmp_path)
    pattern = r"events\.out\.tfevents\.\d{10}\.%s\.%d\.\d+\.v2" % (
        re.escape(socket.gethostname()), os.getpid())
    assert re.fullmatch(pattern, os.path.basename(path))
    (first,) = own_events(tmp_path)
    assert first[3] == [b"brain.Event:2"]
    assert struct.unpack("<d", first[1][0])[0] > 1.6e9


def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    parent, name = os.path.split(w.get_logdir())
    assert parent == "runs"
    assert re.fullmatch(r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_%s_lr0\.1"
                        % re.escape(socket.gethostname()), name)
    assert event_files(tmp_path / w.get_logdir())


def test_max_queue_writes_without_flush(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=3)
    for i in range(2):
        w.add_scalar("x", i, i)
    assert len(own_events(tmp_path)) == 1   # only the file-version event so far
    w.add_scalar("x", 2, 2)
    assert len(own_events(tmp_path)) == 4
    w.close()


def test_flush_secs_flushes_in_background(tmp_path):
    import time
    w = SummaryWriter(tmp_path, flush_secs=0.05)
    w.add_scalar("x", 1.0, 0)
    deadline = time.time() + 5
    while len(own_events(tmp_path)) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert len(own_events(tmp_path)) == 2
    w.close()


def test_close_then_reuse_opens_a_new_file(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalar("x", 1.0, 0)
    w.close()
    w.close()   # twice is fine
    w.add_scalar("x", 2.0, 1)
    w.close()
    assert len(event_files(tmp_path)) == 2


def test_closed_file_writer_refuses_events(tmp_path):
    w = SummaryWriter(tmp_path)
    fw = w.file_writer
    w.close()
    with pytest.raises(IOError, match="Writer is closed"):
        fw.add_summary(b"")


# ---- content through our own reader --------------------------------------------

def test_scalars_own_reader(tmp_path):
    import numpy as np
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", 0.25, 3, walltime=1234.5)
        w.add_scalar("loss", lucid.tensor([[0.0]]), 4)
        w.add_scalar("loss", np.float64(-1.5), -7)
        w.add_scalar("acc", np.array(0.75), 5)
    events = own_events(tmp_path)[1:]
    assert struct.unpack("<d", events[0][1][0])[0] == 1234.5
    got = [(e.get(2, [0])[0], decode(decode(e[5][0])[1][0])) for e in events]
    steps = [s if s < 1 << 63 else s - (1 << 64) for s, _ in got]
    assert steps == [3, 4, -7, 5]
    assert [v[1][0] for _, v in got] == [b"loss", b"loss", b"loss", b"acc"]
    assert [struct.unpack("<f", v[2][0])[0] for _, v in got] == [0.25, 0.0, -1.5, 0.75]


def test_histogram_own_reader(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", lucid.tensor([0.0, 1.0, 1.0, 3.0]), 0, bins=3)
    ((step, value),) = own_summary_values(tmp_path)
    histo = decode(value[5][0])
    doubles = {f: struct.unpack("<d", histo[f][0])[0] for f in (2, 3, 4, 5)}
    assert 1 not in histo                       # min 0.0 is the proto3 default
    assert doubles == {2: 3.0, 3: 4.0, 4: 5.0, 5: 11.0}
    limits = struct.unpack("<4d", histo[6][0])
    counts = struct.unpack("<4d", histo[7][0])
    assert limits == (0.0, 1.0, 2.0, 3.0) and counts == (0.0, 1.0, 2.0, 1.0)


def _png_pixels(png):
    """Decode our PNG (8-bit, filter 0 rows) without Pillow."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", png[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, _, color_type, _, _, _ = header
    channels = {2: 3, 6: 4, 4: 2}[color_type]
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    rows = [raw[r * stride:(r + 1) * stride] for r in range(height)]
    assert all(row[0] == 0 for row in rows)
    return height, width, channels, b"".join(row[1:] for row in rows)


def test_image_own_reader_scaling_and_formats(tmp_path):
    chw = lucid.tensor([[[0.0, 0.5], [1.0, 2.0]]] * 3)      # (3, 2, 2) floats
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", chw, 0)
        w.add_image("hw", lucid.tensor([[0.0, -1.0]]), 0, dataformats="HW")
        w.add_image("hwc", lucid.tensor([[[10, 20, 30, 40]]], dtype=lucid.uint8), 0,
                    dataformats="HWC")
    values = [v for _, v in own_summary_values(tmp_path)]
    images = [decode(v[4][0]) for v in values]
    assert [(i[1][0], i[2][0], i[3][0]) for i in images] == [(2, 2, 3), (1, 2, 3), (1, 1, 4)]
    assert _png_pixels(images[0][4][0]) == (2, 2, 3, bytes([0] * 3 + [127] * 3 + [255] * 6))
    assert _png_pixels(images[1][4][0]) == (1, 2, 3, bytes(6))
    assert _png_pixels(images[2][4][0]) == (1, 1, 4, bytes([10, 20, 30, 40]))


def test_text_own_reader(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "héllo **world**", 2)
    ((step, value),) = own_summary_values(tmp_path)
    assert step == 2 and value[1] == [b"notes/text_summary"]
    plugin = decode(decode(value[9][0])[1][0])
    assert plugin == {1: [b"text"]}
    tensor = decode(value[8][0])
    assert tensor[1] == [7] and tensor[8] == ["héllo **world**".encode()]


def test_hparams_writes_a_timestamped_run(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "opt": "adam"}, {"hp/acc": 0.9})
    (sub,) = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert float(sub) > 1.6e9
    tags = [v[1][0] for _, v in own_summary_values(tmp_path / sub)]
    assert tags == [b"_hparams_/experiment", b"_hparams_/session_start_info",
                    b"_hparams_/session_end_info", b"hp/acc"]


# ---- errors ---------------------------------------------------------------------

def test_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", lucid.tensor([1.0, 2.0]))
        with pytest.raises(NotImplementedError, match="lucid tensor, NumPy array or Python number"):
            w.add_scalar("x", [1.0])
        with pytest.raises(ValueError, match="bins='auto' is not supported.*'tensorflow'.*'sturges'"):
            w.add_histogram("h", lucid.tensor([1.0]), bins="auto")
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", lucid.tensor([]))
        with pytest.raises(ValueError, match="positive"):
            w.add_histogram("h", lucid.tensor([1.0]), bins=0)
        with pytest.raises(ValueError, match="monotonically"):
            w.add_histogram("h", lucid.tensor([1.0]), bins=[2.0, 1.0])
        with pytest.raises(ValueError, match=r"len\(bucket_limits\) != len\(bucket_counts\)"):
            w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1.0, 2.0], [1.0])
        with pytest.raises(AssertionError, match="size of input tensor and input format"):
            w.add_image("i", lucid.rand(3, 4, 4), dataformats="HW")
        with pytest.raises(AssertionError, match="same dimension shorthand twice"):
            w.add_image("i", lucid.rand(3, 4, 4), dataformats="CHH")
        with pytest.raises(AssertionError, match="3 channels"):
            w.add_images("i", lucid.rand(2, 4, 4, 4))
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="int, float, str, bool, or lucid.Tensor"):
            w.add_hparams({"lr": [0.1]}, {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\]"):
            w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(AssertionError, match="1 dimensional"):
            w.add_audio("a", lucid.zeros(2, 3))
        with pytest.raises(NotImplementedError, match="TorchScript"):
            w.add_graph(None)
        with pytest.raises(NotImplementedError, match="moviepy"):
            w.add_video("v", None)
        with pytest.raises(NotImplementedError, match="projector"):
            w.add_embedding(None)


def test_import_is_lazy_and_light():
    code = ("import sys, lucid\n"
            "assert 'lucid.utils.tensorboard' not in sys.modules\n"
            "lucid.utils.tensorboard.SummaryWriter\n"
            "bad = [m for m in ('numpy', 'torch', 'tensorboard', 'google.protobuf')"
            " if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- against torch.utils.tensorboard --------------------------------------------

def _proto_events(logdir):
    (path,) = event_files(logdir)
    return [Event.FromString(r) for r in read_records(path)]


def _proto_values(logdir):
    return [(e.step, v) for e in _proto_events(logdir) if e.HasField("summary")
            for v in e.summary.value]


def _both(tmp_path, calls, **kwargs):
    """Run `calls(writer, tensor_factory)` on lucid's and torch's writers."""
    lw = SummaryWriter(tmp_path / "lucid", **kwargs)
    tw = TorchSummaryWriter(str(tmp_path / "torch"), **kwargs)
    calls(lw, lucid.tensor)
    calls(tw, torch.tensor)
    lw.close()
    tw.close()
    return tmp_path / "lucid", tmp_path / "torch"


def _assert_same_values(mine, theirs):
    assert len(mine) == len(theirs) and mine
    for (step_a, a), (step_b, b) in zip(mine, theirs):
        assert step_a == step_b
        if a.HasField("histo"):
            assert a.histo.sum == pytest.approx(b.histo.sum, rel=1e-12, abs=1e-9)
            assert a.histo.sum_squares == pytest.approx(b.histo.sum_squares, rel=1e-12)
            a.histo.sum, a.histo.sum_squares = b.histo.sum, b.histo.sum_squares
        assert a == b


@needs_tb
def test_scalars_match_torch(tmp_path):
    def calls(w, t):
        w.add_scalar("loss", 0.5, 0)
        w.add_scalar("loss", t([1.25]), 1)
        w.add_scalar("new", 3.0, 2, new_style=True)
        w.add_scalar("new64", 1.0 / 3, 3, new_style=True, double_precision=True)
        w.add_scalar("zero", 0.0, 0)
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))
    accumulators = []
    for d in (mine, theirs):
        ea = EventAccumulator(str(d))
        ea.Reload()
        accumulators.append(ea)
    assert accumulators[0].Tags()["scalars"] == accumulators[1].Tags()["scalars"]
    assert ([(s.step, s.value) for s in accumulators[0].Scalars("loss")]
            == [(s.step, s.value) for s in accumulators[1].Scalars("loss")] == [(0, 0.5), (1, 1.25)])


@needs_tb
def test_add_scalars_matches_torch(tmp_path):
    def calls(w, t):
        for step in range(3):
            w.add_scalars("run/main", {"a": step * 1.5, "b": t([-step])}, step)
    mine, theirs = _both(tmp_path, calls)
    subdirs = sorted(d for d in os.listdir(mine) if os.path.isdir(mine / d))
    assert subdirs == sorted(d for d in os.listdir(theirs) if os.path.isdir(theirs / d))
    assert subdirs == ["run_main_a", "run_main_b"]
    for d in subdirs:
        _assert_same_values(_proto_values(mine / d), _proto_values(theirs / d))


@needs_tb
@pytest.mark.parametrize("bins,max_bins", [
    ("tensorflow", None), (10, None), (1, None), ("sqrt", None), ("sturges", None),
    ("rice", None), ([-6.0, -1.0, 0.0, 0.5, 2.0], None), (64, 5), ("tensorflow", 40),
])
def test_histograms_match_torch(tmp_path, bins, max_bins):
    def calls(w, t):
        w.add_histogram("data", t(DATA), 0, bins=bins, max_bins=max_bins)
        w.add_histogram("const", t([2.0] * 7), 1, bins=bins, max_bins=max_bins)
        w.add_histogram("ints", t(list(range(-3, 20))), 2, bins=bins, max_bins=max_bins)
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))
    ea = EventAccumulator(str(mine))
    ea.Reload()
    assert ea.Tags()["histograms"] == ["data", "const", "ints"]


@needs_tb
def test_histogram_numpy_and_raw_match_torch(tmp_path):
    import numpy as np
    values = np.array(DATA, dtype=np.float64)
    counts, limits = np.histogram(values, bins=5)

    def calls(w, t):
        w.add_histogram("np", values, 0)
        w.add_histogram_raw("raw", values.min(), values.max(), len(values), values.sum(),
                            values.dot(values), limits[1:].tolist(), counts.tolist(), 1)
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))


@needs_tb
def test_images_match_torch(tmp_path):
    from PIL import Image
    import io
    pixels = [[[((c * 7 + y * 5 + x) % 13) / 12.0 for x in range(6)] for y in range(5)]
              for c in range(3)]
    batch = [[[[((n + c + y * x) % 9) / 8.0 for x in range(4)] for y in range(3)]
              for c in range(1)] for n in range(11)]

    def calls(w, t):
        w.add_image("chw", t(pixels), 0)
        w.add_image("hwc", t(pixels).permute(1, 2, 0), 1, dataformats="HWC")
        w.add_image("gray", t(pixels[0]), 2, dataformats="HW")
        w.add_image("u8", (t(pixels) * 250).to(dtype=lucid.uint8 if isinstance(w, SummaryWriter)
                                                else torch.uint8), 3)
        w.add_image("rgba", t([pixels[0]] * 4), 4)
        w.add_images("batch", t(batch), 5)
    mine, theirs = _both(tmp_path, calls)
    a, b = _proto_values(mine), _proto_values(theirs)
    assert len(a) == len(b) == 6
    for (sa, va), (sb, vb) in zip(a, b):
        assert (sa, va.tag) == (sb, vb.tag)
        ia, ib = va.image, vb.image
        assert (ia.height, ia.width, ia.colorspace) == (ib.height, ib.width, ib.colorspace)
        img_a = Image.open(io.BytesIO(ia.encoded_image_string))
        img_b = Image.open(io.BytesIO(ib.encoded_image_string))
        assert img_a.mode == img_b.mode
        assert img_a.tobytes() == img_b.tobytes()


@needs_tb
def test_text_audio_and_purge_match_torch(tmp_path):
    def calls(w, t):
        w.add_text("notes", "# title\nbody", 0)
        w.add_audio("tone", t([((i * 13) % 29) / 14.0 - 1.0 for i in range(300)]), 1,
                    sample_rate=8000)
    mine, theirs = _both(tmp_path, calls, purge_step=5)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))
    purge = [(e.step, e.file_version, e.session_log.status) for e in _proto_events(mine)[1:3]]
    assert purge == [(e.step, e.file_version, e.session_log.status)
                     for e in _proto_events(theirs)[1:3]] == [(5, "brain.Event:2", 0), (5, "", 1)]
    ea = EventAccumulator(str(mine))
    ea.Reload()
    assert ea.Tags()["tensors"] == ["notes/text_summary"] and ea.Tags()["audio"] == ["tone"]


@needs_tb
def test_hparams_match_torch(tmp_path):
    def calls(w, t):
        w.add_hparams({"lr": 0.1, "layers": 3, "opt": "adam", "bn": True, "skip": None,
                       "wd": t([0.5])},
                      {"hp/acc": 0.9, "hp/loss": t([0.25])},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "layers": [2, 3]},
                      run_name="trial", global_step=4)
    mine, theirs = _both(tmp_path, calls)
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    a, b = _proto_values(mine / "trial"), _proto_values(theirs / "trial")
    # The session-start hparams are a protobuf map, whose byte order is unspecified:
    # compare the parsed plugin data, then the rest of the values.
    for (_, va), (_, vb) in zip(a[:3], b[:3]):
        content_a = HParamsPluginData.FromString(va.metadata.plugin_data.content)
        content_b = HParamsPluginData.FromString(vb.metadata.plugin_data.content)
        assert content_a == content_b
        va.metadata.plugin_data.content = vb.metadata.plugin_data.content
    _assert_same_values(a, b)
    ea = EventAccumulator(str(mine / "trial"))
    ea.Reload()
    meta = ea.PluginTagToContent("hparams")
    assert sorted(meta) == ["_hparams_/experiment", "_hparams_/session_end_info",
                            "_hparams_/session_start_info"]


@needs_tb
def test_tensors_match_torch(tmp_path):
    def calls(w, t):
        w.add_tensor("f32", t([[1.5, -2.0, 0.0]]), 0)
        w.add_tensor("f64", t([0.1, 0.0]).double(), 1)
        w.add_tensor("i64", t([[-3, 0], [7, 1 << 40]]), 2)
        w.add_tensor("i32", t([-1, 5]).int(), 3)
        w.add_tensor("i16", t([-1, 5]).short(), 4)
        w.add_tensor("i8", t([-1, 5]).to(dtype=t([1]).char().dtype), 5)
        w.add_tensor("u8", t([0, 255]).byte(), 6)
        w.add_tensor("b", t([True, False, True]), 7)
        w.add_tensor("scalar", t(2.5), 8)
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))


@needs_tb
@pytest.mark.parametrize("num_thresholds", [127, 10, 300])
def test_pr_curves_match_torch(tmp_path, num_thresholds):
    labels = [(i * 7) % 3 == 0 for i in range(200)]
    preds = [((i * 53) % 211) / 210.0 for i in range(200)]
    weights = [1.0 + (i % 4) / 4 for i in range(200)]

    def calls(w, t):
        w.add_pr_curve("pr", t(labels), t(preds), 0, num_thresholds=num_thresholds)
        w.add_pr_curve("pr_w", t(labels), t(preds).double(), 1, num_thresholds=num_thresholds,
                       weights=t(weights).double() if isinstance(w, SummaryWriter) else
                       t(weights).double().numpy())
        w.add_pr_curve_raw("raw", t([5.0, 3.0]), t([4.0, 1.0]), t([0.0, 3.0]), t([0.0, 2.0]),
                           t([0.55, 0.75]), t([1.0, 0.6]), 2, num_thresholds=2)
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))
    ea = EventAccumulator(str(mine))
    ea.Reload()
    assert sorted(ea.PluginTagToContent("pr_curves")) == ["pr", "pr_w", "raw"]


@needs_tb
def test_custom_scalars_match_torch(tmp_path):
    def calls(w, t):
        w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]]}})
        w.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
        w.add_custom_scalars_marginchart(["v", "lo", "hi"])
    mine, theirs = _both(tmp_path, calls)
    _assert_same_values(_proto_values(mine), _proto_values(theirs))


def test_more_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="Expected 3 tags, got 2"):
            w.add_custom_scalars_marginchart(["a", "b"])
        with pytest.raises(ValueError, match="unsupported tensor dtype lucid.float16"):
            w.add_tensor("h", lucid.tensor([1.0]).half())
        with pytest.raises(ValueError, match="same length"):
            w.add_pr_curve_raw("r", [1.0], [1.0], [1.0], [1.0], [1.0], lucid.tensor([1.0, 2.0]))
        with pytest.raises(ValueError, match="labels has 2 elements, predictions 3"):
            w.add_pr_curve("p", lucid.tensor([1, 0]), lucid.tensor([0.1, 0.2, 0.3]))
        with pytest.raises(NotImplementedError, match="MeshPluginData"):
            w.add_mesh("m", None)
