def save(*a, **k): raise NotImplementedError
def load(*a, **k): raise NotImplementedError
