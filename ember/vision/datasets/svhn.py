"""SVHN and STL-10 read from their local files, as torchvision's datasets (nothing is
downloaded; download=True only checks that the files are there).

- SVHN: `{root}/{split}_32x32.mat` (split train / test / extra), MATLAB files read with
  scipy.io.loadmat: X is (32, 32, 3, N), y is 1..10 with 10 meaning the digit 0. `data` is
  (N, 3, 32, 32) uint8 and `labels` int64 in 0..9, as torchvision's.
- STL-10: `{root}/stl10_binary/` with train_X.bin / train_y.bin / unlabeled_X.bin / test_X.bin /
  test_y.bin (column-major 96x96 images, labels 1..10), class_names.txt and fold_indices.txt.
"""
import os

import numpy as np

from .utils import missing_files_error, pil_image, read_file_bytes, verify_str_arg
from .vision import VisionDataset

__all__ = ["SVHN", "STL10"]


class SVHN(VisionDataset):
    split_list = {"train": "train_32x32.mat", "test": "test_32x32.mat",
                  "extra": "extra_32x32.mat"}

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.filename = self.split_list[split]
        path = os.path.join(self.root, self.filename)
        if not os.path.isfile(path):
            raise missing_files_error("SVHN", [([self.filename], [self.root])], download)
        import scipy.io as sio
        loaded = sio.loadmat(path)
        self.labels = loaded["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)
        self.data = np.transpose(loaded["X"], (3, 2, 0, 1))

    def __getitem__(self, index):
        img = pil_image().fromarray(np.transpose(self.data[index], (1, 2, 0)))
        return self._transformed(img, int(self.labels[index]))

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {self.split}"


class STL10(VisionDataset):
    base_folder = "stl10_binary"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    splits = ("train", "train+unlabeled", "unlabeled", "test")
    _files = {"train": ["train_X.bin", "train_y.bin"],
              "train+unlabeled": ["train_X.bin", "train_y.bin", "unlabeled_X.bin"],
              "unlabeled": ["unlabeled_X.bin"], "test": ["test_X.bin", "test_y.bin"]}

    def __init__(self, root, split="train", folds=None, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        folder = os.path.join(self.root, self.base_folder)
        names = self._files[self.split]
        if not all(os.path.isfile(os.path.join(folder, n)) for n in names):
            raise missing_files_error("STL10", [(names, [folder])], download)
        if self.split in ("train", "train+unlabeled"):
            self.data, self.labels = self._loadfile("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if self.split == "train+unlabeled":
                unlabeled, _ = self._loadfile("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                self.labels = np.concatenate((self.labels, np.asarray([-1] * len(unlabeled))))
        elif self.split == "unlabeled":
            self.data, _ = self._loadfile("unlabeled_X.bin")
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self._loadfile("test_X.bin", "test_y.bin")
        class_file = os.path.join(folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    def _verify_folds(self, folds):
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError(f"Value for argument folds should be in the range [0, 10), but got "
                             f"{folds}.")
        raise ValueError(f"Expected type None or int for argument folds, but got type "
                         f"{type(folds)}.")

    def _loadfile(self, data_file, labels_file=None):
        folder = os.path.join(self.root, self.base_folder)
        labels = None
        if labels_file:
            labels = np.frombuffer(read_file_bytes(os.path.join(folder, labels_file)),
                                   dtype=np.uint8) - 1  # 0-based
        images = np.frombuffer(read_file_bytes(os.path.join(folder, data_file)), dtype=np.uint8)
        images = np.transpose(images.reshape(-1, 3, 96, 96), (0, 1, 3, 2))
        return images, labels

    def _load_folds(self, folds):
        if folds is None:
            return
        with open(os.path.join(self.root, self.base_folder, self.folds_list_file)) as f:
            idx = np.array(f.read().splitlines()[folds].split(), dtype=np.int64)
        self.data = self.data[idx]
        if self.labels is not None:
            self.labels = self.labels[idx]

    def __getitem__(self, index):
        target = int(self.labels[index]) if self.labels is not None else None
        img = pil_image().fromarray(np.transpose(self.data[index], (1, 2, 0)))
        return self._transformed(img, target)

    def __len__(self):
        return self.data.shape[0]

    def extra_repr(self):
        return "Split: {split}".format(**self.__dict__)
