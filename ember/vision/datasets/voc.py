"""Pascal VOC (2007-2012) segmentation and detection from a local VOCdevkit, as torchvision's
VOCSegmentation / VOCDetection (nothing is downloaded): the image set's ids from
`ImageSets/{Segmentation,Main}/{image_set}.txt`, images from JPEGImages, targets the
SegmentationClass PNG (a PIL image) or the Annotations XML parsed into nested dicts."""
import collections
import os
from xml.etree.ElementTree import parse as ET_parse

from .utils import missing_files_error, pil_image, verify_str_arg
from .vision import VisionDataset

__all__ = ["VOCSegmentation", "VOCDetection"]

_BASE_DIRS = {"2011": os.path.join("TrainVal", "VOCdevkit", "VOC2011")}


class _VOCBase(VisionDataset):
    _SPLITS_DIR = ""
    _TARGET_DIR = ""
    _TARGET_FILE_EXT = ""

    def __init__(self, root, year="2012", image_set="train", download=False, transform=None,
                 target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year",
                                   valid_values=[str(yr) for yr in range(2007, 2013)])
        valid_image_sets = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set = verify_str_arg(image_set, "image_set", valid_image_sets)
        voc_root = os.path.join(self.root,
                                _BASE_DIRS.get(year, os.path.join("VOCdevkit", f"VOC{year}")))
        split_f = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR,
                               image_set.rstrip("\n") + ".txt")
        if not os.path.isfile(split_f):
            raise missing_files_error(type(self).__name__,
                                      [([os.path.relpath(split_f, voc_root)], [voc_root])],
                                      download)
        with open(split_f) as f:
            file_names = [x.strip() for x in f.readlines()]
        self.images = [os.path.join(voc_root, "JPEGImages", x + ".jpg") for x in file_names]
        self.targets = [os.path.join(voc_root, self._TARGET_DIR, x + self._TARGET_FILE_EXT)
                        for x in file_names]

    def __len__(self):
        return len(self.images)


class VOCSegmentation(_VOCBase):
    _SPLITS_DIR = "Segmentation"
    _TARGET_DIR = "SegmentationClass"
    _TARGET_FILE_EXT = ".png"

    @property
    def masks(self):
        return self.targets

    def __getitem__(self, index):
        Image = pil_image()
        img = Image.open(self.images[index]).convert("RGB")
        target = Image.open(self.masks[index])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target


class VOCDetection(_VOCBase):
    _SPLITS_DIR = "Main"
    _TARGET_DIR = "Annotations"
    _TARGET_FILE_EXT = ".xml"

    @property
    def annotations(self):
        return self.targets

    def __getitem__(self, index):
        img = pil_image().open(self.images[index]).convert("RGB")
        target = self.parse_voc_xml(ET_parse(self.annotations[index]).getroot())
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    @staticmethod
    def parse_voc_xml(node):
        """The XML tree as nested dicts: repeated tags become lists, and "object" under
        "annotation" is always a list."""
        voc_dict = {}
        children = list(node)
        if children:
            def_dic = collections.defaultdict(list)
            for dc in map(VOCDetection.parse_voc_xml, children):
                for ind, v in dc.items():
                    def_dic[ind].append(v)
            if node.tag == "annotation":
                def_dic["object"] = [def_dic["object"]]
            voc_dict = {node.tag: {ind: v[0] if len(v) == 1 else v
                                   for ind, v in def_dic.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict
