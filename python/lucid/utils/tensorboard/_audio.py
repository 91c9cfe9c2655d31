"""Audio summaries: a mono 16-bit WAV (stdlib `wave`), as torch's summary.audio."""

import io
import wave

import lucid

from . import _proto as pb
from ._convert import to_tensor
from ._summaries import _summary, _value


def audio(tag, samples, sample_rate=44100):
    array = to_tensor(samples).squeeze()
    if array.numel() and array.abs().max().item() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clamp(-1, 1)
    if len(array.shape) != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    # Same as torch: multiply in the input's dtype, then truncate to int16.
    frames = (array * 32767).to(lucid.int16).tolist()
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(b"".join(s.to_bytes(2, "little", signed=True) for s in frames))
    # Summary.Audio: sample_rate = 1 (float), num_channels = 2, length_frames = 3,
    # encoded_audio_string = 4, content_type = 5; Summary.Value.audio = 6.
    message = (pb.optional(pb.float_field, 1, sample_rate) + pb.int_field(2, 1)
               + pb.optional(pb.int_field, 3, len(frames)) + pb.bytes_field(4, buffer.getvalue())
               + pb.bytes_field(5, "audio/wav"))
    return _summary(_value(tag, pb.bytes_field(6, message)))
