package aisdk

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/agentloop/agentloop"
)

// This file is the stored mode's answer to a repeated request: one whose
// additions the stored chat already has (a retry whose first attempt was
// saved but never answered to its client, a double click, an approval
// posted again). Nothing runs and nothing is written.

// reconcileRequest is [Reconcile] for the Handler: it also reports whether
// the history to run is stored unchanged (the request adds nothing), and
// takes a request whose last message is a user message that stored
// already has, as its last user message, with everything before it as
// stored, for a repeat of the request that added it (stored is returned,
// unchanged). A user message repeated after the chat went on from it is
// still a conflict.
func reconcileRequest(stored agentloop.History, req *ChatRequest) (agentloop.History, bool, error) {
	history, err := Reconcile(stored, req)
	if err == nil {
		return history, sameHistory(history, stored), nil
	}
	if !errors.Is(err, ErrChatMismatch) || req.Trigger == TriggerRegenerate || len(req.Messages) == 0 {
		return nil, false, err
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" || last.ID == "" || req.MessageID == last.ID {
		return nil, false, err
	}
	k := -1
	for i, m := range stored {
		if m.Role == agentloop.RoleUser {
			if m.ID == last.ID {
				k = i
			} else if k >= 0 {
				return nil, false, fmt.Errorf("%w: user message %q is already in the stored chat, which went on since (reload the chat; an edit must name it in \"messageId\")", ErrChatMismatch, last.ID)
			}
		}
	}
	if k < 0 {
		return nil, false, err
	}
	if _, rerr := Reconcile(stored[:k+1], req); rerr != nil {
		return nil, false, err
	}
	return stored, true, nil
}

// endsAnswered reports whether h ends with an assistant message: its last
// request was answered (or paused with pending calls), so running it
// again would answer it twice.
func endsAnswered(h agentloop.History) bool {
	return len(h) > 0 && h[len(h)-1].Role == agentloop.RoleAssistant
}

// serveRepeat answers a repeated request (see the package documentation,
// "Repeated requests"), running and writing nothing. inProgress is the
// chat's run in progress, "" for none.
//
//   - A repeated user message whose run goes on gets that run's stream, as
//     the resume route serves it.
//   - A repeated user message whose answer is stored gets that answer,
//     restated as a stream (start, the message's parts, finish).
//   - A repeated continuation (tool results or approval decisions that the
//     chat already has) gets 409: the client has the message; it reloads
//     the chat (or resumes its stream) to see what came of it.
func (h *ChatServer) serveRepeat(w http.ResponseWriter, r *http.Request, req *ChatRequest, history agentloop.History, inProgress string) {
	if req.Messages[len(req.Messages)-1].Role != "user" {
		msg := fmt.Sprintf("chat %q already has these results and decisions: they were applied once and are not run again; reload the chat", req.ID)
		if inProgress != "" {
			msg = fmt.Sprintf("chat %q already has these results and decisions, and their run is in progress: resume its stream, or reload the chat", req.ID)
		}
		h.refuse(w, r, http.StatusConflict, msg, nil)
		return
	}
	if inProgress != "" {
		h.followStream(w, r, req.ID, inProgress, 0)
		return
	}
	msgs := FromHistory(history)
	answer := msgs[len(msgs)-1]
	sw := h.newWriter(w)
	_ = sw.WriteChunk(StartChunk{MessageID: answer.ID})
	for _, c := range restateParts(answer.Parts) {
		_ = sw.WriteChunk(c)
	}
	reason := FinishReasonStop
	if len(history.Unanswered()) > 0 {
		reason = FinishReasonToolCalls
	}
	_ = sw.WriteChunk(FinishChunk{FinishReason: reason})
	_ = sw.Close()
}
