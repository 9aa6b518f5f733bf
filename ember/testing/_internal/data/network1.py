"""The first version of the test network: one Linear layer."""
import ember.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(10, 20)
