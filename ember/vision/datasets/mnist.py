"""MNIST and its relatives (Fashion-MNIST, KMNIST, EMNIST, QMNIST) read from IDX files, as
torchvision's datasets.

IDX (LeCun's "SN3" format) is a tiny header and a raw array: two zero bytes, a type code
(0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of
dimensions, one big-endian uint32 per dimension, then the values, big-endian, row-major.

Where the files are looked for: torchvision's layout `root/<ClassName>/raw/`, and also `root`
itself, so that `MNIST("data/mnist")` reads the four files bundled with ember. Each file may be
plain or compressed (`train-images-idx3-ubyte` or `train-images-idx3-ubyte.gz`). Nothing is
downloaded: `download=True` succeeds when the files are there and otherwise raises a
RuntimeError that names the files and the folders.

`data` is a uint8 tensor (N, 28, 28) and `targets` an int64 tensor, as in torchvision;
`dataset[i]` is a (PIL image of mode "L", int) pair, passed through `transform` and
`target_transform`. For training it is much faster to convert `data` once
(`data.float().div(255)`) than to go through PIL per sample.
"""
import os
import string

import numpy as np

from ... import from_numpy, uint8
from .utils import find_file, missing_files_error, pil_image, read_file_bytes, verify_str_arg
from .vision import VisionDataset

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_sn3_pascalvincent_tensor(path, strict=True):
    """The array stored in the IDX file at `path` (plain or compressed) as an ember tensor.

    With `strict`, the payload must hold exactly the number of values the header announces."""
    data = read_file_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file: its header is {data[:4]!r}")
    ndim = data[3]
    header = 4 * (ndim + 1)
    shape = tuple(int(n) for n in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    count = int(np.prod(shape))
    available = (len(data) - header) // dtype.itemsize
    if available < count or (strict and available != count):
        raise ValueError(f"{path}: the header announces shape {shape} ({count} values) "
                         f"but the file holds {available}")
    values = np.frombuffer(data, dtype=dtype, count=count, offset=header)
    # astype makes a writable array in native byte order (a copy of the file's bytes).
    return from_numpy(values.astype(dtype.newbyteorder("="))).view(tuple(shape))


def _read_uint8_file(path, ndim):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"x should have {ndim} dimension{'s' if ndim > 1 else ''} instead of {x.ndim}")
    return x


def read_image_file(path):
    """The (N, rows, cols) uint8 images of an idx3-ubyte file."""
    return _read_uint8_file(path, 3)


def read_label_file(path):
    """The N labels of an idx1-ubyte file as int64."""
    return _read_uint8_file(path, 1).long()


class MNIST(VisionDataset):
    """The MNIST digits: 60,000 training and 10,000 test images of 28x28 pixels.

    Args:
        root: folder holding the IDX files, directly or in `MNIST/raw/` (torchvision's layout).
        train: the training files (`train-*`) if True, else the test files (`t10k-*`).
        transform: applied to the PIL image.
        target_transform: applied to the int label.
        download: ember does not download; if the files are missing this raises RuntimeError.
    """

    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        paths = [find_file(name, self._folders) for name in self._file_names]
        if None in paths:
            missing = [name for name, path in zip(self._file_names, paths) if path is None]
            raise missing_files_error(type(self).__name__, [(missing, self._folders)], download)
        self.data, self.targets = self._load_data(*paths)

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def _folders(self):
        return [self.raw_folder, self.root]

    @property
    def _file_names(self):
        """The (images, labels) files of the chosen split, without compression suffix."""
        prefix = "train" if self.train else "t10k"
        return [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]

    def _load_data(self, images_path, labels_path):
        return read_image_file(images_path), read_label_file(labels_path)

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.classes)}

    def _target(self, index):
        return int(self.targets[index])

    def __getitem__(self, index):
        data = self.data
        if type(index) is int and 0 <= index < len(data):  # what samplers yield: read in
            pixels = data.numpy()[index]                   # place, without a select op
        else:
            pixels = data[index].numpy()
        img = pil_image().fromarray(pixels)  # uint8 2-D -> mode "L"
        return self._transformed(img, self._target(index))

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's file names and sizes, ten kinds of clothing."""

    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: MNIST's file names and sizes, ten cursive Japanese characters."""

    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """Extended MNIST: handwritten digits and letters in six splits, read from
    `emnist-<split>-<train|test>-{images-idx3,labels-idx1}-ubyte`.

    As in torchvision, the images are returned as the files store them, which is transposed
    (each image is mirrored along its diagonal) compared with MNIST; `img.transpose(-1, -2)`
    on `data`, or PIL's `Image.Transpose.TRANSPOSE` on a sample, turns them upright.
    """

    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    # In bymerge and balanced, these letters' upper and lower case are one class.
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @property
    def _file_names(self):
        prefix = f"emnist-{self.split}-{'train' if self.train else 'test'}"
        return [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]


class QMNIST(MNIST):
    """QMNIST: MNIST's images reconstructed from NIST, with 8 int32 columns of labels per image.

    `what` picks "train", "test" (60,000 images), "test10k" (those matching MNIST's test set),
    "test50k" (the rest) or "nist" (all of NIST); by default "train" or "test" following
    `train`. With `compat` (the default) a target is the digit's class, else the full row."""

    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test", "nist": "nist"}
    _files = {
        "train": ["qmnist-train-images-idx3-ubyte", "qmnist-train-labels-idx2-int"],
        "test": ["qmnist-test-images-idx3-ubyte", "qmnist-test-labels-idx2-int"],
        "nist": ["xnist-images-idx3-ubyte", "xnist-labels-idx2-int"],
    }

    def __init__(self, root, what=None, compat=True, train=True, **kwargs):
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        super().__init__(root, train, **kwargs)

    @property
    def _file_names(self):
        return self._files[self.subsets[self.what]]

    def _load_data(self, images_path, labels_path):
        data = read_image_file(images_path)
        targets = read_sn3_pascalvincent_tensor(labels_path).long()
        if targets.ndim != 2:
            raise ValueError(f"targets should have 2 dimensions instead of {targets.ndim}")
        if self.what == "test10k":
            data, targets = data[:10000].clone(), targets[:10000].clone()
        elif self.what == "test50k":
            data, targets = data[10000:].clone(), targets[10000:].clone()
        return data, targets

    def _target(self, index):
        target = self.targets[index]
        return int(target[0]) if self.compat else target

    def extra_repr(self):
        return f"Split: {self.what}"
