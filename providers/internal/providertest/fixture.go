package providertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Testdata returns the file testdata/name of the package under test; it
// fails t if it cannot be read.
func Testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// Framing is how a provider's API frames JSON events as server-sent
// events. The zero Framing is "data: <line>\n\n" per event.
type Framing struct {
	// Event puts "event: <type>\n" before each data line, <type> being
	// the event's "type" field.
	Event bool
	// Done ends the stream with "data: [DONE]".
	Done bool
	// CRLF ends lines with "\r\n" instead of "\n".
	CRLF bool
}

// Frame frames jsonl, one JSON event a line (blank lines are skipped), as
// the API streams it. It fails t if Event is set and a line has no JSON
// object.
func (f Framing) Frame(t testing.TB, jsonl []byte) []byte {
	t.Helper()
	nl := "\n"
	if f.CRLF {
		nl = "\r\n"
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if f.Event {
			var head struct {
				Type string `json:"type"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &head), "event %q", line)
			b.WriteString("event: " + head.Type + nl)
		}
		b.WriteString("data: " + line + nl + nl)
	}
	require.NoError(t, sc.Err())
	if f.Done {
		b.WriteString("data: [DONE]" + nl + nl)
	}
	return b.Bytes()
}

// Fixture returns the recorded response body testdata/name: a
// ".chunks.jsonl" file (one event a line, as the vercel recordings are)
// framed by f, any other file as it is.
func (f Framing) Fixture(t testing.TB, name string) []byte {
	t.Helper()
	raw := Testdata(t, name)
	if strings.HasSuffix(name, ".chunks.jsonl") {
		return f.Frame(t, raw)
	}
	return raw
}

// RecordedTurn is one request of a recording, as its sidecar
// testdata/<name>.requests.json lists them.
type RecordedTurn struct {
	Turn        int            `json:"turn"`
	Path        string         `json:"path"`
	RequestBody map[string]any `json:"request_body"`
}

// RecordedRequests returns the requests a recording made, in order, from
// testdata/<name>.requests.json; it fails t if the file cannot be read or
// decoded.
func RecordedRequests(t testing.TB, name string) []RecordedTurn {
	t.Helper()
	var turns []RecordedTurn
	require.NoError(t, json.Unmarshal(Testdata(t, name+".requests.json"), &turns))
	return turns
}
