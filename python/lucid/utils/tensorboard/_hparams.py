"""The three summaries TensorBoard's hparams plugin reads (experiment, session start,
session end), built as torch.utils.tensorboard.summary.hparams builds them.

Field numbers: tensorboard/plugins/hparams/{api,plugin_data}.proto and
google/protobuf/struct.proto (Value, ListValue).
"""

import lucid

from . import _proto as pb
from ._convert import to_float
from ._summaries import _metadata, _summary, _value

_EXPERIMENT_TAG = "_hparams_/experiment"
_SESSION_START_INFO_TAG = "_hparams_/session_start_info"
_SESSION_END_INFO_TAG = "_hparams_/session_end_info"
_PLUGIN_NAME = "hparams"
_PLUGIN_DATA_VERSION = 0
_DATA_TYPE_STRING, _DATA_TYPE_FLOAT64 = 1, 3  # hparams.DataType (BOOL = 2 is never used: see below)
_STATUS_SUCCESS = 1

# google.protobuf.Value fields (a oneof, so a zero number or "" is still written).
_NUMBER_VALUE, _STRING_VALUE, _BOOL_VALUE = 2, 3, 4


def _struct_value(field, value):
    if field == _NUMBER_VALUE:
        return pb.double_field(field, value)
    if field == _BOOL_VALUE:
        return pb.int_field(field, bool(value))
    return pb.bytes_field(field, value)


def _hparam_info(name, data_type, discrete, field):
    # HParamInfo: name = 1, type = 4, domain_discrete = 5 (ListValue.values = 1).
    info = pb.bytes_field(1, name) + pb.int_field(4, data_type)
    if discrete is not None:
        values = b"".join(pb.bytes_field(1, _struct_value(field, d)) for d in discrete)
        info += pb.bytes_field(5, values)
    return info


def _plugin_summary(tag, field, message):
    # HParamsPluginData: version = 1 (0, so omitted), experiment = 2,
    # session_start_info = 3, session_end_info = 4.
    content = pb.optional(pb.int_field, 1, _PLUGIN_DATA_VERSION) + pb.bytes_field(field, message)
    return _summary(_value(tag, metadata=_metadata(_PLUGIN_NAME, content)))


def _check_discrete(hparam_dict, domains):
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of "
                            f"same type as hparam_dict[{k}].")


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """(experiment, session_start_info, session_end_info) encoded Summary messages."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    _check_discrete(hparam_dict, domains)

    entries, infos = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # Order as torch: bool is an int, so booleans are logged as numbers (1.0/0.0).
        if isinstance(v, (int, float)):
            field, data_type = _NUMBER_VALUE, _DATA_TYPE_FLOAT64
        elif isinstance(v, str):
            field, data_type = _STRING_VALUE, _DATA_TYPE_STRING
        elif isinstance(v, lucid.Tensor):
            v, field, data_type = to_float(v.reshape(-1)[:1]), _NUMBER_VALUE, _DATA_TYPE_FLOAT64
        else:
            raise ValueError("value should be one of int, float, str, bool, or lucid.Tensor")
        # SessionStartInfo.hparams = 1: map<string, Value> entries (key = 1, value = 2).
        entry = pb.bytes_field(1, k) + pb.bytes_field(2, _struct_value(field, v))
        entries.append(pb.bytes_field(1, entry))
        # torch gives tensor-valued hparams no discrete domain.
        discrete = None if isinstance(hparam_dict[k], lucid.Tensor) else domains.get(k)
        infos.append(_hparam_info(k, data_type, discrete, field))

    # Experiment: hparam_infos = 4, metric_infos = 5 (MetricInfo.name = 1 -> MetricName.tag = 2).
    metrics = [pb.bytes_field(1, pb.bytes_field(2, k)) for k in metric_dict]
    experiment = (b"".join(pb.bytes_field(4, i) for i in infos)
                  + b"".join(pb.bytes_field(5, m) for m in metrics))
    session_end = pb.int_field(1, _STATUS_SUCCESS)  # SessionEndInfo.status = 1
    return (_plugin_summary(_EXPERIMENT_TAG, 2, experiment),
            _plugin_summary(_SESSION_START_INFO_TAG, 3, b"".join(entries)),
            _plugin_summary(_SESSION_END_INFO_TAG, 4, session_end))
