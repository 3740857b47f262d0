package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"
)

// bytesTransport answers every request with body, from memory.
type bytesTransport struct{ body []byte }

func (b bytesTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Status:     "200 OK",
		Header:     http.Header{"Content-Type": {"application/x-ndjson"}},
		Body:       io.NopCloser(bytes.NewReader(b.body)),
		Request:    r,
	}, nil
}

func memoryModel(tb testing.TB, body []byte) *Model {
	tb.Helper()
	u, _ := url.Parse("http://ollama.invalid")
	m, err := New(Config{Model: "m", Client: api.NewClient(u, &http.Client{Transport: bytesTransport{body}})})
	require.NoError(tb, err)
	return m
}

// memoryOwnModel is memoryModel with this package's own reader.
func memoryOwnModel(tb testing.TB, body []byte) *Model {
	tb.Helper()
	m, err := newModel(Config{Model: "m", Host: "http://ollama.invalid"}, bytesTransport{body})
	require.NoError(tb, err)
	return m
}

// shortened keeps the first and last n lines of a recorded stream, so
// seeds stay small while showing every kind of line.
func shortened(body []byte, n int) []byte {
	all := bytes.SplitAfter(body, []byte("\n"))
	if len(all) <= 2*n {
		return body
	}
	return bytes.Join(append(all[:n:n], all[len(all)-n:]...), nil)
}

// FuzzStream feeds arbitrary bodies through the official client's NDJSON
// reading (over an in-memory transport) and this package's mapping, and
// checks the contract of agentloop.Model.Stream (design.md §10.1).
func FuzzStream(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(shortened(b, 8))
	}
	f.Add(lines(lineHello, lineWorld, lineDone))
	f.Add(lines(lineHello, `{"model":"m","message":{"role":"assi`))
	f.Add(lines(`{"message":{"thinking":"a"}}`, `{"message":{"content":"b","tool_calls":[{"function":{"name":"f","arguments":null}}]}}`, `{"done":true,"done_reason":"length"}`))
	f.Add(lines(`{"error":"boom"}`))
	f.Add(lines(`{"message":{"tool_calls":[{"function":{"name":"f","arguments":[1]}}]}}`, lineDone))
	f.Add([]byte(lineDone + "\n" + lineHello + "\n"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, body []byte) {
		m := memoryModel(t, body)
		if err := checkContract(m.Stream(context.Background(), userRequest("hi"))); err != nil {
			t.Fatal(err)
		}
	})
}

// checkContract consumes seq and reports the first broken rule.
func checkContract(seq func(func(agentloop.Chunk, error) bool)) error {
	var (
		errSeen, finished, inReasoning bool
		usages                         int
		n                              int
	)
	for chunk, err := range seq {
		n++
		if errSeen {
			return fmt.Errorf("element %d after the error", n)
		}
		if err != nil {
			if chunk != nil {
				return fmt.Errorf("element %d: error with a chunk", n)
			}
			errSeen = true
			continue
		}
		if finished {
			return fmt.Errorf("element %d (%T) after Finish", n, chunk)
		}
		switch c := chunk.(type) {
		case agentloop.ReasoningDelta:
			if c.Text == "" {
				return fmt.Errorf("element %d: empty reasoning delta", n)
			}
			inReasoning = true
			continue
		case agentloop.ReasoningEnd:
			if !inReasoning {
				return fmt.Errorf("element %d: ReasoningEnd without an open block", n)
			}
			inReasoning = false
			continue
		}
		if inReasoning {
			return fmt.Errorf("element %d (%T) while a reasoning block is open", n, chunk)
		}
		switch c := chunk.(type) {
		case agentloop.TextDelta:
			if c.Text == "" {
				return fmt.Errorf("element %d: empty text delta", n)
			}
		case agentloop.ToolCall:
			var obj map[string]any
			if err := json.Unmarshal(c.Args, &obj); err != nil || obj == nil {
				return fmt.Errorf("element %d: tool call args %q are not a JSON object", n, c.Args)
			}
		case agentloop.Usage:
			usages++
			if c.Input < 0 || c.Output < 0 {
				return fmt.Errorf("element %d: negative usage %+v", n, c)
			}
		case agentloop.Finish:
			finished = true
			if c.Reason == "" {
				return fmt.Errorf("element %d: empty finish reason", n)
			}
		default:
			return fmt.Errorf("element %d: unexpected chunk %T", n, chunk)
		}
	}
	if errSeen {
		return nil
	}
	if !finished || usages != 1 {
		return fmt.Errorf("a stream without error must end with one Usage and a Finish (usages %d, finished %v)", usages, finished)
	}
	return nil
}

// memoryChat reads body the way the official client's Chat does (one JSON
// object per line, an "error" field or an undecodable line ends the stream
// with an error, a read stop ends it silently), without HTTP, so the fuzzer
// can run this package's mapping and error handling fast.
func memoryChat(body []byte) chatFunc {
	return func(_ context.Context, _ *api.ChatRequest, fn func(*api.ChatResponse) error) error {
		for len(body) > 0 {
			line, rest, _ := bytes.Cut(body, []byte("\n"))
			body = rest
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) == 0 {
				continue
			}
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(line, &e); err != nil {
				return errors.New(string(line))
			}
			if e.Error != "" {
				return errors.New(e.Error)
			}
			var r api.ChatResponse
			if err := json.Unmarshal(line, &r); err != nil {
				return err
			}
			if err := fn(&r); err != nil {
				return err
			}
		}
		return nil
	}
}

// FuzzMapping is FuzzStream without HTTP and the official client: much
// faster, so it explores this package's chunk mapping and error handling
// further.
func FuzzMapping(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(shortened(b, 8))
	}
	f.Add(lines(lineHello, `{"model":"m","message":{"role":"assi`))
	f.Add(lines(`{"message":{"thinking":"a"}}`, `{"message":{"content":"b","tool_calls":[{"id":"x","function":{"name":"f","arguments":{"a":{"z":1,"b":2}}}}]}}`, `{"done":true,"done_reason":"load"}`))
	f.Add(lines(lineHello, `{"error":"boom"}`))

	m := memoryModel(f, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := checkContract(m.stream(context.Background(), userRequest("hi"), memoryChat(body))); err != nil {
			t.Fatal(err)
		}
	})
}
