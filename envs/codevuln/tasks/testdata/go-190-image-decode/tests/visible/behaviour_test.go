package rawimg

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func encode(w, h uint32, c uint8, pix []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIMG")
	binary.Write(&b, binary.BigEndian, w)
	binary.Write(&b, binary.BigEndian, h)
	b.WriteByte(c)
	b.Write(pix)
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	pix := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	m, err := Decode(bytes.NewReader(encode(2, 2, 3, pix)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Width != 2 || m.Height != 2 || m.Channels != 3 {
		t.Fatalf("dims %+v", m)
	}
	if got := m.At(1, 1); !bytes.Equal(got, []byte{10, 11, 12}) {
		t.Errorf("At(1,1) = %v", got)
	}
	if m.At(2, 0) != nil {
		t.Error("At outside the image")
	}
}

func TestErrors(t *testing.T) {
	for name, data := range map[string][]byte{
		"magic":     append([]byte("PNG!"), encode(1, 1, 1, []byte{0})[4:]...),
		"channels":  encode(1, 1, 5, []byte{0, 0, 0, 0, 0}),
		"truncated": encode(4, 4, 1, []byte{1, 2, 3}),
		"short":     []byte("RIM"),
		"too large": encode(100000, 100000, 1, nil),
	} {
		if _, err := Decode(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
