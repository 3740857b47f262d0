package aisdk

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// fileBody is a chat request whose user message carries text and one file.
func fileBody(chatID, mediaType, filename, url string) string {
	return `{"id":"` + chatID + `","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[` +
		`{"type":"text","text":"What is this?"},` +
		`{"type":"file","mediaType":` + quote(mediaType) + `,"filename":` + quote(filename) + `,"url":` + quote(url) + `}]}]}`
}

func TestToHistory_FilePartsBecomeBytesOrURLs(t *testing.T) {
	msgs := mustMessages(t, `[{"id":"u1","role":"user","parts":[
	  {"type":"file","mediaType":"image/png","filename":"a.png","url":"data:image/png;base64,iVBORw=="},
	  {"type":"file","mediaType":"text/plain","url":"data:,hi%21"},
	  {"type":"file","mediaType":"image/jpeg","filename":"b.jpg","url":"https://example.com/b.jpg"}]}]`)
	got, err := ToHistory(msgs)
	require.NoError(t, err)
	want := agentloop.History{{ID: "u1", Role: agentloop.RoleUser, Parts: []agentloop.Part{
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "a.png", Data: []byte("\x89PNG")}},
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "text/plain", Data: []byte("hi!")}},
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/jpeg", Filename: "b.jpg", URL: "https://example.com/b.jpg"}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	// And back: the bytes as a base64 data: URL, a URL as it was.
	ui := FromHistory(got)
	require.Len(t, ui[0].Parts, 3)
	assert.Equal(t, "data:image/png;base64,iVBORw==", ui[0].Parts[0].URL)
	assert.Equal(t, "a.png", ui[0].Parts[0].Filename)
	assert.Equal(t, "data:text/plain;base64,aGkh", ui[0].Parts[1].URL)
	assert.Equal(t, "https://example.com/b.jpg", ui[0].Parts[2].URL)
}

func TestToHistory_RefusesBadFileParts(t *testing.T) {
	for name, part := range map[string]string{
		"no media type":     `{"type":"file","url":"data:image/png;base64,AAAA"}`,
		"bad media type":    `{"type":"file","mediaType":"image png","url":"data:image/png;base64,AAAA"}`,
		"comma media type":  `{"type":"file","mediaType":"text/plain; a=\"x,y\"","url":"data:image/png;base64,AAAA"}`,
		"no url":            `{"type":"file","mediaType":"image/png"}`,
		"malformed base64":  `{"type":"file","mediaType":"image/png","url":"data:image/png;base64,!!"}`,
		"file: scheme":      `{"type":"file","mediaType":"image/png","url":"file:///etc/passwd"}`,
		"blob: scheme":      `{"type":"file","mediaType":"image/png","url":"blob:https://x/1"}`,
		"not a URL at all.": `{"type":"file","mediaType":"image/png","url":"a.png"}`,
	} {
		_, err := ToHistory(mustMessages(t, `[{"id":"u1","role":"user","parts":[`+part+`]}]`))
		require.ErrorIs(t, err, ErrBadRequest, name)
		assert.Contains(t, err.Error(), "message 0, part 0", name)
	}
}

func TestDecodeRequest_FileOverLimitNamesTheLimit(t *testing.T) {
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, 11))
	_, err := DecodeRequest(strings.NewReader(fileBody("c", "image/png", "big.png", url)), Limits{MaxFileBytes: 10})
	require.ErrorIs(t, err, ErrFileTooLarge)
	require.ErrorIs(t, err, ErrBadRequest)
	assert.Contains(t, err.Error(), `message 0, part 1: file "big.png" (image/png) is 11 bytes; the limit is 10 bytes`)

	_, err = DecodeRequest(strings.NewReader(fileBody("c", "image/png", "ok.png", url)), Limits{MaxFileBytes: 11})
	assert.NoError(t, err, "a file of exactly the limit passes")
	_, err = DecodeRequest(strings.NewReader(fileBody("c", "image/png", "ok.png", url)), Limits{MaxFileBytes: -1})
	assert.NoError(t, err, "a negative limit is no limit")

	// The default: 5 MiB.
	big := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, DefaultMaxFileBytes+1))
	_, err = DecodeRequest(strings.NewReader(fileBody("c", "image/png", "big.png", big)), Limits{})
	require.ErrorIs(t, err, ErrFileTooLarge)
	assert.Contains(t, err.Error(), "the limit is 5242880 bytes")
	// Percent-encoded content counts by its length.
	_, err = DecodeRequest(strings.NewReader(fileBody("c", "text/plain", "a.txt", "data:,"+strings.Repeat("a", 11))), Limits{MaxFileBytes: 10})
	require.ErrorIs(t, err, ErrFileTooLarge)
}

