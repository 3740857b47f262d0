package anthropic_test

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

func TestAnthropic_SendsImagesAndPDFs(t *testing.T) {
	for name, tc := range map[string]struct {
		file agentloop.File
		want string // the file's block, without its cache breakpoint
	}{
		"image bytes":    {agentloop.File{MediaType: "image/png", Data: []byte{1, 2, 3}}, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQID"}}`},
		"image data URL": {agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,AQID"}, `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AQID"}}`},
		"image by URL":   {agentloop.File{MediaType: "image/webp", URL: "https://example.com/a.webp"}, `{"type":"image","source":{"type":"url","url":"https://example.com/a.webp"}}`},
		"PDF bytes":      {agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}, `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="}}`},
		"PDF by URL":     {agentloop.File{MediaType: "application/pdf", URL: "https://example.com/a.pdf"}, `{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}}`},
	} {
		srv := newServer(t, []byte(textBody))
		_, err := collect(newModel(t, srv.URL), &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("What?"), filePart(tc.file)}}}})
		require.NoError(t, err, name)
		var req struct {
			Messages []struct {
				Content []map[string]any `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(srv.request(0), &req), name)
		block := req.Messages[len(req.Messages)-1].Content[1]
		delete(block, "cache_control")
		got, err := json.Marshal(block)
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(got), name)
	}
}

func TestAnthropic_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	pdf := agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}
	user := func(f agentloop.File) agentloop.History {
		return agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("see"), filePart(f)}}}
	}
	for name, tc := range map[string]struct {
		h      agentloop.History
		msg    int
		reason string
	}{
		"a text file":       {user(agentloop.File{MediaType: "text/plain", Filename: "a.txt", Data: []byte("x")}), 0, "PDFs only"},
		"an SVG image":      {user(agentloop.File{MediaType: "image/svg+xml", Filename: "a.svg", Data: []byte("<svg/>")}), 0, "WebP images"},
		"bad data URL":      {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64,@"}), 0, "base64"},
		"an ftp URL":        {user(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "ftp://example.com/a.png"}), 0, "http(s) URL"},
		"a system file":     {agentloop.History{{Role: agentloop.RoleSystem, Parts: []agentloop.Part{agentloop.TextPart("rules"), filePart(pdf)}}, agentloop.UserMessage("hi")}, 0, "not in system messages"},
		"an assistant file": {agentloop.History{agentloop.UserMessage("draw"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("here"), filePart(pdf)}}}, 1, "not in assistant messages"},
	} {
		srv := newServer(t, []byte(textBody))
		_, err := collect(newModel(t, srv.URL), &agentloop.Request{Messages: tc.h})
		var fe *agentloop.FileError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
		assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile, name)
		assert.Equal(t, "anthropic", fe.Provider, name)
		assert.Equal(t, tc.msg, fe.Message, name)
		assert.Equal(t, 1, fe.Part, name)
		assert.Contains(t, fe.Reason, tc.reason, name)
		assert.Empty(t, srv.requests, "%s: nothing was sent", name)
	}
}
