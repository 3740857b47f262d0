package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// lastContent returns the content of the last message of a recorded
// request body.
func lastContent(t testing.TB, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	return string(req.Messages[len(req.Messages)-1].Content)
}

func TestOpenAI_SendsImagesAndPDFs(t *testing.T) {
	providertest.SendsFiles(t, provider, lastContent, func(want string) string { return `[{"type":"text","text":"What?"},` + want + `]` }, map[string]providertest.SentFile{
		"image bytes":    {File: agentloop.File{MediaType: "image/png", Data: []byte{1, 2, 3}}, Want: `{"type":"image_url","image_url":{"url":"data:image/png;base64,AQID"}}`},
		"image data URL": {File: agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,AQID"}, Want: `{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AQID"}}`},
		"image by URL":   {File: agentloop.File{MediaType: "image/png", URL: "https://example.com/a.png"}, Want: `{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}`},
		"PDF bytes":      {File: agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}, Want: `{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERg=="}}`},
	})
}

func TestOpenAI_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	providertest.RejectsFiles(t, provider, map[string]providertest.RejectedFile{
		"a text file":  {File: agentloop.File{MediaType: "text/plain", Filename: "a.txt", Data: []byte("x")}, Reason: "images and PDFs only"},
		"a PDF by URL": {File: agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", URL: "https://example.com/a.pdf"}, Reason: "as data only"},
	})
}
