package rawimg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxPixels bounds width*height.
const MaxPixels = 64 << 20

var magic = [4]byte{'R', 'I', 'M', 'G'}

// Image is a decoded raw image with interleaved channels.
type Image struct {
	Width, Height int
	Channels      int
	Pix           []byte
}

type header struct {
	Magic         [4]byte
	Width, Height uint32
	Channels      uint8
}

// Decode reads one image from r.
func Decode(r io.Reader) (*Image, error) {
	var h header
	if err := binary.Read(r, binary.BigEndian, &h); err != nil {
		return nil, fmt.Errorf("rawimg: header: %w", err)
	}
	if h.Magic != magic {
		return nil, errors.New("rawimg: not a RIMG image")
	}
	if h.Channels < 1 || h.Channels > 4 {
		return nil, fmt.Errorf("rawimg: %d channels", h.Channels)
	}
	// Multiply in 64 bits: two uint32 dimensions cannot overflow uint64, so
	// the bound check sees the true pixel count.
	pixels := uint64(h.Width) * uint64(h.Height)
	if pixels > MaxPixels {
		return nil, errors.New("rawimg: image too large")
	}
	size := pixels * uint64(h.Channels)
	pix := make([]byte, size)
	if _, err := io.ReadFull(r, pix); err != nil {
		return nil, fmt.Errorf("rawimg: pixels: %w", err)
	}
	return &Image{Width: int(h.Width), Height: int(h.Height), Channels: int(h.Channels), Pix: pix}, nil
}

// At returns the channel values of pixel (x, y).
func (m *Image) At(x, y int) []byte {
	if x < 0 || y < 0 || x >= m.Width || y >= m.Height {
		return nil
	}
	i := (y*m.Width + x) * m.Channels
	return m.Pix[i : i+m.Channels]
}
