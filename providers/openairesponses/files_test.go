package openairesponses_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

func filePart(f agentloop.File) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartFile, File: &f}
}

func TestResponses_SendsImagesAndPDFs(t *testing.T) {
	for name, tc := range map[string]struct {
		file agentloop.File
		want string // the file's input content
	}{
		"image bytes":    {agentloop.File{MediaType: "image/png", Data: []byte{1, 2, 3}}, `{"type":"input_image","image_url":"data:image/png;base64,AQID"}`},
		"image data URL": {agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,AQID"}, `{"type":"input_image","image_url":"data:image/jpeg;base64,AQID"}`},
		"image by URL":   {agentloop.File{MediaType: "image/png", URL: "https://example.com/a.png"}, `{"type":"input_image","image_url":"https://example.com/a.png"}`},
		"PDF bytes":      {agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}, `{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERg=="}`},
	} {
		srv := newServer(t, []byte(textBody))
		_, err := collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("What?"), filePart(tc.file)}}}})
		require.NoError(t, err, name)
		input := srv.request(t, 0)["input"].([]any)
		got, err := json.Marshal(input[len(input)-1].(map[string]any)["content"])
		require.NoError(t, err)
		assert.JSONEq(t, `[{"type":"input_text","text":"What?"},`+tc.want+`]`, string(got), name)
	}
}

func TestResponses_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	pdf := agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}
	user := func(f agentloop.File) agentloop.History {
		return agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("see"), filePart(f)}}}
	}
	for name, tc := range map[string]struct {
		h      agentloop.History
		msg    int
		reason string
	}{
		"a text file":       {user(agentloop.File{MediaType: "text/plain", Filename: "a.txt", Data: []byte("x")}), 0, "images and PDFs only"},
		"a PDF by URL":      {user(agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", URL: "https://example.com/a.pdf"}), 0, "as data only"},
		"bad data URL":      {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64,@"}), 0, "base64"},
		"a system file":     {agentloop.History{{Role: agentloop.RoleSystem, Parts: []agentloop.Part{agentloop.TextPart("rules"), filePart(pdf)}}, agentloop.UserMessage("hi")}, 0, "not in system messages"},
		"an assistant file": {agentloop.History{agentloop.UserMessage("draw"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("here"), filePart(pdf)}}}, 1, "not in assistant messages"},
	} {
		srv := newServer(t, []byte(textBody))
		_, err := collect(newModel(t, srv.URL), &agentloop.Request{Messages: tc.h})
		var fe *agentloop.FileError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
		assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile, name)
		assert.Equal(t, "openai", fe.Provider, name)
		assert.Equal(t, tc.msg, fe.Message, name)
		assert.Equal(t, 1, fe.Part, name)
		assert.Contains(t, fe.Reason, tc.reason, name)
		assert.Empty(t, srv.requests, "%s: nothing was sent", name)
	}
}
