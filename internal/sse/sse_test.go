package sse_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentloop/agentloop/internal/sse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ev struct{ Name, Data string }

func readAll(t testing.TB, r io.Reader) ([]ev, error) {
	t.Helper()
	sr := sse.NewReader(r)
	var out []ev
	for {
		e, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data)})
	}
}

func TestReader_FieldsCommentsAndLineEnds(t *testing.T) {
	in := ": comment\r\n" +
		"event: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
		"data:no-space\n\n" +
		"data: line1\ndata: line2\nid: 7\nretry: 100\nunknown: x\n\n" +
		"event: cr\rdata: lone\r\r" +
		"event: ignored-without-data\n\n" +
		"data\n\n" +
		"data:  two spaces\n\n" +
		"event: last\ndata: no trailing blank line"
	got, err := readAll(t, strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, []ev{
		{"message_start", `{"a":1}`},
		{"", "no-space"},
		{"", "line1\nline2"},
		{"cr", "lone"},
		{"", ""},
		{"", " two spaces"},
		{"last", "no trailing blank line"},
	}, got)
}

func TestReader_MarksOnlyTheEventWithoutItsBlankLineUnterminated(t *testing.T) {
	sr := sse.NewReader(strings.NewReader("data: a\n\ndata: b"))
	first, err := sr.Next()
	require.NoError(t, err)
	assert.False(t, first.Unterminated, "an event followed by its blank line")
	last, err := sr.Next()
	require.NoError(t, err)
	assert.Equal(t, "b", string(last.Data))
	assert.True(t, last.Unterminated, "the stream ended before the blank line")
}

func TestReader_OneByteReads(t *testing.T) {
	in := "event: e\ndata: x\n\ndata: y\n\n"
	got, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)))
	require.NoError(t, err)
	assert.Equal(t, []ev{{"e", "x"}, {"", "y"}}, got)
}

func TestReader_LongLinesBeyondBuffer(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	got, err := readAll(t, strings.NewReader("data: "+long+"\n\n"))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, long, got[0].Data)
}

func TestReader_TooLargeEventIsAnError(t *testing.T) {
	sr := sse.NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	sr.MaxEventSize = 50
	_, err := sr.Next()
	assert.ErrorIs(t, err, sse.ErrEventTooLarge)
	_, err2 := sr.Next()
	assert.Equal(t, err, err2, "the error sticks")
}

func TestReader_ReadErrorIsReturned(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(t, r)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []ev{{"", "a"}}, got)
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: b\n\n",
		"data: x\r\ndata: y\r\n\r\n",
		": c\n\ndata\n\n",
		"data:\n\n",
		"event: e\r\ndata: {\"type\":\"ping\"}\r\n\r\ndata: [DONE]\n\n",
		"\r\n\n\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		sr := sse.NewReader(strings.NewReader(string(in)))
		sr.MaxEventSize = 1 << 16
		total := 0
		for {
			e, err := sr.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, sse.ErrEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			total += len(e.Data)
			if total > len(in) {
				t.Fatalf("more data (%d) than input (%d)", total, len(in))
			}
			if strings.ContainsAny(e.Name, "\r\n") {
				t.Fatalf("event name %q holds a line end", e.Name)
			}
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var sb strings.Builder
	for range 100 {
		sb.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n")
	}
	in := sb.String()
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		sr := sse.NewReader(strings.NewReader(in))
		for {
			if _, err := sr.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/event")
}
