package aisdk_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
)

func rate(api http.Handler, chatID, msgID, rating string, edit ...func(*http.Request)) (int, string) {
	b, _ := json.Marshal(aisdk.FeedbackRequest{Rating: rating})
	return do(api, http.MethodPut, "/api/chats/"+chatID+"/feedback/"+msgID, string(b), edit...)
}

func viewFeedback(t *testing.T, api http.Handler, id string) map[string]string {
	t.Helper()
	code, body := do(api, http.MethodGet, "/api/chats/"+id, "")
	require.Equal(t, http.StatusOK, code, body)
	var v aisdk.ChatView
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return v.Feedback
}

func TestFeedback_ARatingIsStoredWithTheChatAndShownWithIt(t *testing.T) {
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	code, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "Hello"))
	require.Equal(t, http.StatusOK, code, body)
	answer := viewMessages(t, api, "c1")[1].ID
	assert.Nil(t, viewFeedback(t, api, "c1"), "no ratings yet")

	code, body = rate(api, "c1", answer, aisdk.RatingUp)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"feedback":{"`+answer+`":"up"}}`, body)
	assert.Equal(t, map[string]string{answer: "up"}, viewFeedback(t, api, "c1"))

	code, body = rate(api, "c1", answer, aisdk.RatingDown)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]string{answer: "down"}, viewFeedback(t, api, "c1"), "a new rating replaces the old")

	code, body = rate(api, "c1", answer, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Nil(t, viewFeedback(t, api, "c1"), `"" takes the rating back`)

	// A regenerated answer is a new message: the old one's rating is not
	// shown with it.
	code, body = rate(api, "c1", answer, aisdk.RatingDown)
	require.Equal(t, http.StatusOK, code, body)
	regen := `{"id":"c1","trigger":"regenerate-message","messageId":"` + answer + `","messages":[{"id":"u-c1","role":"user","parts":[{"type":"text","text":"Hello"}]}]}`
	code, body = do(api, http.MethodPost, "/api/chat", regen)
	require.Equal(t, http.StatusOK, code, body)
	msgs := viewMessages(t, api, "c1")
	require.Len(t, msgs, 2)
	require.NotEqual(t, answer, msgs[1].ID)
	assert.Nil(t, viewFeedback(t, api, "c1"))
}

func TestFeedback_RefusesWhatItCannotTake(t *testing.T) {
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	code, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "Hello"))
	require.Equal(t, http.StatusOK, code, body)
	answer := viewMessages(t, api, "c1")[1].ID

	for _, tc := range []struct {
		name, chat, msg, body string
		edit                  func(*http.Request)
		status                int
		says                  string
	}{
		{"no such message", "c1", "msg-nope", `{"rating":"up"}`, nil, http.StatusNotFound, `no answer with message id "msg-nope"`},
		{"a user message", "c1", "u-c1", `{"rating":"up"}`, nil, http.StatusNotFound, "no answer"},
		{"no such chat", "nope", answer, `{"rating":"up"}`, nil, http.StatusNotFound, `no chat "nope"`},
		{"a bad rating", "c1", answer, `{"rating":"meh"}`, nil, http.StatusBadRequest, `"meh"`},
		{"not JSON", "c1", answer, `{"rating":"up"}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType, "application/json"},
		{"another site", "c1", answer, `{"rating":"up"}`, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, http.StatusForbidden, "cross-origin"},
		{"a bad body", "c1", answer, `{"rating":1}`, nil, http.StatusBadRequest, "JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var edits []func(*http.Request)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			code, body := do(api, http.MethodPut, "/api/chats/"+tc.chat+"/feedback/"+tc.msg, tc.body, edits...)
			assert.Equal(t, tc.status, code, body)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Contains(t, e.Error, tc.says)
		})
	}
	assert.Nil(t, viewFeedback(t, api, "c1"), "nothing was stored")
}
