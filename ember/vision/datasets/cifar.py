"""CIFAR-10 and CIFAR-100 read from either of their two distributions, as torchvision's datasets.

- The python version (`cifar-10-batches-py/`, `cifar-100-python/`), which torchvision reads:
  pickled dicts whose "data" is a (N, 3072) uint8 array of channel-major 32x32 images, with
  "labels" (CIFAR-10) or "fine_labels" (CIFAR-100); class names in `batches.meta` / `meta`.
- The binary version (`cifar-10-batches-bin/`, `cifar-100-binary/`): fixed-size records of a
  label byte (CIFAR-100: a coarse then a fine label byte) followed by the 3072 image bytes; class
  names one per line in `batches.meta.txt` / `fine_label_names.txt`.

The python version is looked for first. Either way `data` is a NumPy uint8 array (N, 32, 32, 3)
(height, width, channel) and `targets` a list of ints, as torchvision's, and `dataset[i]` is a
(PIL RGB image, int) pair. The pickles are opened with an unpickler that builds nothing but
NumPy arrays and builtin containers, so a tampered batch file cannot run code.
"""
import codecs
import io
import os
import pickle

import numpy as np

from .utils import find_file, missing_files_error, pil_image, read_file_bytes
from .vision import VisionDataset

_IMAGE_BYTES = 3 * 32 * 32


class _ArrayUnpickler(pickle.Unpickler):
    """Resolves only the globals a pickled NumPy array refers to; refuses every other one."""

    _reconstruct = np.zeros(0).__reduce__()[0]
    _allowed = {
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("_codecs", "encode"): codecs.encode,  # how protocol 2 spells bytes under Python 3
    }

    def find_class(self, module, name):
        try:
            return self._allowed[module, name]
        except KeyError:
            raise pickle.UnpicklingError(
                f"a CIFAR batch holds only arrays, lists and dicts; refusing the global {module}.{name}"
            ) from None


def _unpickle(path):
    return _ArrayUnpickler(io.BytesIO(read_file_bytes(path)), encoding="latin1").load()


class CIFAR10(VisionDataset):
    """CIFAR-10: 50,000 training and 10,000 test colour images of 32x32 pixels in 10 classes.

    Args:
        root: the folder that holds `cifar-10-batches-py/` or `cifar-10-batches-bin/`.
        train: the five training batches if True, else the test batch.
        transform: applied to the PIL image.
        target_transform: applied to the int label.
        download: ember does not download; if the files are missing this raises RuntimeError.
    """

    base_folder = "cifar-10-batches-py"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    binary_folder = "cifar-10-batches-bin"
    binary_train_list = [f"data_batch_{i}.bin" for i in range(1, 6)]
    binary_test_list = ["test_batch.bin"]
    binary_meta = "batches.meta.txt"
    binary_label_bytes = 1  # bytes before each image; the label is the last of them

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        pickled = [name for name, _ in (self.train_list if train else self.test_list)]
        binary = self.binary_train_list if train else self.binary_test_list
        layouts = [(pickled + [self.meta["filename"]], [os.path.join(self.root, self.base_folder)]),
                   (binary + [self.binary_meta], [os.path.join(self.root, self.binary_folder)])]
        for (names, folders), load in zip(layouts, (self._load_pickled, self._load_binary)):
            paths = [find_file(name, folders) for name in names]
            if None not in paths:
                images, self.targets, self.classes = load(paths[:-1], paths[-1])
                break
        else:
            raise missing_files_error(type(self).__name__, layouts, download)
        # channel-major rows -> (N, H, W, C), the layout PIL and torchvision use
        self.data = images.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    def _load_pickled(self, batch_paths, meta_path):
        images, targets = [], []
        for path in batch_paths:
            entry = _unpickle(path)
            images.append(entry["data"])
            targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        classes = _unpickle(meta_path)[self.meta["key"]]
        return np.vstack(images), targets, classes

    def _load_binary(self, batch_paths, meta_path):
        record = self.binary_label_bytes + _IMAGE_BYTES
        rows = []
        for path in batch_paths:
            data = np.frombuffer(read_file_bytes(path), dtype=np.uint8)
            if data.size % record:
                raise ValueError(f"{path}: {data.size} bytes is not a whole number of "
                                 f"{record}-byte CIFAR records")
            rows.append(data.reshape(-1, record))
        rows = np.vstack(rows)
        with open(meta_path, encoding="utf-8") as f:
            classes = [line.strip() for line in f if line.strip()]
        targets = rows[:, self.binary_label_bytes - 1].astype(np.int64).tolist()
        return rows[:, self.binary_label_bytes:], targets, classes

    def __getitem__(self, index):
        return self._transformed(pil_image().fromarray(self.data[index]), self.targets[index])

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: CIFAR-10's images and sizes in 100 fine classes (targets are fine labels)."""

    base_folder = "cifar-100-python"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}

    binary_folder = "cifar-100-binary"
    binary_train_list = ["train.bin"]
    binary_test_list = ["test.bin"]
    binary_meta = "fine_label_names.txt"
    binary_label_bytes = 2  # coarse label, fine label
