"""The weights= / pretrained= arguments of the model builders."""


def check_no_weights(builder, weights, kwargs):
    """Raises unless the call asks for random weights (weights=None, pretrained=False)."""
    pretrained = kwargs.pop("pretrained", False)
    if weights is not None or pretrained:
        raise ValueError(f"{builder}(): lucid builds models with random weights only (weights=None): "
                         "pretrained weights need a download, which lucid does not do; load a state dict "
                         "(lucid.load or a safetensors file) into the model instead")
    kwargs.pop("progress", None)  # the download progress bar: nothing to show
    return kwargs
