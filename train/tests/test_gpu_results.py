"""gpu-results reads what train/gpu.sh brought back from a machine this one
does not control: an archive member outside the folder is refused, and an
archive with nothing finished says so instead of writing an empty document."""

from __future__ import annotations

import io
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))

from svtrain import gpu  # noqa: E402


def pack(folder: str, members: dict[str, bytes], links: dict[str, str] | None = None) -> None:
    with tarfile.open(os.path.join(folder, gpu.PACK), "w:xz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)


class TestGPUResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.files = os.path.join(self.tmp.name, "back")
        os.makedirs(self.files)
        self.out = os.path.join(self.tmp.name, "runs")
        self.doc = os.path.join(self.tmp.name, "RESULTS-gpu.md")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self):
        gpu.write(self.files, self.out, self.doc)

    def test_a_member_outside_the_folder_is_refused(self):
        pack(self.files, {"exit.txt": b"e1 0\n", "../escaped.txt": b"x"})
        with self.assertRaisesRegex(SystemExit, "refusing member '../escaped.txt'"):
            self.write()
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "escaped.txt")))

    def test_a_link_is_refused(self):
        pack(self.files, {"exit.txt": b"e1 0\n"}, links={"e1": "/etc"})
        with self.assertRaisesRegex(SystemExit, "not a plain file"):
            self.write()

    def test_nothing_finished_is_an_error_naming_the_logs(self):
        pack(self.files, {"exit.txt": b"e1 124\ne2 124\n", "e1/serve.log": b"", "e2/seed1/history.jsonl": b""})
        with self.assertRaisesRegex(SystemExit, "no finished E1 run or E2 seed.*e1.log and e2.log"):
            self.write()
        self.assertFalse(os.path.exists(self.doc))

    def test_no_archive_names_what_to_give(self):
        with self.assertRaisesRegex(SystemExit, "gpu-runs.tar.xz not found"):
            self.write()


if __name__ == "__main__":
    unittest.main()
