"""SummaryWriter and FileWriter with torch.utils.tensorboard's API and file layout."""

import os
import time

from ._audio import audio
from ._convert import to_float, to_hwc_uint8, to_tensor
from ._event_file import EventFileWriter, encode_event
from ._hparams import hparams
from ._histogram import histogram_stats, tensorflow_bins
from . import _summaries
from ._tensor_summaries import custom_scalars, pr_curve, pr_curve_raw, tensor_summary

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes encoded `Summary` messages, wrapped in events, to one event file."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event_bytes):
        self.event_writer.add_event(event_bytes)

    def add_summary(self, summary, global_step=None, walltime=None):
        walltime = time.time() if walltime is None else walltime
        self.add_event(encode_event(walltime, global_step, summary=summary))

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


def _lacks(method, why):
    def unsupported(self, *args, **kwargs):
        raise NotImplementedError(f"SummaryWriter.{method} is not supported by lucid: {why}")
    unsupported.__name__ = method
    return unsupported


class SummaryWriter:
    """Writes TensorBoard event files into `log_dir` (default runs/<time>_<host><comment>)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # Created here and again after close(), as torch does, so a closed writer reopens.
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = tensorflow_bins()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # A restarted run: TensorBoard hides the old events from this step on.
                now = time.time()
                self.file_writer.add_event(encode_event(
                    now, self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(encode_event(
                    now, self.purge_step, session_log_start=True))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None,
                   new_style=False, double_precision=False):
        summary = _summaries.scalar(tag, to_float(scalar_value), new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each tag goes to its own run, log_dir/<main_tag>_<tag>, under the tag main_tag."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(_summaries.scalar(main_tag, to_float(scalar_value)),
                           global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._get_file_writer().add_summary(tensor_summary(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        stats = histogram_stats(values, bins, max_bins)
        self._get_file_writer().add_summary(_summaries.histogram(tag, *stats),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        limits, counts = _as_list(bucket_limits), _as_list(bucket_counts)
        if len(limits) != len(counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = _summaries.histogram(tag, to_float(min), to_float(max), to_float(num),
                                       to_float(sum), to_float(sum_squares), limits, counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        summary = _summaries.image(tag, to_hwc_uint8(img_tensor, dataformats))
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch, tiled 8 images per row into one image (as torch)."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summaries.text(tag, text_string),
                                            global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._get_file_writer().add_summary(audio(tag, snd_tensor, sample_rate),
                                            global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """The hparams plugin's three summaries and the metrics, in a run of their own
        (log_dir/<run_name or time.time()>), as torch."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            w_hp.file_writer.add_summary(exp, global_step)
            w_hp.file_writer.add_summary(ssi, global_step)
            w_hp.file_writer.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """num_thresholds is capped at 127, as torch does."""
        self._get_file_writer().add_summary(
            pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """`weights` is accepted for torch's signature; torch ignores it here too."""
        summary = pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                               true_negative_counts, false_negative_counts, precision, recall,
                               num_thresholds)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        """layout: {category: {chart title: ["Multiline", [tags]] or
        ["Margin", [value, lower, upper]]}}; TensorBoard's Custom Scalars tab reads it."""
        self._get_file_writer().add_summary(custom_scalars(layout))

    add_graph = _lacks("add_graph", "it needs TorchScript tracing of the model, "
                       "which lucid does not have")
    add_onnx_graph = _lacks("add_onnx_graph", "it converts an ONNX model to a GraphDef, "
                            "which needs the onnx and tensorboard protobuf schemas")
    add_embedding = _lacks("add_embedding", "it writes a projector config "
                           "(ProjectorConfig protobuf text format), which lucid does not encode")
    add_video = _lacks("add_video", "it encodes GIFs with moviepy")
    add_image_with_boxes = _lacks("add_image_with_boxes", "it draws boxes and labels "
                                  "with Pillow's ImageDraw and fonts")
    add_mesh = _lacks("add_mesh", "its metadata is the mesh plugin's MeshPluginData, "
                      "which lucid does not encode")
    add_figure = _lacks("add_figure", "it renders matplotlib figures; render with "
                        "matplotlib yourself and pass the pixels to add_image")

    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return  # closing twice is fine, as in torch
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _as_list(values):
    if isinstance(values, (list, tuple)):
        return [float(v) for v in values]
    return [float(v) for v in to_tensor(values).reshape(-1).tolist()]
