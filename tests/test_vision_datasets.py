"""ember.vision.datasets: IDX files (the bundled MNIST and tiny files written here), CIFAR in
both of its distributions, ImageFolder on PNGs, FakeData against torch's generator, and the
errors for missing files and bad arguments."""
import gzip
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
import ember  # noqa: E402
from ember.vision import datasets  # noqa: E402
from ember.vision.datasets.mnist import read_sn3_pascalvincent_tensor  # noqa: E402
from ember.vision.datasets.utils import check_integrity  # noqa: E402

BUNDLED = Path(__file__).resolve().parents[1] / "data" / "mnist"
_IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}


def write_idx(path, array, compress=False):
    """`array` as an IDX file: zero, zero, type code, ndim, big-endian sizes, big-endian values."""
    array = np.asarray(array)
    header = bytes([0, 0, _IDX_CODES[array.dtype.type], array.ndim])
    header += np.array(array.shape, dtype=">u4").tobytes()
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path = Path(str(path) + (".gz" if compress else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


def write_mnist_like(folder, prefix, n, seed, compress=False, label_high=10):
    """A tiny `<prefix>-images-idx3-ubyte` / `<prefix>-labels-idx1-ubyte` pair; returns the arrays."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, label_high, n, dtype=np.uint8)
    write_idx(Path(folder) / f"{prefix}-images-idx3-ubyte", images, compress)
    write_idx(Path(folder) / f"{prefix}-labels-idx1-ubyte", labels, compress)
    return images, labels


# ---------------------------------------------------------------------------------------------
# IDX reading

@pytest.fixture(scope="module")
def bundled_test_split():
    return datasets.MNIST(str(BUNDLED), train=False)


def test_bundled_mnist_sizes_and_dtypes(bundled_test_split):
    train = datasets.MNIST(str(BUNDLED))
    for ds, n in ((train, 60000), (bundled_test_split, 10000)):
        assert len(ds) == n
        assert ds.data.shape == (n, 28, 28) and ds.data.dtype == ember.uint8
        assert ds.targets.shape == (n,) and ds.targets.dtype == ember.int64
        counts = np.bincount(ds.targets.numpy(), minlength=10)
        assert counts.sum() == n and len(counts) == 10 and counts.min() > 0.08 * n
    assert train.classes[0] == "0 - zero" and train.class_to_idx["9 - nine"] == 9


def test_bundled_files_have_the_published_md5s(tmp_path):
    for name, md5 in datasets.MNIST.resources:
        assert check_integrity(str(BUNDLED / name), md5), name
    assert not check_integrity(str(BUNDLED / "train-images-idx3-ubyte.gz"), md5)
    assert not check_integrity(str(tmp_path / "absent"))


def test_bundled_mnist_matches_raw_bytes(bundled_test_split):
    raw = gzip.decompress((BUNDLED / "t10k-images-idx3-ubyte.gz").read_bytes())
    expected = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(10000, 28, 28)
    np.testing.assert_array_equal(bundled_test_split.data.numpy(), expected)
    labels = np.frombuffer(gzip.decompress((BUNDLED / "t10k-labels-idx1-ubyte.gz").read_bytes()),
                           dtype=np.uint8, offset=8)
    np.testing.assert_array_equal(bundled_test_split.targets.numpy(), labels)


def test_getitem_pil_image_and_int(bundled_test_split):
    img, target = bundled_test_split[3]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    np.testing.assert_array_equal(np.asarray(img), bundled_test_split.data[3].numpy())
    assert type(target) is int and target == int(bundled_test_split.targets[3])
    # keys other than an in-range int go through the tensor's own indexing, as in torchvision
    for key in (-1, ember.tensor(9999), np.int64(5)):
        img, target = bundled_test_split[key]
        np.testing.assert_array_equal(np.asarray(img), bundled_test_split.data[key].numpy())
        assert target == int(bundled_test_split.targets[key])
    with pytest.raises(IndexError):
        bundled_test_split[10000]


@pytest.mark.parametrize("dtype", list(_IDX_CODES))
@pytest.mark.parametrize("compress", [False, True])
def test_idx_every_type_code(tmp_path, dtype, compress):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal((3, 4, 5)) * 100).astype(dtype)
    path = write_idx(tmp_path / "x-idx3", array, compress)
    got = read_sn3_pascalvincent_tensor(str(path))
    assert str(got.dtype) == str(torch.from_numpy(array).dtype)
    np.testing.assert_array_equal(got.numpy(), array)


def test_idx_bad_files(tmp_path):
    path = write_idx(tmp_path / "short", np.arange(12, dtype=np.int32).reshape(3, 4))
    path.write_bytes(path.read_bytes()[:-4])  # one value missing
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        read_sn3_pascalvincent_tensor(str(path))
    (tmp_path / "text").write_bytes(b"hello world")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_sn3_pascalvincent_tensor(str(tmp_path / "text"))
    # int32 images are not MNIST images
    write_idx(tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte", np.zeros((2, 28, 28), np.int32))
    write_idx(tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte", np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match="torch.uint8"):
        datasets.MNIST(str(tmp_path), train=False)


@pytest.mark.parametrize("layout", ["torchvision", "flat"])
@pytest.mark.parametrize("compress", [False, True])
def test_mnist_file_layouts(tmp_path, layout, compress):
    folder = tmp_path / "MNIST" / "raw" if layout == "torchvision" else tmp_path
    images, labels = write_mnist_like(folder, "t10k", 7, seed=1, compress=compress)
    ds = datasets.MNIST(tmp_path, train=False)  # a pathlib.Path root works too
    np.testing.assert_array_equal(ds.data.numpy(), images)
    np.testing.assert_array_equal(ds.targets.numpy(), labels.astype(np.int64))
    assert ds.raw_folder == os.path.join(tmp_path, "MNIST", "raw")


def test_transforms_and_repr(tmp_path):
    images, labels = write_mnist_like(tmp_path / "FashionMNIST" / "raw", "train", 5, seed=2)
    ds = datasets.FashionMNIST(str(tmp_path), transform=np.asarray, target_transform=lambda t: t + 100)
    img, target = ds[4]
    np.testing.assert_array_equal(img, images[4])
    assert target == int(labels[4]) + 100
    ds.transform = None  # read on every access, as torchvision's
    assert isinstance(ds[4][0], Image.Image)
    assert ds.classes[9] == "Ankle boot" and ds.class_to_idx["Trouser"] == 1
    assert repr(ds).splitlines() == [
        "Dataset FashionMNIST",
        "    Number of datapoints: 5",
        f"    Root location: {tmp_path}",
        "    Split: Train",
        "    StandardTransform",
        f"Transform: {np.asarray!r}",
        f"Target transform: {ds.target_transform!r}",
    ]
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform"):
        datasets.vision.VisionDataset(str(tmp_path), transforms=print, transform=print)
    assert datasets.VisionDataset("~/x").root == os.path.expanduser("~/x")


def test_kmnist_reads_its_own_folder(tmp_path):
    write_mnist_like(tmp_path / "KMNIST" / "raw", "t10k", 3, seed=3)
    with pytest.raises(RuntimeError, match="MNIST reads"):  # each class has its own raw folder
        datasets.MNIST(str(tmp_path), train=False)
    ds = datasets.KMNIST(str(tmp_path), train=False)
    assert len(ds) == 3 and ds.classes[0] == "o"


def test_missing_files_and_download(tmp_path):
    with pytest.raises(RuntimeError) as info:
        datasets.MNIST(str(tmp_path), download=True)
    message = str(info.value)
    for needed in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                   os.path.join(str(tmp_path), "MNIST", "raw"), "does not download"):
        assert needed in message
    # only the file that is missing is named
    write_mnist_like(tmp_path, "t10k", 2, seed=4)
    os.remove(tmp_path / "t10k-labels-idx1-ubyte")
    with pytest.raises(RuntimeError, match="t10k-labels-idx1-ubyte in") as info:
        datasets.MNIST(str(tmp_path), train=False)
    assert "images" not in str(info.value) and "does not download" not in str(info.value)
    # download=True with the files in place just loads them
    write_mnist_like(tmp_path, "t10k", 2, seed=4)
    assert len(datasets.MNIST(str(tmp_path), train=False, download=True)) == 2


def test_emnist_split_files_and_classes(tmp_path):
    images, labels = write_mnist_like(tmp_path / "EMNIST" / "raw", "emnist-letters-test", 4, seed=5,
                                      compress=True, label_high=27)
    ds = datasets.EMNIST(str(tmp_path), split="letters", train=False)
    # kept as stored, i.e. transposed compared with MNIST, as torchvision does
    np.testing.assert_array_equal(ds.data.numpy(), images)
    assert ds.classes == ["N/A"] + list("abcdefghijklmnopqrstuvwxyz")
    assert len(datasets.EMNIST.classes_split_dict["byclass"]) == 62
    assert len(datasets.EMNIST.classes_split_dict["balanced"]) == 47
    with pytest.raises(ValueError, match="Unknown value 'bad' for argument split. Valid values are "
                                         "{'byclass', 'bymerge', 'balanced', 'letters', 'digits', 'mnist'}."):
        datasets.EMNIST(str(tmp_path), split="bad")
    with pytest.raises(RuntimeError, match="emnist-digits-train-images-idx3-ubyte"):
        datasets.EMNIST(str(tmp_path), split="digits")


def test_qmnist_int32_label_rows(tmp_path):
    rng = np.random.default_rng(6)
    images = rng.integers(0, 256, (12, 28, 28), dtype=np.uint8)
    rows = rng.integers(0, 10, (12, 8), dtype=np.int32)
    write_idx(tmp_path / "QMNIST" / "raw" / "qmnist-test-images-idx3-ubyte", images, compress=True)
    write_idx(tmp_path / "QMNIST" / "raw" / "qmnist-test-labels-idx2-int", rows, compress=True)
    ds = datasets.QMNIST(str(tmp_path), train=False)
    assert ds.targets.dtype == ember.int64 and ds.targets.shape == (12, 8)
    assert ds[5][1] == int(rows[5, 0])
    full = datasets.QMNIST(str(tmp_path), what="test10k", compat=False)  # the first 10,000
    assert len(full) == 12 and full[11][1].tolist() == rows[11].tolist()
    assert "Split: test10k" in repr(full)
    assert len(datasets.QMNIST(str(tmp_path), what="test50k")) == 0  # those after 10,000


# ---------------------------------------------------------------------------------------------
# CIFAR

def _cifar_arrays(n, seed, classes):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 3072), dtype=np.uint8), rng.integers(0, classes, n).tolist()


def write_cifar(root, hundred, binary, per_batch=3):
    """CIFAR files in one of the real layouts; returns {train: (rows, labels)} of what was written."""
    classes = 100 if hundred else 10
    names = [f"class{i}" for i in range(classes)]
    batches = {True: ["train"] if hundred else [f"data_batch_{i}" for i in range(1, 6)],
               False: ["test"] if hundred else ["test_batch"]}
    if binary:
        folder = Path(root) / ("cifar-100-binary" if hundred else "cifar-10-batches-bin")
    else:
        folder = Path(root) / ("cifar-100-python" if hundred else "cifar-10-batches-py")
    folder.mkdir(parents=True)
    written = {}
    for train, files in batches.items():
        all_rows, all_labels = [], []
        for i, name in enumerate(files):
            rows, labels = _cifar_arrays(per_batch, seed=10 * train + i, classes=classes)
            all_rows.append(rows)
            all_labels += labels
            if binary:
                label_bytes = [np.array(labels, np.uint8)[:, None]]
                if hundred:  # coarse label first
                    label_bytes.insert(0, (np.array(labels, np.uint8) // 5)[:, None])
                (folder / f"{name}.bin").write_bytes(np.hstack(label_bytes + [rows]).tobytes())
            else:
                key = "fine_labels" if hundred else "labels"
                entry = {"batch_label": name, key: labels, "data": rows}
                if hundred:
                    entry["coarse_labels"] = [label // 5 for label in labels]
                (folder / name).write_bytes(pickle.dumps(entry, protocol=2))
        written[train] = (np.vstack(all_rows), all_labels)
    if binary:
        meta = "fine_label_names.txt" if hundred else "batches.meta.txt"
        (folder / meta).write_text("\n".join(names) + "\n")
    else:
        meta, key = ("meta", "fine_label_names") if hundred else ("batches.meta", "label_names")
        (folder / meta).write_bytes(pickle.dumps({key: names, "num_vis": 3072}, protocol=2))
    return written, names


@pytest.mark.parametrize("hundred", [False, True], ids=["cifar10", "cifar100"])
@pytest.mark.parametrize("binary", [False, True], ids=["python", "binary"])
def test_cifar_layouts(tmp_path, hundred, binary):
    written, names = write_cifar(tmp_path, hundred, binary)
    cls = datasets.CIFAR100 if hundred else datasets.CIFAR10
    for train in (True, False):
        ds = cls(str(tmp_path), train=train)
        rows, labels = written[train]
        assert isinstance(ds.data, np.ndarray) and ds.data.dtype == np.uint8
        np.testing.assert_array_equal(ds.data, rows.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        assert ds.targets == labels and all(type(t) is int for t in ds.targets)
        assert ds.classes == names and ds.class_to_idx[names[-1]] == len(names) - 1
        img, target = ds[len(ds) - 1]
        assert img.mode == "RGB" and img.size == (32, 32) and target == labels[-1]
        np.testing.assert_array_equal(np.asarray(img), rows[-1].reshape(3, 32, 32).transpose(1, 2, 0))
        assert f"Split: {'Train' if train else 'Test'}" in repr(ds)


def test_cifar_missing_and_unsafe_pickle(tmp_path):
    with pytest.raises(RuntimeError, match="cifar-10-batches-py.*cifar-10-batches-bin") as info:
        datasets.CIFAR10(str(tmp_path), download=True)
    assert "data_batch_5" in str(info.value) and "does not download" in str(info.value)

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo owned",))

    write_cifar(tmp_path, hundred=False, binary=False)
    (tmp_path / "cifar-10-batches-py" / "test_batch").write_bytes(pickle.dumps({"data": Evil()}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="system"):
        datasets.CIFAR10(str(tmp_path), train=False)


# ---------------------------------------------------------------------------------------------
# ImageFolder / DatasetFolder

@pytest.fixture
def image_tree(tmp_path):
    """root/{cat,dog,empty}/ with PNGs of distinct solid colours, a nested one and a stray file."""
    colours = {"cat/b.png": (10, 20, 30), "cat/a.PNG": (40, 50, 60), "cat/sub/c.png": (70, 80, 90),
               "dog/z.png": (100, 110, 120)}
    for rel, colour in colours.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB" if "dog" not in rel else "L", (4, 3), colour if "dog" not in rel else 200).save(path)
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    (tmp_path / "empty").mkdir()
    return tmp_path


def test_image_folder(image_tree):
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty. "
                                                "Supported extensions are: .jpg, .jpeg"):
        datasets.ImageFolder(str(image_tree))
    ds = datasets.ImageFolder(str(image_tree), allow_empty=True)
    assert ds.classes == ["cat", "dog", "empty"] and ds.class_to_idx == {"cat": 0, "dog": 1, "empty": 2}
    rel = [os.path.relpath(path, image_tree) for path, _ in ds.samples]
    assert rel == ["cat/a.PNG", "cat/b.png", os.path.join("cat", "sub", "c.png"), "dog/z.png"]
    assert ds.targets == [0, 0, 0, 1] and ds.imgs is ds.samples
    img, target = ds[2]
    assert img.mode == "RGB" and img.size == (4, 3) and target == 0
    assert np.asarray(img)[0, 0].tolist() == [70, 80, 90]
    assert np.asarray(ds[3][0])[0, 0].tolist() == [200, 200, 200]  # "L" converted to RGB


def test_dataset_folder_options(image_tree):
    ds = datasets.DatasetFolder(str(image_tree), loader=os.path.getsize, extensions=".txt", allow_empty=True)
    assert [t for _, t in ds.samples] == [1] and ds[0] == (len("not an image"), 1)
    ds = datasets.ImageFolder(str(image_tree), is_valid_file=lambda p: p.endswith("b.png"), allow_empty=True)
    assert [os.path.basename(p) for p, _ in ds.samples] == ["b.png"]
    with pytest.raises(ValueError, match="Both extensions and is_valid_file cannot be None"):
        datasets.DatasetFolder(str(image_tree), loader=print)
    with pytest.raises(ValueError, match="Both extensions and is_valid_file cannot be None"):
        datasets.DatasetFolder(str(image_tree), loader=print, extensions=".png", is_valid_file=bool)
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        datasets.find_classes(str(image_tree / "cat" / "sub"))
    assert datasets.find_classes(str(image_tree)) == (["cat", "dog", "empty"], {"cat": 0, "dog": 1, "empty": 2})
    with pytest.raises(ValueError, match="must have at least one entry"):
        datasets.make_dataset(str(image_tree), {}, extensions=".png")
    assert datasets.default_loader(str(image_tree / "dog" / "z.png")).mode == "RGB"


# ---------------------------------------------------------------------------------------------
# FakeData

@pytest.mark.parametrize("image_size,mode", [((3, 5, 6), "RGB"), ((1, 4, 4), "L")])
def test_fakedata_matches_torch_seeding(image_size, mode):
    ds = datasets.FakeData(size=4, image_size=image_size, num_classes=7, random_offset=11,
                           target_transform=lambda t: t + 1)
    for index in (0, 3):
        img, target = ds[index]
        torch.manual_seed(index + 11)
        expected = torch.randn(*image_size).mul(255).byte().permute(1, 2, 0).numpy()
        expected_target = torch.randint(0, 7, size=(1,), dtype=torch.long)[0].item() + 1
        assert img.mode == mode and img.size == image_size[:0:-1]
        np.testing.assert_array_equal(np.asarray(img).reshape(expected.shape), expected)
        assert target == expected_target
    # the caller's random stream continues as if no sample had been drawn
    ember.manual_seed(123)
    expected_stream = ember.rand(6).tolist()
    ember.manual_seed(123)
    first = ember.rand(3).tolist()
    ds[1]
    assert first + ember.rand(3).tolist() == expected_stream
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[4]
    assert repr(ds).splitlines()[:2] == ["Dataset FakeData", "    Number of datapoints: 4"]
