"""The second version of the test network: network1's Net with a ReLU added."""
import ember.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(10, 20)
        self.relu = nn.ReLU()
