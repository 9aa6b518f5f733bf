"""FakeData: random images that are the same every time they are asked for, as torchvision's.

Sample i is drawn from the global generator seeded with `i + random_offset` (its state saved
and restored around the draw, so the caller's random stream is untouched): a standard-normal
image of `image_size` (C, H, W) and a class in [0, num_classes). The float image becomes a PIL
image the way torchvision's ToPILImage does it: times 255, cast to uint8 (wrapping, not
clamping), channels last; 1 channel gives mode "L", 3 "RGB", 4 "RGBA".
"""
from ... import get_rng_state, int64, manual_seed, randint, randn, set_rng_state
from .utils import pil_image
from .vision import VisionDataset


class FakeData(VisionDataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        rng_state = get_rng_state()
        manual_seed(index + self.random_offset)
        img = randn(*self.image_size)
        target = randint(0, self.num_classes, size=(1,), dtype=int64)[0]
        set_rng_state(rng_state)

        pixels = img.mul(255).byte().permute(1, 2, 0).numpy()
        if pixels.shape[2] == 1:
            pixels = pixels[:, :, 0]
        # as in torchvision, target_transform receives the 0-dim int64 tensor
        img, target = self._transformed(pil_image().fromarray(pixels), target)
        return img, target.item()

    def __len__(self):
        return self.size
