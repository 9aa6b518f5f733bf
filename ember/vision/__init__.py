"""ember.vision: torchvision's role -- datasets, transforms, models and detection ops on ember."""
