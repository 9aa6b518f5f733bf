"""The Summary protocol buffers TensorBoard's plugins read, built from ember tensors.

A `Summary` holds tagged values; its kind decides which dashboard shows it: `simple_value`
(Scalars), `histo` (Histograms / Distributions), `image` (Images, PNG bytes), `audio`, or a
`tensor` with plugin metadata naming the plugin (text, hparams, pr_curves, custom_scalars).
These functions make one Summary each; the writer wraps it in an Event with a step and time.
"""
import io
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

import ember
from ._utils import convert_to_HWC, make_np

__all__ = ["scalar", "tensor_proto", "histogram_raw", "histogram", "make_histogram", "image",
           "make_image", "audio", "custom_scalars", "text", "hparams", "pr_curve_raw",
           "pr_curve", "compute_curve"]


def _plugin_metadata(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name,
                                                                  content=content))


def _shape(*sizes):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in sizes])


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """One number: a `simple_value`, or with `new_style` a 0-d tensor for the scalars plugin
    (float32, or float64 with `double_precision`)."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: "
                             f"{tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto,
                                        metadata=_plugin_metadata("scalars"))])


def _half_bits(x):
    # TensorProto keeps 16-bit floats as the int whose bits are those of the float32 value
    return struct.unpack("i", struct.pack("f", x))[0]


_TENSOR_TYPES = {  # ember dtype -> (TensorProto dtype, value field, flattened values)
    ember.float16: ("DT_HALF", "half_val", lambda a: [_half_bits(x) for x in a.tolist()]),
    ember.bfloat16: ("DT_BFLOAT16", "half_val", lambda a: [_half_bits(x) for x in a.tolist()]),
    ember.float32: ("DT_FLOAT", "float_val", lambda a: a.tolist()),
    ember.float64: ("DT_DOUBLE", "double_val", lambda a: a.tolist()),
    ember.int8: ("DT_INT8", "int_val", lambda a: a.tolist()),
    ember.uint8: ("DT_UINT8", "uint32_val", lambda a: a.tolist()),
    ember.int16: ("DT_INT16", "int_val", lambda a: a.tolist()),
    ember.int32: ("DT_INT32", "int_val", lambda a: a.tolist()),
    ember.int64: ("DT_INT64", "int64_val", lambda a: a.tolist()),
    ember.bool: ("DT_BOOL", "bool_val", lambda a: a.tolist()),
    ember.complex64: ("DT_COMPLEX64", "scomplex_val",
                      lambda a: np.stack([a.real, a.imag], -1).reshape(-1).tolist()),
    ember.complex128: ("DT_COMPLEX128", "dcomplex_val",
                       lambda a: np.stack([a.real, a.imag], -1).reshape(-1).tolist()),
}


def tensor_proto(tag, tensor):
    """A whole tensor, for the tensor plugin."""
    if tensor.numel() * tensor.itemsize >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values = _TENSOR_TYPES[tensor.dtype]
    flat = tensor.detach().reshape(-1)
    if tensor.dtype is ember.bfloat16:
        flat = flat.float()
    proto = TensorProto(**{"dtype": dtype, "tensor_shape": _shape(*tensor.shape),
                           field: values(flat.numpy())})
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata("tensor"),
                                        tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A histogram from precomputed statistics and buckets (bucket_limits are right edges)."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    values = make_np(values)
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(values.astype(float), bins,
                                                                      max_bins))])


def make_histogram(values, bins, max_bins=None):
    """np.histogram of `values`, merged down to at most `max_bins` buckets, trimmed to the
    range of non-empty buckets (keeping one empty bucket on the left as the lower edge)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - remainder]], mode="constant",
                            constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits

    # first and last non-empty bucket
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())


