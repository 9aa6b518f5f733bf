"""torch.autograd.forward_ad is not implemented in ember: every entry point says so."""


def _unsupported(*args, **kwargs):
    raise NotImplementedError("forward-mode AD (torch.autograd.forward_ad) is not implemented "
                              "in ember")


dual_level = make_dual = unpack_dual = _unsupported
