"""The checkpoint container: PyTorch's zip archive of uncompressed records, as its C++
PyTorchStreamWriter writes it and PyTorchStreamReader reads it. `model.pt` holds its records
under `model/`:

    model/data.pkl                 the pickled object; tensors refer to storages by key
    model/.format_version          b"1"
    model/.storage_alignment       b"64": each record's bytes start at a multiple of 64
    model/byteorder                b"little"
    model/data/0, data/1, ...      one record per storage: its raw bytes
    model/version                  b"3\\n"
    model/.data/serialization_id

`_ArchiveWriter` writes the records, into a temporary file that replaces the target only when
complete (`_atomic_open`). `_ArchiveReader` finds them and reads a storage's bytes into a new
array -- the big ones on worker threads -- or views them in a memory map of the file
(`_map_file`, for load(mmap=True)). What data.pkl says is `pickling`'s part.
"""
import concurrent.futures
import contextlib
import functools
import io
import mmap as _mmap
import os
import secrets
import stat
import struct
import sys
import zipfile
import zlib

import numpy as np

_ALIGNMENT = 64
_ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets from here on need ZIP64 fields


# ==== writing the archive ========================================================================
def _archive_name(path):
    """The records' folder, as PyTorch names it: the file name without its extension."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem and stem.isascii() and stem.isprintable() else "archive"


def _write_archive(out, archive_name, data_pkl, storages, byteorder_record):
    writer = _ArchiveWriter(out, archive_name)
    try:
        writer.write_record("data.pkl", data_pkl)
        writer.write_record(".format_version", b"1")
        writer.write_record(".storage_alignment", str(_ALIGNMENT).encode())
        if byteorder_record:
            writer.write_record("byteorder", sys.byteorder.encode())
        for key, storage in enumerate(storages):
            writer.write_record(f"data/{key}", storage._bytes())
        writer.write_record("version", b"3\n")
        writer.write_record(".data/serialization_id",
                            str(secrets.randbits(128)).zfill(40).encode())
        writer.finish()
    finally:
        writer.close()


def _worker_pool(workers):
    """Threads for one save or load. (Not a process-wide pool: a forked DataLoader worker would
    inherit the pool without its threads, and its first job would wait forever.)"""
    return concurrent.futures.ThreadPoolExecutor(workers, "ember-serialization")


_THREADED_CRC_BYTES = 1 << 20


class _ArchiveWriter:
    """PyTorch's PyTorchStreamWriter (miniz underneath): a ZIP archive of stored (uncompressed)
    records whose data starts on a 64-byte boundary, so a mapped file can be viewed as any dtype
    in place.

    A record is laid out byte for byte as miniz lays it out:

        local header (30 bytes, CRC and sizes zero: flag bit 3 says they follow the data)
        name, extra field b"FB" + length + b"Z" padding up to the alignment
        the bytes
        data descriptor b"PK\\x07\\x08", CRC-32, sizes (omitted for an empty record)

    so that PyTorch's optional offset arithmetic (`calculate_storage_offsets`) also holds. The
    central directory at the end lists every record with its CRC, sizes and offset; values past
    4 GiB use ZIP64 fields. The stream is written strictly forward: `out` need not be seekable.
    """

    def __init__(self, out, archive_name):
        self.out = out
        self.prefix = archive_name + "/"
        self.offset = 0
        self.entries = []
        self.pool = None  # computes a large record's CRC-32 while the bytes are being written

    def _write(self, data):
        self.out.write(data)
        self.offset += memoryview(data).nbytes

    def write_record(self, name, data):
        data = memoryview(data)
        size = data.nbytes
        if size >= _THREADED_CRC_BYTES:  # zlib.crc32 releases the GIL: it overlaps the write
            self.pool = self.pool or _worker_pool(1)
            crc = self.pool.submit(zlib.crc32, data).result
        else:
            crc = functools.partial(zlib.crc32, data)
        fname = (self.prefix + name).encode("utf-8")
        flags = 0x808 if size else 0x800  # bit 3: CRC and sizes follow; bit 11: UTF-8 name
        header_offset = self.offset
        extra = struct.pack("<HHQQ", 1, 16, size, size) if size >= _ZIP64_LIMIT else b""
        pad = -(header_offset + 30 + len(fname) + len(extra) + 4) % _ALIGNMENT
        extra += struct.pack("<2sH", b"FB", pad) + b"Z" * pad
        self._write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, 0, 0, 0x21, 0, 0, 0,
                                len(fname), len(extra)) + fname + extra)
        self._write(data)
        crc = crc()
        if size:
            zip64 = size >= _ZIP64_LIMIT or header_offset >= _ZIP64_LIMIT
            self._write(struct.pack("<4sLQQ" if zip64 else "<4sLLL", b"PK\x07\x08", crc, size,
                                    size))
        self.entries.append((fname, flags, crc, size, header_offset))

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def finish(self):
        cd_start = self.offset
        for fname, flags, crc, size, header_offset in self.entries:
            fields = [size, size] if size >= _ZIP64_LIMIT else []
            if header_offset >= _ZIP64_LIMIT:
                fields.append(header_offset)
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) \
                if fields else b""
            version = 45 if fields else 20
            size32 = size if size < _ZIP64_LIMIT else 0xFFFFFFFF
            offset32 = header_offset if header_offset < _ZIP64_LIMIT else 0xFFFFFFFF
            self._write(struct.pack("<4s6H3L5HLL", b"PK\x01\x02", version, version, flags, 0,
                                    0, 0x21, crc, size32, size32, len(fname), len(extra), 0, 0,
                                    0, 0, offset32) + fname + extra)
        cd_size = self.offset - cd_start
        count = len(self.entries)
        if count >= 0xFFFF or cd_start >= _ZIP64_LIMIT or cd_size >= _ZIP64_LIMIT:
            eocd64 = self.offset
            self._write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count,
                                    count, cd_size, cd_start))
            self._write(struct.pack("<4sLQL", b"PK\x06\x07", 0, eocd64, 1))
            count, cd_size, cd_start = (min(count, 0xFFFF), min(cd_size, 0xFFFFFFFF),
                                        min(cd_start, 0xFFFFFFFF))
        self._write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, cd_size,
                                cd_start, 0))
        self.out.flush()


class _open_zipfile_writer:
    """torch.serialization._open_zipfile_writer: an archive written record by record,
    `write_record(name, data, nbytes)`, into a path or a writable buffer (records under
    `<file stem>/` or `archive/`); leaving the block adds the `version`, `byteorder` and
    `.data/serialization_id` records not written yet, then the central directory."""

    def __init__(self, name_or_buffer):
        self._file = None
        if isinstance(name_or_buffer, (str, os.PathLike)):
            path = os.fspath(name_or_buffer)
            self._file = out = open(path, "wb")
            archive_name = _archive_name(path)
        else:
            if not callable(getattr(name_or_buffer, "write", None)):
                msg = (f"Buffer of {str(type(name_or_buffer)).strip('<>')} has no callable "
                       "attribute 'write'")
                raise (TypeError if hasattr(name_or_buffer, "write") else AttributeError)(msg)
            out, archive_name = name_or_buffer, "archive"
        self._writer = _ArchiveWriter(out, archive_name)
        self._written = set()

    def __enter__(self):
        return self

    def write_record(self, name, data, nbytes):
        data = data._bytes() if hasattr(data, "_bytes") else data  # an UntypedStorage
        self._writer.write_record(name, memoryview(data).cast("B")[:nbytes])
        self._written.add(name)

    def __exit__(self, exc_type, *exc):
        try:
            if exc_type is None:
                for name, data in (("version", b"3\n"), ("byteorder", sys.byteorder.encode()),
                                   (".data/serialization_id",
                                    str(secrets.randbits(128)).zfill(40).encode())):
                    if name not in self._written:
                        self.write_record(name, data, len(data))
                self._writer.finish()
        finally:
            self._writer.close()
            if self._file is not None:
                self._file.close()


class _open_zipfile_reader:
    """torch.serialization._open_zipfile_reader: the records of an archive (a path or a
    readable, seekable buffer) by name: `get_record`, `has_record`, `get_all_records`,
    `get_record_offset`, `serialization_id`."""

    def __init__(self, name_or_buffer):
        self._file = None
        if isinstance(name_or_buffer, (str, os.PathLike)):
            self._file = name_or_buffer = open(name_or_buffer, "rb")
        self._reader = _ArchiveReader(name_or_buffer)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._reader.close()
        if self._file is not None:
            self._file.close()

    def get_record(self, name):
        return self._reader.read_record(name).tobytes()

    def has_record(self, name):
        return self._reader.has_record(name)

    def get_all_records(self):
        return list(self._reader.records)

    def get_record_offset(self, name):
        return self._reader.locate(name)[0]

    def serialization_id(self):
        if not self.has_record(".data/serialization_id"):
            return ""
        return self.get_record(".data/serialization_id").decode()


@contextlib.contextmanager
def _atomic_open(path):
    """A new file beside `path` that replaces `path` in one rename once the block succeeds."""
    path = os.path.realpath(path)  # through a symlink, replace its target, not the link
    directory, base = os.path.split(path)
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with open(fd, "wb") as out:
            yield out
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ==== reading the archive ========================================================================
class _ArchiveReader:
    """PyTorch's PyTorchStreamReader: the records of a checkpoint archive, by name.

    The central directory is parsed by `zipfile`. A record's bytes are read straight from the
    file into a fresh array, or viewed in a memory map of the file (`map_record`). Like
    PyTorch's reader, which splits big records among extra readers, this one can `prefetch`
    the tensor records on worker threads (`os.preadv` releases the GIL, so two cores copy from
    the page cache at once) while the main thread unpickles.

    data.pkl and the small metadata records are checked against their CRC-32; tensor records
    are checked only if `config.load.verify_crc32` is set: PyTorch never checks them, and it
    costs one more pass over every byte.
    """

    def __init__(self, file):
        self.file = file
        try:
            self.size = file.seek(0, os.SEEK_END)
            infos = zipfile.ZipFile(file).infolist()
        except Exception as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}. The file "
                               "is truncated or corrupted, or is not a checkpoint.") from e
        first = infos[0].filename if infos else ""
        if "/" not in first:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the records are "
                               "not inside an archive folder (not a checkpoint)")
        self.prefix = first[:first.index("/") + 1]
        self.records = {i.filename[len(self.prefix):]: i for i in infos
                        if i.filename.startswith(self.prefix)}
        self.fd = _fileno(file) if hasattr(os, "preadv") else None
        self.pool = None
        self.prefetched = {}  # record name -> future of its array

    def has_record(self, name):
        return name in self.records

    def locate(self, name):
        """(data offset, size, crc) of a record, checked to lie inside the file."""
        info = self.records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(f"record {name} is compressed; checkpoint records are stored "
                               "uncompressed")
        if not 0 <= info.header_offset <= self.size - 30:
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: its header "
                               f"offset {info.header_offset} is outside the file (corrupted)")
        self.file.seek(info.header_offset)
        header = self.file.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: bad local "
                               "header (the file is corrupted)")
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > self.size:
            raise RuntimeError(f"record {name} ends at byte {start + info.file_size} but the "
                               f"file has {self.size} bytes (truncated?)")
        return start, info.file_size, info.CRC

    def prefetch(self, names, verify):
        """Start reading these records on worker threads, in this order (small ones are read
        when asked for: a thread's round trip would cost more than the read)."""
        if self.fd is None:
            return
        located = [(name, *self.locate(name)) for name in names  # file.seek: this thread only
                   if self.records[name].file_size >= _PREFETCH_BYTES]
        if not located:
            return
        self.pool = _worker_pool(min(len(located), _READERS))
        for name, start, size, crc in located:
            # Allocated here, not by the worker: memory from this thread's malloc arena comes
            # back on the next load without page faults; a worker's arena gives it to the OS.
            out = np.empty(size, dtype=np.uint8)
            self.prefetched[name] = self.pool.submit(self._read, name, start, size, crc, verify,
                                                     out)

    def read_record(self, name, nbytes=None, verify=True):
        """The record's bytes in a new uint8 array."""
        future = self.prefetched.pop(name, None)
        data = future.result() if future is not None else self._read(name, *self.locate(name),
                                                                        verify)
        if nbytes is not None and data.nbytes != nbytes:
            raise RuntimeError(f"record {name} holds {data.nbytes} bytes but the checkpoint "
                               f"declares {nbytes}")
        return data

    def _read(self, name, start, size, crc, verify, out=None):
        out = np.empty(size, dtype=np.uint8) if out is None else out
        view, done = memoryview(out), 0
        if self.fd is None:
            self.file.seek(start)
        while done < size:
            if self.fd is not None:  # positioned read: safe from several threads at once
                n = os.preadv(self.fd, [view[done:]], start + done)
            elif hasattr(self.file, "readinto"):
                n = self.file.readinto(view[done:])
            else:  # a file-like object with read() only
                chunk = self.file.read(size - done)
                n = len(chunk)
                view[done:done + n] = chunk
            if not n:
                raise RuntimeError(f"record {name} is truncated")
            done += n
        if verify and zlib.crc32(out) != crc:
            raise RuntimeError(f"PytorchStreamReader failed reading record {name}: CRC-32 "
                               "mismatch (the file is corrupted)")
        return out

    def map_record(self, name, nbytes, mapped):
        """The record's bytes as a view into the memory map of the whole file: no copy."""
        start, size, _ = self.locate(name)
        if size != nbytes:
            raise RuntimeError(f"record {name} holds {size} bytes but the checkpoint declares "
                               f"{nbytes}")
        return np.frombuffer(mapped, dtype=np.uint8, count=size, offset=start)

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


_READERS = min(4, os.cpu_count() or 1)
_PREFETCH_BYTES = 1 << 18


def _fileno(file):
    """The descriptor of a plain file object, else None (a GzipFile has a fileno, but of its
    compressed bytes)."""
    if isinstance(file, (io.FileIO, io.BufferedReader, io.BufferedRandom)):
        try:
            return file.fileno()
        except (OSError, io.UnsupportedOperation):
            return None
    return None


@contextlib.contextmanager
def _open_for_reading(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb", buffering=0) as file:
            yield file
        return
    if not hasattr(f, "read"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'read' attribute, got {type(f).__name__}")
    seekable = getattr(f, "seekable", None)
    if seekable is not None and not seekable():  # a pipe or socket: read into memory
        yield io.BytesIO(f.read())
        return
    try:  # PyTorch's _check_seekable
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(f"{e}. You can only torch.load from a file that is seekable. Please "
                          "pre-load the data into a buffer like io.BytesIO and try to load from "
                          "it instead.") from None
        raise
    yield f


def _is_zipfile(file):
    start = file.tell()
    magic = file.read(4)
    file.seek(start)
    return magic == b"PK\x03\x04"


def _map_file(file, shared=False):
    fd = _fileno(file)
    if fd is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not shared:
        # ACCESS_COPY is MAP_PRIVATE, PyTorch's default: writes to the tensors stay in memory
        return _mmap.mmap(fd, 0, access=_mmap.ACCESS_COPY)
    # MAP_SHARED (set_default_mmap_options): writes to the tensors go to the file, so the
    # mapping needs a descriptor open for writing (mmap keeps its own duplicate)
    fd = os.open(file.name, os.O_RDWR)
    try:
        return _mmap.mmap(fd, 0, access=_mmap.ACCESS_WRITE)
    finally:
        os.close(fd)


def _storage_records(reader):
    """The data/<key> records, in key order: the order the pickle first asks for them."""
    names = [name for name in reader.records if name.startswith("data/")]
    return sorted(names, key=lambda name: (len(name), name))  # data/2 before data/10
