"""torch.utils.model_zoo: the old name of torch.hub's weight download (older model code imports
`load_url`, and `tqdm`, from here)."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401


def __getattr__(name):
    if name == "tqdm":  # the progress bar torch.hub uses, if the tqdm package is installed
        try:
            from tqdm import tqdm
        except ImportError:
            raise ImportError("ember.utils.model_zoo.tqdm needs the tqdm package: "
                              "pip install tqdm") from None
        return tqdm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
