"""VisionDataset: the base class of ember.vision's datasets, as torchvision's.

It stores `root` (with `~` expanded), the `transform` applied to the sample and the
`target_transform` applied to the target, or one joint `transforms(sample, target)`; its repr
lists the number of datapoints, the root, the subclass's `extra_repr()` and the transforms.
"""
import os

from ...utils.data import Dataset


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root

        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")

        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def _transformed(self, sample, target):
        """The pair through `transform` and `target_transform`, read on every call so that
        assigning `dataset.transform = ...` later takes effect, as in torchvision."""
        return _apply(self.transform, self.target_transform, sample, target)

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def __repr__(self):
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        indent = " " * self._repr_indent
        return "\n".join([f"Dataset {type(self).__name__}"] + [indent + line for line in body])

    def extra_repr(self):
        return ""


def _apply(transform, target_transform, sample, target):
    if transform is not None:
        sample = transform(sample)
    if target_transform is not None:
        target = target_transform(target)
    return sample, target


def _format_transform_repr(transform, head):
    lines = repr(transform).splitlines()
    return [head + lines[0]] + [" " * len(head) + line for line in lines[1:]]


class StandardTransform:
    """`transform` on the sample and `target_transform` on the target, as one callable."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        return _apply(self.transform, self.target_transform, input, target)

    def __repr__(self):
        body = [type(self).__name__]
        if self.transform is not None:
            body += _format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += _format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)
