package aisdk

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll_ReadsTheWholeBodyWhateverSizeItSaid(t *testing.T) {
	body := []byte(strings.Repeat("0123456789", 20_000)) // 200 KB
	for _, said := range []int64{-1, 0, 1, 511, 100_000, int64(len(body)), int64(len(body)) + 1, 1 << 30} {
		for _, first := range []int64{0, 64 << 10, int64(len(body))} {
			got, err := readAll(iotest.HalfReader(bytes.NewReader(body)), said, first)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("size %d, first %d: read %d bytes, %v; want the %d of the body", said, first, len(got), err, len(body))
			}
		}
	}
}

func TestReadAll_ABodyOfTheSaidSizeFillsOneBufferAndASmallerOneGetsNoMoreThanTwiceIt(t *testing.T) {
	body := []byte(strings.Repeat("x", 300_000))
	got, _ := readAll(bytes.NewReader(body), int64(len(body)), int64(len(body)))
	if cap(got) != len(body)+1 {
		t.Errorf("buffer of %d bytes for a body of %d read at its size", cap(got), len(body))
	}
	got, _ = readAll(bytes.NewReader(body), 8<<20, 64<<10) // says 8 MB, sends 300 KB
	if cap(got) > 2*len(body)+1 {
		t.Errorf("buffer of %d bytes for %d sent", cap(got), len(body))
	}
}
