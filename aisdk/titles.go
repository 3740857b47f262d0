package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// This file is a chat's title: the automatic one (the start of its first
// user message), the one ChatServer.Title makes after the first answer,
// and the user's (PATCH {prefix}/chats/{id}). The title is the chat's
// store.Chat.Title, so that the chat list reads it with the chats; a run
// that saves while the title changes reads the chat again and keeps the
// new title (storedRun.save), and a rename reads again when a run saved
// in between (store.UpdateChat).

// maxTitleRunes bounds a chat's title.
const maxTitleRunes = 60

// TitleTimeout bounds a call of [ChatServer.Title].
const TitleTimeout = 10 * time.Second

// TitlePrompt is the system prompt of the model call [ModelTitle] makes.
// A scripted model can recognize its request by it.
const TitlePrompt = "You name conversations. Reply with a title of at most six words for the conversation the user shows you: " +
	"no quotes, no full stop, nothing else."

// ModelTitle returns a [ChatServer.Title] func that asks model for the
// title: one call, with no tools, with [TitlePrompt] as the system prompt
// and one user message holding the first user message and the answer's
// text (each cut to 1,000 characters), so a title costs one short request
// per chat. The model's reply is cleaned as every title is (one line, no
// surrounding quotes, at most 60 characters).
func ModelTitle(model agentloop.Model) func(ctx context.Context, h agentloop.History) (string, error) {
	a := &agentloop.Agent{Model: model, Name: "title", System: TitlePrompt, MaxTurns: 1}
	return func(ctx context.Context, h agentloop.History) (string, error) {
		var question, answer string
		for _, m := range h {
			switch {
			case m.Role == agentloop.RoleUser && question == "":
				question = m.Text()
			case m.Role == agentloop.RoleAssistant && question != "":
				if t := m.Text(); t != "" {
					answer = t
				}
			}
		}
		if question == "" {
			return "", nil
		}
		prompt := "User: " + cutRunes(question, 1000) + "\n\nAssistant: " + cutRunes(answer, 1000)
		return agentloop.Text(a.Stream(ctx, agentloop.History{agentloop.UserMessage(prompt)}, nil))
	}
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// oneLine returns s with invalid UTF-8 replaced, control characters (NUL
// included, which no store takes in a title) made spaces and runs of white
// space made one space, trimmed.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// shortTitle cuts a one-line title to at most maxTitleRunes runes, at a
// word boundary, with "…".
func shortTitle(title string) string {
	if utf8.RuneCountInString(title) <= maxTitleRunes {
		return title
	}
	s := string([]rune(title)[:maxTitleRunes])
	if i := strings.LastIndexByte(s, ' '); i > len(s)/2 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ,.;:") + "…"
}

// chatTitle derives a chat's automatic title from its first user message:
// the message's text made one line (oneLine), cut at a word boundary to
// at most maxTitleRunes runes (and "…"). A chat whose first user message
// has no text has no title.
func chatTitle(h agentloop.History) string {
	for _, m := range h {
		if m.Role == agentloop.RoleUser {
			return shortTitle(oneLine(m.Text()))
		}
	}
	return ""
}

// generatedTitle cleans what a ChatServer.Title func returned: one line,
// without the quotes, "Title:" and full stop models like to add.
func generatedTitle(s string) string {
	s = oneLine(s)
	if len(s) > 6 && strings.EqualFold(s[:6], "title:") {
		s = strings.TrimSpace(s[6:])
	}
	const quotes = "\"'`*#“”‘’«» "
	s = strings.Trim(strings.TrimRight(strings.Trim(s, quotes), ". "), quotes)
	return shortTitle(s)
}

// firstAnswer reports whether h is a chat's first exchange: one user
// message, answered.
func firstAnswer(h agentloop.History) bool {
	users := 0
	for _, m := range h {
		if m.Role == agentloop.RoleUser {
			users++
		}
	}
	return users == 1 && len(h) > 0 && h[len(h)-1].Role == agentloop.RoleAssistant
}

// nameChat gives the chat the title ChatServer.Title makes, after the run
// answered the chat's first message (h, as saved), when the chat's title
// is still the automatic one: a chat the user renamed keeps its name, and
// a chat named once is not named again. A failure is logged, and the chat
// keeps its title. It returns the chat as stored, or nil when it wrote
// nothing.
func (s *storedRun) nameChat(h agentloop.History) *store.Chat {
	if s.h.Title == nil || !firstAnswer(h) || s.chat.Title != chatTitle(h) {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, TitleTimeout)
	defer cancel()
	title, err := s.h.Title(ctx, h.Clone())
	title = generatedTitle(title)
	if err != nil || title == "" {
		if err != nil {
			s.h.logger().LogAttrs(s.ctx, slog.LevelWarn, "aisdk: naming a chat failed; it keeps its title",
				slog.String("chat", s.chat.ID), slog.Any("error", err))
		}
		return nil
	}
	errRenamed := errors.New("renamed meanwhile")
	c, err := store.UpdateChat(ctx, s.h.Store, s.chat.ID, func(c *store.Chat) error {
		if c.Title != chatTitle(c.History) {
			return errRenamed
		}
		c.Title = title
		return nil
	})
	if err != nil {
		if !errors.Is(err, errRenamed) {
			s.h.logger().LogAttrs(s.ctx, slog.LevelWarn, "aisdk: saving a chat's title failed; it keeps its title",
				slog.String("chat", s.chat.ID), slog.Any("error", err))
		}
		return nil
	}
	return c
}

// TitleRequest is the JSON body of PATCH {prefix}/chats/{id}
// ([ChatServer.Routes]): the chat's new title.
type TitleRequest struct {
	Title string `json:"title"`
}

// maxSmallBody bounds the bodies of the routes that take a small JSON
// value (rename, feedback).
const maxSmallBody = 4 << 10

// readSmall checks a write's origin and content type and decodes its JSON
// body into v; a request that fails is answered, and false returned.
func (h *ChatServer) readSmall(w http.ResponseWriter, r *http.Request, v any) bool {
	if !h.sameOrigin(w, r) {
		return false
	}
	if !isJSON(r) {
		w.Header().Set("Connection", "close")
		h.refuse(w, r, http.StatusUnsupportedMediaType, fmt.Sprintf("the body must be application/json, not %q", r.Header.Get("Content-Type")), nil)
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSmallBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		w.Header().Set("Connection", "close")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", maxSmallBody), nil)
		} else {
			h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("the body is not the JSON this route takes: %v", err), nil)
		}
		return false
	}
	return true
}

