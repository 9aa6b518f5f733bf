"""MPICH's shared-memory segments in /dev/shm: which exist, which a live process still maps."""
import os

SHM = "/dev/shm"


def mpich_segments():
    try:
        return {name for name in os.listdir(SHM) if name.startswith("mpich_shm_")}
    except FileNotFoundError:
        return set()


def mapped_segments():
    mapped = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as maps:
                mapped.update(line.rsplit("/", 1)[-1].split()[0] for line in maps
                              if "/dev/shm/mpich_shm_" in line)
        except OSError:
            continue
    return mapped
