"""COCO detection and captions (torchvision's CocoDetection / CocoCaptions) from a local image
folder and annotation JSON. With pycocotools installed `self.coco` is its COCO index, as in
torchvision; without it, `self.coco` is `_CocoIndex`, ember's reader of the JSON with the
methods these datasets use (getImgIds, getAnnIds, getCatIds, loadImgs, loadAnns, loadCats,
and the imgs / anns / cats / imgToAnns tables), so the dataset works without the C extension.
"""
import itertools
import json
import os
from collections import defaultdict

from .utils import pil_image
from .vision import VisionDataset

__all__ = ["CocoDetection", "CocoCaptions"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class _CocoIndex:
    """The annotation file indexed like pycocotools.coco.COCO (annotation order kept)."""

    def __init__(self, annotation_file):
        with open(annotation_file) as f:
            self.dataset = json.load(f)
        self.anns, self.cats, self.imgs = {}, {}, {}
        self.imgToAnns, self.catToImgs = defaultdict(list), defaultdict(list)
        for ann in self.dataset.get("annotations", []):
            self.imgToAnns[ann["image_id"]].append(ann)
            self.anns[ann["id"]] = ann
        for img in self.dataset.get("images", []):
            self.imgs[img["id"]] = img
        for cat in self.dataset.get("categories", []):
            self.cats[cat["id"]] = cat
        if "annotations" in self.dataset and "categories" in self.dataset:
            for ann in self.dataset["annotations"]:
                self.catToImgs[ann["category_id"]].append(ann["image_id"])

    def getAnnIds(self, imgIds=(), catIds=(), areaRng=(), iscrowd=None):
        imgIds, catIds = _as_list(imgIds), _as_list(catIds)
        if imgIds:
            anns = list(itertools.chain.from_iterable(
                self.imgToAnns[i] for i in imgIds if i in self.imgToAnns))
        else:
            anns = self.dataset.get("annotations", [])
        if catIds:
            anns = [a for a in anns if a["category_id"] in catIds]
        if areaRng:
            anns = [a for a in anns if areaRng[0] < a["area"] < areaRng[1]]
        if iscrowd is not None:
            return [a["id"] for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self, catNms=(), supNms=(), catIds=()):
        cats = self.dataset.get("categories", [])
        catNms, supNms, catIds = _as_list(catNms), _as_list(supNms), _as_list(catIds)
        if catNms:
            cats = [c for c in cats if c["name"] in catNms]
        if supNms:
            cats = [c for c in cats if c["supercategory"] in supNms]
        if catIds:
            cats = [c for c in cats if c["id"] in catIds]
        return [c["id"] for c in cats]

    def getImgIds(self, imgIds=(), catIds=()):
        ids = set(_as_list(imgIds) or self.imgs.keys())
        for i, cat in enumerate(_as_list(catIds)):
            ids = set(self.catToImgs[cat]) if i == 0 and not imgIds else \
                ids & set(self.catToImgs[cat])
        return list(ids)

    def loadAnns(self, ids=()):
        return [self.anns[i] for i in _as_list(ids)]

    def loadCats(self, ids=()):
        return [self.cats[i] for i in _as_list(ids)]

    def loadImgs(self, ids=()):
        return [self.imgs[i] for i in _as_list(ids)]


def _coco_index(annFile):
    try:
        from pycocotools.coco import COCO
    except ImportError:
        return _CocoIndex(annFile)
    return COCO(annFile)


class CocoDetection(VisionDataset):
    """(PIL RGB image, list of the image's annotation dicts) for each image id, sorted."""

    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.coco = _coco_index(annFile)
        self.ids = list(sorted(self.coco.imgs.keys()))

    def _load_image(self, id):
        path = self.coco.loadImgs(id)[0]["file_name"]
        return pil_image().open(os.path.join(self.root, path)).convert("RGB")

    def _load_target(self, id):
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        image, target = self._load_image(id), self._load_target(id)
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self):
        return len(self.ids)


class CocoCaptions(CocoDetection):
    """(PIL RGB image, list of caption strings)."""

    def _load_target(self, id):
        return [ann["caption"] for ann in super()._load_target(id)]
