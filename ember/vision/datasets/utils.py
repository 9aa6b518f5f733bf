"""Helpers shared by ember.vision's datasets: locating files on disk, checking them, and the
two optional things a dataset may need -- Pillow and a clear answer to `download=True`.

ember never reaches the network, so a dataset's files have to be on disk already. Every dataset
that torchvision would download raises one RuntimeError that lists the files to place and the
folders it looks in, whether or not `download=True` was passed.
"""
import bz2
import gzip
import hashlib
import lzma
import os

# A file may be stored compressed; a reader opens `name` or any of these variants of it.
_COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def pil_image():
    """PIL.Image, imported on first use: only datasets that hand out images need Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("ember.vision.datasets returns PIL images and needs Pillow: "
                          "pip install pillow (or pip install -e '.[examples]')") from None
    return Image


def find_file(name, folders):
    """The first existing path among `folder/name` and its compressed variants, or None."""
    for folder in folders:
        for suffix in ("", *_COMPRESSED):
            path = os.path.join(folder, name + suffix)
            if os.path.isfile(path):
                return path
    return None


def read_file_bytes(path):
    """The contents of `path`, decompressed by its suffix (.gz, .xz, .bz2) if it has one."""
    opener = _COMPRESSED.get(os.path.splitext(path)[1], open)
    with opener(path, "rb") as f:
        return f.read()


def missing_files_error(dataset, layouts, download):
    """The error for a dataset whose files are not on disk: which files to place where.

    `layouts` lists the accepted ways to lay the files out, as (file names, folders) pairs."""
    places = " or ".join(f"{', '.join(names)} in {' or '.join(str(f) for f in folders)}"
                         for names, folders in layouts)
    message = f"Dataset not found: {dataset} reads {places} (each file may also be gzip-compressed, with .gz)."
    if download:
        message += (" ember does not download datasets (download=True only checks that the "
                    "files are there): place the files there.")
    return RuntimeError(message)


def calculate_md5(path, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_integrity(path, md5=None):
    """The file exists and, when `md5` is given, has that MD5 (torchvision's check)."""
    if not os.path.isfile(path):
        return False
    return md5 is None or calculate_md5(path) == md5


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """`value` if it is a str among `valid_values`; ValueError otherwise, as torchvision's."""
    if not isinstance(value, str):
        where = "" if arg is None else f" for argument {arg}"
        raise ValueError(f"Expected type str{where}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is not None:
        raise ValueError(custom_msg)
    valid = ", ".join(f"'{v}'" for v in valid_values)
    raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are {{{valid}}}.")