// fileSeen records the files of the last user message each model call got.
type fileSeen struct {
	mu    sync.Mutex
	files []agentloop.File
}

func (s *fileSeen) model() agentloop.Model {
	return simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == agentloop.RoleUser {
				for _, p := range r.Messages[i].Parts {
					if p.File != nil {
						s.files = append(s.files, *p.File)
					}
				}
				break
			}
		}
		return []simtest.Step{simtest.Text("A picture.")}, nil
	})
}

func TestHandlers_PassUserFilesToTheModelAsBytes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	for name, mk := range map[string]func(agentloop.Model) http.Handler{
		"stateless": func(m agentloop.Model) http.Handler { return newHandler(m) },
		"stored":    func(m agentloop.Model) http.Handler { return newChatServer(newMemStore(t), m) },
	} {
		var seen fileSeen
		rec := postRaw(t, mk(seen.model()), fileBody("chat-"+name, "image/png", "cat.png", url))
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body)
		want := []agentloop.File{{MediaType: "image/png", Filename: "cat.png", Data: png}}
		if diff := cmp.Diff(want, seen.files); diff != "" {
			t.Errorf("%s: files the model got (-want +got):\n%s", name, diff)
		}
	}
}

func TestHandlers_AnswerAFileOverTheLimitWith413(t *testing.T) {
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, 2048))
	for name, mk := range map[string]func(agentloop.Model) http.Handler{
		"stateless": func(m agentloop.Model) http.Handler {
			h := newHandler(m)
			h.Limits.MaxFileBytes = 1024
			return h
		},
		"stored": func(m agentloop.Model) http.Handler {
			h := newChatServer(newMemStore(t), m)
			h.Limits.MaxFileBytes = 1024
			return h
		},
	} {
		var seen fileSeen
		rec := postRaw(t, mk(seen.model()), fileBody("chat-"+name, "image/png", "big.png", url))
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, name)
		assert.Contains(t, rec.Body.String(), `file \"big.png\" (image/png) is 2048 bytes; the limit is 1024 bytes`, name)
		assert.Empty(t, seen.files, "%s: the model was not called", name)
	}
}

func TestHandler_StatelessRefusesAnAssistantFileTheClientMade(t *testing.T) {
	var seen fileSeen
	body := `{"id":"c","trigger":"submit-message","messages":[
	  {"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]},
	  {"id":"a1","role":"assistant","parts":[{"type":"step-start"},{"type":"file","mediaType":"image/png","url":"data:image/png;base64,AAAA"}]},
	  {"id":"u2","role":"user","parts":[{"type":"text","text":"and?"}]}]}`
	rec := postRaw(t, newHandler(seen.model()), body)
	assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "files")
	assert.Empty(t, seen.files)
}

func TestChatServer_IgnoresAnAssistantFileTheStoreDoesNotHold(t *testing.T) {
	st := newMemStore(t)
	var mu sync.Mutex
	var sent []agentloop.File
	model := simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range r.Messages {
			for _, p := range m.Parts {
				if p.File != nil {
					sent = append(sent, *p.File)
				}
			}
		}
		return []simtest.Step{simtest.Text("ok")}, nil
	})
	h := newChatServer(st, model)
	rec := postRaw(t, h, `{"id":"c","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	// The client adds a file to the stored answer: the stored history is
	// authoritative (design.md §12.4), so the file reaches neither the
	// model nor the store.
	posted := FromHistory(storedHistory(t, st, "c"))
	posted[1].Parts = append(posted[1].Parts, UIPart{Type: "file", MediaType: "image/png", URL: "data:image/png;base64,AAAA"})
	posted = append(posted, UIMessage{ID: "u2", Role: "user", Parts: []UIPart{{Type: "text", Text: "and?"}}})
	b, err := (ChatRequest{ID: "c", Trigger: TriggerSubmit, Messages: posted}).MarshalJSON()
	require.NoError(t, err)
	rec = postRaw(t, h, string(b))
	require.Less(t, rec.Code, 500, rec.Body.String())
	assert.Empty(t, sent, "the model got no file")
	for _, m := range storedHistory(t, st, "c") {
		for _, p := range m.Parts {
			assert.Nil(t, p.File, "no file got into the stored chat")
		}
	}
}

func TestHandler_NamesAFileTheModelCannotTakeInTheErrorChunk(t *testing.T) {
	model := simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		return nil, &agentloop.FileError{Provider: "ollama", Message: 0, Part: 1, MediaType: "application/pdf", Filename: "a.pdf", Reason: "Ollama takes images only"}
	})
	rec := postRaw(t, newHandler(model), fileBody("c", "application/pdf", "a.pdf", "data:application/pdf;base64,JVBERg=="))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"errorText":"The model cannot take the file \"a.pdf\" (application/pdf): Ollama takes images only."`)
}
