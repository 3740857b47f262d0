package agentloop_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

func TestParseDataURL_ReadsBase64AndPercentEncoded(t *testing.T) {
	for _, tc := range []struct {
		url, mediaType, data string
	}{
		{"data:image/png;base64,iVBORw==", "image/png", "\x89PNG"},
		{"data:image/png;base64,iVBORw", "image/png", "\x89PNG"},
		{"DATA:image/png;BASE64,iVBORw==", "image/png", "\x89PNG"},
		{"data:application/octet-stream;base64,-_8=", "application/octet-stream", "\xfb\xff"},
		{"data:,hello%20world", "text/plain;charset=US-ASCII", "hello world"},
		{"data:;charset=utf-8,h%C3%A9", "text/plain;charset=utf-8", "hé"},
		{"data:text/csv,a,b", "text/csv", "a,b"},
	} {
		mt, data, err := agentloop.ParseDataURL(tc.url)
		require.NoError(t, err, tc.url)
		assert.Equal(t, tc.mediaType, mt, tc.url)
		assert.Equal(t, tc.data, string(data), tc.url)
	}
}

func TestParseDataURL_RefusesMalformed(t *testing.T) {
	for _, url := range []string{
		"https://example.com/a.png",
		"data:image/png;base64",
		"data:image/png;base64,!!!",
		"data:image png;base64,AAAA",
		"data:text/plain,%zz",
	} {
		_, _, err := agentloop.ParseDataURL(url)
		assert.ErrorIs(t, err, agentloop.ErrInvalidDataURL, url)
	}
}

func TestFile_InlineAndDataURL(t *testing.T) {
	data, ok, err := (&agentloop.File{MediaType: "image/png", Data: []byte("x")}).Inline()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "x", string(data))

	data, ok, err = (&agentloop.File{MediaType: "image/png", URL: "data:image/png;base64,eA=="}).Inline()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "x", string(data))

	_, ok, err = (&agentloop.File{MediaType: "image/png", URL: "https://example.com/x.png"}).Inline()
	require.NoError(t, err)
	assert.False(t, ok, "a file located elsewhere is not inline")

	_, _, err = (&agentloop.File{URL: "data:image/png;base64,!"}).Inline()
	assert.ErrorIs(t, err, agentloop.ErrInvalidDataURL)

	assert.Equal(t, "data:image/png;base64,eA==", (&agentloop.File{MediaType: "image/png", Data: []byte("x")}).DataURL())
	assert.Equal(t, "data:image/gif;base64,eA==", (&agentloop.File{MediaType: "image/png", URL: "data:image/gif;base64,eA=="}).DataURL())
	assert.Equal(t, "data:image/svg+xml;base64,PHN2Zy8+", (&agentloop.File{URL: "data:image/svg+xml,%3Csvg%2F%3E"}).DataURL(), "percent-encoded content is re-encoded")
	assert.Empty(t, (&agentloop.File{MediaType: "image/png", URL: "https://example.com/x.png"}).DataURL())
	assert.Empty(t, (&agentloop.File{MediaType: "image/png", URL: "data:image/png;base64,!"}).DataURL())
}

func TestFileError_NamesProviderPartAndMediaType(t *testing.T) {
	var err error = &agentloop.FileError{Provider: "ollama", Message: 2, Part: 1, MediaType: "application/pdf", Filename: "a.pdf", Reason: "Ollama takes images only"}
	assert.Equal(t, `ollama: message 2 part 1: file "a.pdf" (application/pdf) cannot be sent: Ollama takes images only`, err.Error())
	assert.True(t, errors.Is(err, agentloop.ErrUnsupportedFile))
}

// FuzzParseDataURL: parsing never panics, and a URL it reads re-encodes
// (File.DataURL) to one that reads back to the same media type and bytes.
func FuzzParseDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,iVBORw==", "data:,a%20b", "data:;charset=utf-8,x", "data:text/csv,a,b", "data:image/png;base64", "DATA:A/B;BASE64,-_8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mt, data, err := agentloop.ParseDataURL(s)
		if err != nil {
			return
		}
		again := (&agentloop.File{URL: s}).DataURL()
		mt2, data2, err := agentloop.ParseDataURL(again)
		if err != nil {
			t.Fatalf("DataURL of %q is %q, which does not parse: %v", s, again, err)
		}
		if mt2 != mt || string(data2) != string(data) {
			t.Fatalf("%q read back as %q %q, want %q %q", again, mt2, data2, mt, data)
		}
	})
}
