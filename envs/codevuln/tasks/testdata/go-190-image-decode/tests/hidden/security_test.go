package rawimg

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"testing"
)

func enc(w, h uint32, c uint8, pix []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIMG")
	binary.Write(&b, binary.BigEndian, w)
	binary.Write(&b, binary.BigEndian, h)
	b.WriteByte(c)
	b.Write(pix)
	return b.Bytes()
}

// consistent checks a successfully decoded image: its buffer holds exactly
// width*height*channels bytes (computed without overflow) and every corner is
// addressable.
func consistent(t *testing.T, m *Image) {
	t.Helper()
	want := new(big.Int).Mul(big.NewInt(int64(m.Width)), big.NewInt(int64(m.Height)))
	want.Mul(want, big.NewInt(int64(m.Channels)))
	if !want.IsInt64() || want.Int64() != int64(len(m.Pix)) {
		t.Fatalf("%dx%dx%d image has %d pixel bytes", m.Width, m.Height, m.Channels, len(m.Pix))
	}
	for _, p := range [][2]int{{0, 0}, {m.Width - 1, 0}, {0, m.Height - 1}, {m.Width - 1, m.Height - 1}} {
		if len(m.At(p[0], p[1])) != m.Channels {
			t.Fatalf("At(%d,%d) broken", p[0], p[1])
		}
	}
}

func decode(t *testing.T, data []byte) (m *Image, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Decode panicked: %v", r)
		}
	}()
	return Decode(bytes.NewReader(data))
}

func TestOverflowHeaders(t *testing.T) {
	cases := []struct {
		w, h uint32
		c    uint8
	}{
		{65536, 65536, 1},           // w*h = 2^32 -> 0
		{65536, 65536, 4},           // 2^34 -> 0
		{0x40000001, 4, 1},          // -> 4
		{0x80000001, 2, 2},          // -> 4
		{0xFFFFFFFF, 0xFFFFFFFF, 1}, // -> 1
		{1 << 31, 1, 2},             // -> 0
		{3, 0x55555556, 1},          // -> 2
		{0x10000, 0x10001, 4},       // large but wraps small
	}
	for _, c := range cases {
		wrapped := c.w * c.h * uint32(c.c)
		m, err := decode(t, enc(c.w, c.h, c.c, make([]byte, wrapped%4096)))
		if err == nil {
			t.Errorf("%dx%dx%d accepted as %+v", c.w, c.h, c.c, m.Pix[:0])
			consistent(t, m)
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(190, 4))
	for i := 0; i < 300; i++ {
		c := uint8(1 + rng.IntN(4))
		if rng.IntN(2) == 0 {
			// Benign: small image, decoded exactly.
			w, h := uint32(1+rng.IntN(40)), uint32(1+rng.IntN(40))
			pix := make([]byte, int(w*h)*int(c))
			for j := range pix {
				pix[j] = byte(rng.IntN(256))
			}
			m, err := decode(t, enc(w, h, c, pix))
			if err != nil {
				t.Fatalf("%dx%dx%d: %v", w, h, c, err)
			}
			consistent(t, m)
			x, y := rng.IntN(int(w)), rng.IntN(int(h))
			i := (y*int(w) + x) * int(c)
			if !bytes.Equal(m.At(x, y), pix[i:i+int(c)]) {
				t.Fatalf("At(%d,%d) wrong", x, y)
			}
			continue
		}
		// Hostile: dimensions whose product wraps modulo 2^32.
		w := uint32(1<<16 + rng.IntN(1<<16))
		h := uint32((uint64(1<<32) + uint64(rng.IntN(1024))) / uint64(w))
		wrapped := w * h * uint32(c)
		if uint64(w)*uint64(h) <= MaxPixels {
			continue
		}
		m, err := decode(t, enc(w, h, c, make([]byte, wrapped%(1<<16))))
		if err == nil {
			consistent(t, m)
		}
	}
}
