"""The embedding projector's files: for each `add_embedding` call a directory
`<log_dir>/<step:05d>/<tag>/` with `tensors.tsv` (one point per line), `metadata.tsv` (its
labels, with a header row if given) and `sprite.png` (the points' images tiled in a square),
and one `projector_config.pbtxt` in the log directory listing every embedding written so far
-- what TensorBoard's projector plugin reads."""
import io
import math
import os

import numpy as np

from ._utils import make_grid, make_np

__all__ = ["write_embedding"]


def _encode(tag):
    """The tag as one path component ("%", "/" and "\\" escaped as %xx)."""
    for ch in "%/\\":
        tag = tag.replace(ch, f"%{ord(ch):02x}")
    return tag


def _write_tsv(metadata, path, header):
    if header:
        if len(header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [header] + list(metadata)]
    else:
        lines = [str(x) for x in metadata]
    with open(os.path.join(path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())


def _write_sprite(label_img, path):
    from PIL import Image
    images = make_np(label_img)
    grid = make_grid(images, ncols=math.ceil(images.shape[0] ** 0.5))  # 3 x H' x W'
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    with io.BytesIO() as buf:
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buf, format="PNG")
        data = buf.getvalue()
    with open(os.path.join(path, "sprite.png"), "wb") as f:
        f.write(data)


def _write_points(mat, path):
    with open(os.path.join(path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())


def write_embedding(config, log_dir, mat, metadata, label_img, global_step, tag,
                    metadata_header):
    """Write one embedding's files and add it to `config` (a ProjectorConfig), then rewrite
    projector_config.pbtxt from it."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo
    mat = make_np(mat)
    global_step = 0 if global_step is None else global_step
    subdir = f"{str(global_step).zfill(5)}/{_encode(tag)}"
    path = os.path.join(log_dir, subdir)
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise NotADirectoryError(f"Path: `{path}` exists, but is a file. Cannot proceed.")
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    else:
        os.makedirs(path)
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write_tsv(metadata, path, metadata_header)
    if label_img is not None:
        if mat.shape[0] != label_img.shape[0]:
            raise AssertionError("#images should equal with #data points")
        _write_sprite(label_img, path)
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    _write_points(mat, path)
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}",
                         tensor_path=os.path.join(subdir, "tensors.tsv"))
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    config.embeddings.extend([info])
    with open(os.path.join(log_dir, "projector_config.pbtxt"), "wb") as f:
        f.write(text_format.MessageToString(config).encode())