// isJSON reports whether the request's body is application/json, the one
// kind a page cannot post cross-origin without the server's consent.
func isJSON(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/json"
}

// serveRename answers PATCH {prefix}/chats/{id}: 200 with the chat's
// [ChatSummary] once renamed.
func (h *ChatServer) serveRename(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !h.ready(w, r) || !h.chatsReady(w, r, id) {
		return
	}
	var req TitleRequest
	if !h.readSmall(w, r, &req) {
		return
	}
	title := oneLine(req.Title)
	switch n := utf8.RuneCountInString(title); {
	case n == 0:
		h.refuse(w, r, http.StatusBadRequest, `the "title" is empty`, nil)
		return
	case n > maxTitleRunes:
		h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf(`the "title" has %d characters; a title has at most %d`, n, maxTitleRunes), nil)
		return
	}
	// A run that saves meanwhile makes UpdateChat read again, and the run
	// keeps the new title (storedRun.save).
	c, err := store.UpdateChat(r.Context(), h.Store, id, func(c *store.Chat) error {
		c.Title = title
		return nil
	})
	var corrupt *store.CorruptError
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no chat %q", id), nil)
		return
	case errors.As(err, &corrupt):
		h.refuse(w, r, http.StatusConflict, fmt.Sprintf("chat %q could not be read; send a new message to start it afresh", id), nil)
		return
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: renaming chat %q: %w", id, err))
		return
	}
	writeJSON(w, ChatSummary{ID: c.ID, Title: c.Title, Updated: c.Updated})
}
