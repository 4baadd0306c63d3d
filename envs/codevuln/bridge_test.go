package codevuln

import (
	"bufio"
	"encoding/binary"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestBridgeHoldsAgainstAHostilePeer runs testdata/bridge_check.py: data
// round-trips; the candidate's objects stay on its side behind opaque
// references that compare by identity; the runner refuses to send anything
// but data; every gadget family of the round-3 review (bound-method values
// naming dunders, setattr and read-back on runner objects, classes as
// callable handles, a shared __builtins__, modules, requests from the
// candidate) is a ProtocolError; exception classes are names, never
// SystemExit, KeyboardInterrupt or SkipTest; 1,500 random frames make only
// data or ordinary errors.
func TestBridgeHoldsAgainstAHostilePeer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	out, err := exec.Command(py, "-I", "-B", "testdata/bridge_check.py", "pyrunner").CombinedOutput()
	if err != nil {
		t.Fatalf("bridge checks failed: %v\n%s", err, out)
	}
}

// decoder is one python3 running testdata/bridge_decode.py for the fuzz
// target: starting one per input would make fuzzing crawl.
type decoder struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

func (d *decoder) judge(frame []byte) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(frame)))
	if _, err := d.in.Write(append(hdr[:], frame...)); err != nil {
		return "", err
	}
	line, err := d.out.ReadString('\n')
	return strings.TrimSpace(line), err
}

var bridgeDecoder = sync.OnceValues(func() (*decoder, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(py, "-I", "-B", "testdata/bridge_decode.py", "pyrunner", "testdata")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &decoder{in: in, out: bufio.NewReader(out)}, nil
})

// FuzzBridgeDecode feeds the trusted end what a hostile candidate end could
// send as the answer to a request: whatever the bytes, the runner makes
// data, a stand-in of a candidate object or an exception copy, or refuses
// the frame; nothing else escapes and nothing of the runner is reached.
func FuzzBridgeDecode(f *testing.F) {
	for _, s := range []string{
		`{"r":1,"v":[1,"x",{"$t":[null,true]},{"$d":[[1,{"$b":"AP8="}]]}]}`,
		`{"r":1,"v":{"$r":{"id":"c.1","kind":"object","std":["ssl","SSLContext"]}}}`,
		`{"r":1,"v":{"$r":{"id":"p:m:C","kind":"class","module":"m","qual":"C"}}}`,
		`{"r":1,"v":{"$r":{"id":"c.2","kind":"method","owner":"c.1","name":"get"}}}`,
		`{"r":1,"v":{"$nt":["P",["x","y"],[1,2]]}}`,
		`{"r":1,"e":{"$e":{"c":["builtins","SystemExit",["SystemExit"]],"a":[0],"s":""}}}`,
		`{"r":1,"e":{"$e":{"c":["unittest.case","SkipTest",["Exception"]],"a":["s"],"s":"s"}}}`,
		`{"r":1,"v":{"$bound":["T0.1","__globals__"]}}`,
		`{"r":1,"v":{"$c":{"std":["builtins","type"]}}}`,
		`{"r":1,"v":{"$sh":["S0.1",{"$d":[["exec",1]]}]}}`,
		`{"q":1,"op":"getattr","o":"T0.1","n":"__builtins__"}`,
		`{"r":1,"v":{"$dt":"2026-01-02T03:04:05"},"sync":[]}`,
		`{"r":1,"v":{"$td":[1,2,3]}}`,
		`{"r":1,"v":{"$dec":"1e999999"}}`,
		`{"r":1,"v":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 1<<16 {
			return
		}
		d, err := bridgeDecoder()
		if err != nil {
			t.Skipf("python3: %v", err)
		}
		got, err := d.judge(frame)
		if err != nil {
			t.Fatalf("decoder helper died on %q: %v", frame, err)
		}
		if strings.HasPrefix(got, "BAD") {
			t.Fatalf("frame %q: %s", frame, got)
		}
	})
}
