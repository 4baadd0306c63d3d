"""FuzzBridgeDecode's helper: T's handling of one answer frame from C.

Reads frames (4-byte big-endian length, then the bytes a hostile candidate
end sent) on stdin; for each, writes one line: "ok" when T made data, a
stand-in of C or an exception copy of it, "protocol" when T refused it, or
"BAD <what>" when anything else escaped or T made something that is not
data.
"""
import struct
import sys

sys.path.insert(0, sys.argv[1])
sys.setrecursionlimit(10000)
import svbrpc  # noqa: E402

sys.path.insert(0, sys.argv[2])
from bridge_check import check_data  # noqa: E402


def one(data):
    t = svbrpc.Trusted(None)
    t.seq = 1
    try:
        got = t.settle(svbrpc.parse_message(data))
    except svbrpc.ProtocolError:
        return "protocol"
    except Exception as e:  # an exception copy C sent, raised here
        if type(e).__module__ == "svbrpc" and not isinstance(e, svbrpc.ProtocolError):
            return "BAD bridge error %s: %s" % (type(e).__name__, e)
        try:
            check_data(e)
        except AssertionError as a:
            return "BAD %s" % a
        return "ok"
    except BaseException as e:  # noqa: B902 - the point is what escapes
        return "BAD %s escaped: %r" % (type(e).__name__, e)
    try:
        check_data(got)
    except AssertionError as a:
        return "BAD %s" % a
    return "ok"


def main():
    inp, out = sys.stdin.buffer, sys.stdout
    while True:
        hdr = inp.read(4)
        if len(hdr) < 4:
            return
        (n,) = struct.unpack(">I", hdr)
        line = one(inp.read(n))
        out.write(line.replace("\n", " ")[:500] + "\n")
        out.flush()


if __name__ == "__main__":
    main()
