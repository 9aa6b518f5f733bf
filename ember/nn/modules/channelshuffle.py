"""ChannelShuffle (ShuffleNet): the channels, split into `groups` groups, interleaved."""
from .module import Module
from .. import functional as F


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