def _scale_factor(array):
    # uint8 images are already 0..255; floats are taken as 0..1
    return 1 if array.dtype == np.uint8 else 255


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (or a batch, tiled into a grid), encoded as PNG."""
    array = convert_to_HWC(make_np(tensor), dataformats)
    scale = _scale_factor(array)
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(array, rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """An image with boxes (N x 4: xmin, ymin, xmax, ymax, in pixels) drawn on it in red,
    each with its label if `labels` are given."""
    array = convert_to_HWC(make_np(tensor_image), dataformats)
    array = (array.astype(np.float32) * _scale_factor(array)).clip(0, 255).astype(np.uint8)
    picture = make_image(array, rescale=rescale, rois=make_np(tensor_boxes), labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def _draw_box(picture, xmin, ymin, xmax, ymax, label, color="Red", text_color="black",
              thickness=2):
    """The box's outline and, above its bottom-left corner, the label on a filled patch."""
    from PIL import ImageDraw, ImageFont
    font = ImageFont.load_default()
    draw = ImageDraw.Draw(picture)
    draw.line([(xmin, ymin), (xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)],
              width=thickness, fill=color)
    if label:
        left, top, right, bottom = font.getbbox(label)
        text_width, text_height = right - left, bottom - top
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(xmin, ymax - text_height - 2 * margin), (xmin + text_width, ymax)],
                       fill=color)
        draw.text((xmin + margin, ymax - text_height - margin), label, fill=text_color,
                  font=font)


def make_image(array, rescale=1, rois=None, labels=None):
    """A Summary.Image holding the PNG encoding of an H x W x C uint8 array (with boxes
    `rois` drawn on it first, if given)."""
    from PIL import Image
    height, width, channel = array.shape
    picture = Image.fromarray(array)
    for i in range(0 if rois is None else rois.shape[0]):
        _draw_box(picture, *rois[i, :4], None if labels is None else labels[i])
    picture = picture.resize((int(width * rescale), int(height * rescale)),
                             Image.Resampling.LANCZOS)
    with io.BytesIO() as output:
        picture.save(output, format="PNG")
        encoded = output.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=encoded)


def audio(tag, tensor, sample_rate=44100):
    """A mono clip in [-1, 1] as 16-bit WAV."""
    import wave
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as wave_write:
            wave_write.setnchannels(1)
            wave_write.setsampwidth(2)
            wave_write.setframerate(sample_rate)
            wave_write.writeframes(array.data)
        encoded = fio.getvalue()
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=array.shape[-1],
                         encoded_audio_string=encoded, content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def custom_scalars(layout):
    """The custom-scalars dashboard's layout: {category: {title: ["Multiline", tags] or
    ["Margin", [value, lower, upper]]}}."""
    categories = []
    for category, charts_by_title in layout.items():
        charts = []
        for title, (kind, tags) in charts_by_title.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                              upper=tags[2])
                charts.append(layout_pb2.Chart(title=title,
                                               margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                charts.append(layout_pb2.Chart(title=title,
                                               multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=charts))
    proto = TensorProto(dtype="DT_STRING",
                        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=_plugin_metadata("custom_scalars"))])


def text(tag, text):
    """A string (rendered as Markdown by the text plugin), tagged `<tag>/text_summary`."""
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=_shape(1))
    smd = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd, tensor=proto)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of one hyperparameter run: the experiment (which hparams and
    metrics exist), the session start (this run's values) and the session end."""
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION,
                                                      PLUGIN_NAME, SESSION_END_INFO_TAG,
                                                      SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData, SessionEndInfo,
                                                             SessionStartInfo)

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")

    def domain(k, field):
        if k not in hparam_domain_discrete:
            return None
        return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                            for d in hparam_domain_discrete[k]])

    hps = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # (bool is an int: as in PyTorch, True and False are logged as numbers)
        if isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64"),
                                  domain_discrete=domain(k, "number_value")))
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_STRING"),
                                  domain_discrete=domain(k, "string_value")))
        elif isinstance(v, ember.Tensor):
            ssi.hparams[k].number_value = make_np(v)[0]
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")

    def wrap(tag, **content):
        data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
        return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata(PLUGIN_NAME, data))])

    experiment = Experiment(hparam_infos=hps,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (wrap(EXPERIMENT_TAG, experiment=experiment),
            wrap(SESSION_START_INFO_TAG, session_start_info=ssi),
            wrap(SESSION_END_INFO_TAG,
                 session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


def _pr_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_shape(data.shape[0], data.shape[1]))
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata("pr_curves", content),
                                        tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A precision-recall curve from precomputed counts (at most 127 thresholds)."""
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A precision-recall curve of `predictions` in [0, 1] against boolean `labels`."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """(tp, fp, tn, fn, precision, recall) at `num_thresholds` evenly spaced thresholds."""
    minimum_count = 1e-7
    if weights is None:
        weights = 1.0
    bucket_indices = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    histogram_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=histogram_range,
                                 weights=(1.0 - float_labels) * weights)
    # counts at or above each threshold: cumulative sums from the top
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum_count, tp + fp)
    recall = tp / np.maximum(minimum_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))

