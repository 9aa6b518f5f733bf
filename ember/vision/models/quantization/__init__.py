"""torchvision.models.quantization is not in ember.vision yet: every name asked of it raises
NotImplementedError naming it (rather than an AttributeError that reads like a typo)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"torchvision.models.quantization.{name} is not in ember.vision "
                              f"(ember has torchvision's classification models only)")
