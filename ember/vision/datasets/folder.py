"""DatasetFolder and ImageFolder: one sub-folder per class, as torchvision's.

    root/cat/001.png        classes      = ["cat", "dog"]   (sorted folder names)
    root/cat/nested/002.png class_to_idx = {"cat": 0, "dog": 1}
    root/dog/003.png        samples      = [(path, class index), ...] in sorted walk order

A file is a sample when its name ends with one of `extensions` (case-insensitive) or, instead,
when `is_valid_file(path)` says so -- exactly one of the two must be given. A class folder with
no valid file is an error unless `allow_empty=True`.
"""
import os

from .utils import pil_image
from .vision import VisionDataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    """Whether `filename` ends with one of `extensions` (a str or an iterable of str)."""
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def is_image_file(filename):
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """(classes, class_to_idx) from the sub-folders of `directory`, sorted by name."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
    """The (path, class index) pairs under `directory`, class by class in sorted order."""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)

    instances, found = [], set()
    for target_class in sorted(class_to_idx):
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for folder, _, file_names in sorted(os.walk(target_dir, followlinks=True)):
            for file_name in sorted(file_names):
                path = os.path.join(folder, file_name)
                if is_valid_file(path):
                    instances.append((path, class_to_idx[target_class]))
                    found.add(target_class)

    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        message = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            listed = extensions if isinstance(extensions, str) else ", ".join(extensions)
            message += f"Supported extensions are: {listed}"
        raise FileNotFoundError(message)
    return instances


class DatasetFolder(VisionDataset):
    """Samples stored as `root/<class>/**/<file>`, loaded by `loader(path)`.

    Attributes: `classes`, `class_to_idx`, `samples` ((path, class index) pairs) and `targets`.
    Subclasses may override `find_classes` and `make_dataset` to change how folders map to
    classes and files to samples."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [target for _, target in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
        if class_to_idx is None:
            # None would make the module-level function find the classes itself, silently
            # bypassing an overridden find_classes.
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions,
                            is_valid_file=is_valid_file, allow_empty=allow_empty)

    def find_classes(self, directory):
        return find_classes(directory)

    def __getitem__(self, index):
        path, target = self.samples[index]
        return self._transformed(self.loader(path), target)

    def __len__(self):
        return len(self.samples)


def pil_loader(path):
    """The image at `path` as an RGB PIL image (read fully, so the file is closed)."""
    with open(path, "rb") as f:
        return pil_image().open(f).convert("RGB")


def default_loader(path):
    return pil_loader(path)


class ImageFolder(DatasetFolder):
    """A DatasetFolder of images (IMG_EXTENSIONS) opened as RGB PIL images; `imgs` = `samples`."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
