package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// fileBlock returns the block after the text of the last message of a
// recorded request body, without its cache breakpoint.
func fileBlock(t testing.TB, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	block := req.Messages[len(req.Messages)-1].Content[1]
	delete(block, "cache_control")
	got, err := json.Marshal(block)
	require.NoError(t, err)
	return string(got)
}

func TestAnthropic_SendsImagesAndPDFs(t *testing.T) {
	providertest.SendsFiles(t, provider, fileBlock, nil, map[string]providertest.SentFile{
		"image bytes":    {File: agentloop.File{MediaType: "image/png", Data: []byte{1, 2, 3}}, Want: `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQID"}}`},
		"image data URL": {File: agentloop.File{MediaType: "image/jpeg", URL: "data:image/jpeg;base64,AQID"}, Want: `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AQID"}}`},
		"image by URL":   {File: agentloop.File{MediaType: "image/webp", URL: "https://example.com/a.webp"}, Want: `{"type":"image","source":{"type":"url","url":"https://example.com/a.webp"}}`},
		"PDF bytes":      {File: agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}, Want: `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="}}`},
		"PDF by URL":     {File: agentloop.File{MediaType: "application/pdf", URL: "https://example.com/a.pdf"}, Want: `{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}}`},
	})
}

func TestAnthropic_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	providertest.RejectsFiles(t, provider, map[string]providertest.RejectedFile{
		"a text file":  {File: agentloop.File{MediaType: "text/plain", Filename: "a.txt", Data: []byte("x")}, Reason: "PDFs only"},
		"an SVG image": {File: agentloop.File{MediaType: "image/svg+xml", Filename: "a.svg", Data: []byte("<svg/>")}, Reason: "WebP images"},
		"an ftp URL":   {File: agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "ftp://example.com/a.png"}, Reason: "http(s) URL"},
	})
}
