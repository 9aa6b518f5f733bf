"""torch.testing._internal.data: two versions of one small module class (network1, network2),
saved whole with torch.save by tests that check the warning given when a pickled module's
source differs from the class loaded back."""
