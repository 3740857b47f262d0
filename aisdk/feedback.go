package aisdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentloop/agentloop/store"
)

// This file is the users' feedback on answers: a thumb up or down per
// assistant message, kept in a document of the chat (feedbackDoc), so
// that it goes with the chat and never races a run's saves of the
// history.

// Ratings of an answer, in [FeedbackRequest] and [ChatView.Feedback].
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// feedbackDoc names the chat document ([store.Docs]) that keeps the
// ratings of a chat's answers: a JSON object of message id to rating.
const feedbackDoc = "aisdk.feedback"

// FeedbackRequest is the JSON body of PUT
// {prefix}/chats/{id}/feedback/{message} ([ChatServer.Routes]).
type FeedbackRequest struct {
	// Rating is [RatingUp], [RatingDown], or "" to take a rating back.
	Rating string `json:"rating"`
}

// FeedbackView is the JSON answer of PUT {prefix}/chats/{id}/feedback/{message}.
type FeedbackView struct {
	// Feedback is the chat's ratings after the change, as in
	// [ChatView.Feedback].
	Feedback map[string]string `json:"feedback"`
}

// serveFeedback answers PUT {prefix}/chats/{id}/feedback/{message}.
func (h *ChatServer) serveFeedback(w http.ResponseWriter, r *http.Request) {
	id, msgID := r.PathValue("id"), r.PathValue("message")
	if !h.ready(w, r) || !h.chatsReady(w, r, id) {
		return
	}
	var req FeedbackRequest
	if !h.readSmall(w, r, &req) {
		return
	}
	if req.Rating != RatingUp && req.Rating != RatingDown && req.Rating != "" {
		h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf(`the "rating" is %q; a rating is "up", "down", or "" to take it back`, req.Rating), nil)
		return
	}
	docs, ok := h.Store.(store.Docs)
	if !ok {
		h.refuse(w, r, http.StatusNotImplemented, "this server's store keeps no documents, so it keeps no feedback", nil)
		return
	}
	c, err := h.Store.GetChat(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no chat %q", id), nil)
		return
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: loading chat %q: %w", id, err))
		return
	}
	if !hasAnswer(FromHistory(c.History), msgID) {
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("chat %q has no answer with message id %q", id, msgID), nil)
		return
	}
	var ratings map[string]string
	_, err = store.UpdateDoc(r.Context(), docs, id, feedbackDoc, func(d *store.Doc) error {
		ratings = decodeRatings(d.Data)
		if req.Rating == "" {
			delete(ratings, msgID)
		} else {
			ratings[msgID] = req.Rating
		}
		data, merr := json.Marshal(ratings)
		d.Data = data
		return merr
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no chat %q", id), nil)
		return
	case err != nil:
		h.internalError(w, r, fmt.Errorf("aisdk: saving the feedback of chat %q: %w", id, err))
		return
	}
	writeJSON(w, FeedbackView{Feedback: ratings})
}

// hasAnswer reports whether msgs has an assistant message with id msgID.
func hasAnswer(msgs []UIMessage, msgID string) bool {
	for _, m := range msgs {
		if m.Role == "assistant" && m.ID == msgID && msgID != "" {
			return true
		}
	}
	return false
}

// decodeRatings decodes a feedback document; what does not decode, and
// ratings that are not "up" or "down", count as none.
func decodeRatings(data []byte) map[string]string {
	var v map[string]string
	_ = json.Unmarshal(data, &v)
	out := make(map[string]string, len(v))
	for k, r := range v {
		if r == RatingUp || r == RatingDown {
			out[k] = r
		}
	}
	return out
}

// feedbackOf returns the ratings of the answers among msgs: nil when there
// are none, or the store keeps no documents.
func (h *ChatServer) feedbackOf(ctx context.Context, chatID string, msgs []UIMessage) map[string]string {
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return nil
	}
	d, err := docs.GetDoc(ctx, chatID, feedbackDoc)
	if err != nil {
		return nil
	}
	var out map[string]string
	for id, r := range decodeRatings(d.Data) {
		if hasAnswer(msgs, id) {
			if out == nil {
				out = map[string]string{}
			}
			out[id] = r
		}
	}
	return out
}
