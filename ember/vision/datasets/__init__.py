"""ember.vision.datasets: torchvision's datasets read from local files (nothing is downloaded)."""
from .cifar import CIFAR10, CIFAR100
from .coco import CocoCaptions, CocoDetection
from .fakedata import FakeData
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, find_classes, make_dataset
from .mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from .svhn import SVHN, STL10
from .voc import VOCDetection, VOCSegmentation
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "CocoCaptions", "CocoDetection", "DatasetFolder", "EMNIST",
           "FakeData", "FashionMNIST",
           "IMG_EXTENSIONS", "ImageFolder", "KMNIST", "MNIST", "QMNIST", "STL10", "SVHN",
           "VOCDetection", "VOCSegmentation", "VisionDataset",
           "default_loader", "find_classes", "make_dataset"]
