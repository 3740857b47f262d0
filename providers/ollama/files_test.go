package ollama

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

func filePart(f agentloop.File) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartFile, File: &f}
}

func TestOllama_SendsImagesAsBytes(t *testing.T) {
	m := newTestModel(t, Config{Host: "http://127.0.0.1:1"})
	for name, tc := range map[string]struct {
		file agentloop.File
		want string // the base64 Ollama gets
	}{
		"bytes":                {agentloop.File{MediaType: "image/png", Data: []byte("PNG1")}, "UE5HMQ=="},
		"base64 data: URL":     {agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,SlBHMg=="}, "SlBHMg=="},
		"unpadded data: URL":   {agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,SlBHMg"}, "SlBHMg=="},
		"percent-encoded data": {agentloop.File{MediaType: "image/svg+xml", URL: "data:image/svg+xml,%3Csvg%2F%3E"}, "PHN2Zy8+"},
	} {
		got := requestJSON(t, m, &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{
			agentloop.TextPart("What is it?"), filePart(tc.file),
		}}}})
		want := []any{map[string]any{"role": "user", "content": "What is it?", "images": []any{tc.want}}}
		if diff := cmp.Diff(want, got["messages"]); diff != "" {
			t.Errorf("%s: messages (-want +got):\n%s", name, diff)
		}
	}
}

func TestOllama_AFileItCannotTakeIsAFileError(t *testing.T) {
	m := newTestModel(t, Config{Host: "http://127.0.0.1:1"})
	user := func(f agentloop.File) agentloop.History {
		return agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("see"), filePart(f)}}}
	}
	for name, tc := range map[string]struct {
		h      agentloop.History
		msg    int
		reason string
	}{
		"a PDF":          {user(agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}), 0, "images only"},
		"no media type":  {user(agentloop.File{Filename: "a", Data: []byte("x")}), 0, "images only"},
		"an https URL":   {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "https://example.com/cat.png"}), 0, "cannot fetch a URL"},
		"bad base64":     {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64,@@@"}), 0, "base64"},
		"no comma":       {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64"}), 0, "no comma"},
		"empty":          {user(agentloop.File{MediaType: "image/png", Filename: "a.png"}), 0, "empty"},
		"assistant file": {agentloop.History{agentloop.UserMessage("draw"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("here"), filePart(agentloop.File{MediaType: "image/png", Filename: "a.png", Data: []byte("x")})}}}, 1, "not in assistant messages"},
	} {
		_, err := m.chatRequest(&agentloop.Request{Messages: tc.h})
		var fe *agentloop.FileError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
		assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile, name)
		assert.Equal(t, "ollama", fe.Provider, name)
		assert.Equal(t, tc.msg, fe.Message, name)
		assert.Equal(t, 1, fe.Part, name)
		assert.Contains(t, fe.Reason, tc.reason, name)
		assert.Contains(t, err.Error(), "ollama: message", name)
	}
	// Through Stream: the run gets the same error, nothing is sent.
	got := stream(m, &agentloop.Request{Messages: user(agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")})})
	assert.ErrorIs(t, got.Err, agentloop.ErrUnsupportedFile)
	assert.ErrorContains(t, got.Err, `ollama: message 0 part 1: file "a.pdf" (application/pdf) cannot be sent: Ollama takes images only`)
}
