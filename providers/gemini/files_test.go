package gemini_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

func filePart(f agentloop.File) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartFile, File: &f}
}

func TestGemini_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	pdf := agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}
	user := func(f agentloop.File) agentloop.History {
		return agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("see"), filePart(f)}}}
	}
	for name, tc := range map[string]struct {
		h      agentloop.History
		msg    int
		reason string
	}{
		"a zip":             {user(agentloop.File{MediaType: "application/zip", Filename: "a.zip", Data: []byte("PK")}), 0, "PDFs only"},
		"bad data URL":      {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64,@"}), 0, "base64"},
		"a system file":     {agentloop.History{{Role: agentloop.RoleSystem, Parts: []agentloop.Part{agentloop.TextPart("rules"), filePart(pdf)}}, agentloop.UserMessage("hi")}, 0, "not in system messages"},
		"an assistant file": {agentloop.History{agentloop.UserMessage("draw"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("here"), filePart(pdf)}}}, 1, "not in assistant messages"},
	} {
		srv := newServer(t, reply{body: okBody})
		_, err := collect(newModel(t, srv.URL), &agentloop.Request{Messages: tc.h})
		var fe *agentloop.FileError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
		assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile, name)
		assert.Equal(t, "gemini", fe.Provider, name)
		assert.Equal(t, tc.msg, fe.Message, name)
		assert.Equal(t, 1, fe.Part, name)
		assert.Contains(t, fe.Reason, tc.reason, name)
		assert.Empty(t, srv.bodies, "%s: nothing was sent", name)
	}
}
