"""prepare_fx / convert_fx: upstream's "graph mode", which wraps the model between a
QuantStub and a DeQuantStub (so no stubs are placed by hand) and otherwise runs the eager
prepare / convert. example_inputs is accepted for API compatibility and not needed."""

from ._prepare import convert, prepare

__all__ = ["prepare_fx", "convert_fx"]


def prepare_fx(model, qconfig_mapping=None, example_inputs=None, inplace=False):
    import copy

    import lucid.nn.quantized as nnq
    if qconfig_mapping is None and getattr(model, "qconfig", None) is not None:
        qconfig_mapping = model.qconfig
    inner = model if inplace else copy.deepcopy(model)
    return prepare(nnq.QuantWrapper(inner), qconfig_mapping, inplace=True)


def convert_fx(model, inplace=False):
    return convert(model, inplace=inplace)
