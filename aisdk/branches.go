package aisdk

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// This file keeps a chat's other versions: the messages an edit or a
// regeneration took out of the chat (the stored history holds the current
// version only), so that a page shows the same versions after a reload.
// They are a document of the chat (branchesDoc), written once the
// request that dropped them is saved.

// branchesDoc names the chat document ([store.Docs]) that keeps the
// messages of a chat's other versions: a JSON array of [BranchMessage],
// parents before their children.
const branchesDoc = "aisdk.branches"

// maxBranchMessages bounds the messages a chat keeps of its other
// versions; past it the oldest are forgotten (with the versions that
// follow from them).
const maxBranchMessages = 500

// BranchMessage is a message of another version of a chat, in
// [ChatView.Branches].
type BranchMessage struct {
	// ParentID is the id of the message it follows: a message of the
	// current version ([ChatView.Messages]) or of another version; "" for
	// a first message.
	ParentID string `json:"parentId"`
	// Message is the message as it was when it was taken out of the chat.
	Message UIMessage `json:"message"`
}

// droppedBranch returns the messages of old that the history new no
// longer has, from the first one they differ at (an edited message, a
// regenerated answer) on, each with the id of the message before it:
// nothing when new goes on from old (a continuation, a new message).
func droppedBranch(old, new agentloop.History) []BranchMessage {
	if len(old) == 0 {
		return nil
	}
	was, is := FromHistory(old), FromHistory(new)
	k := 0
	for k < len(was) && k < len(is) && was[k].ID == is[k].ID {
		k++
	}
	var out []BranchMessage
	for i := k; i < len(was); i++ {
		if was[i].Role == "system" {
			continue
		}
		parent := ""
		if i > 0 {
			parent = was[i-1].ID
		}
		out = append(out, BranchMessage{ParentID: parent, Message: was[i]})
	}
	return out
}

// keepBranch adds the messages a request took out of the chat to its
// branches document. A failure is logged: the chat lost a version the
// page can show, nothing of its current one.
func (h *ChatServer) keepBranch(ctx context.Context, chatID string, dropped []BranchMessage) {
	docs, ok := h.Store.(store.Docs)
	if !ok || len(dropped) == 0 {
		return
	}
	_, err := store.UpdateDoc(ctx, docs, chatID, branchesDoc, func(d *store.Doc) error {
		all := append(decodeBranches(d.Data), dropped...)
		if n := len(all) - maxBranchMessages; n > 0 {
			all = all[n:]
		}
		data, err := json.Marshal(all)
		d.Data = data
		return err
	})
	if err != nil {
		h.logger().LogAttrs(ctx, slog.LevelWarn, "aisdk: keeping a chat's other version failed",
			slog.String("chat", chatID), slog.Any("error", err))
	}
}

func decodeBranches(data []byte) []BranchMessage {
	var v []BranchMessage
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	return v
}

// branchesOf returns the chat's other versions for its view, msgs being
// its current one: the kept messages that are not current and whose
// parent is known (current, or kept), parents first; nil when none.
func (h *ChatServer) branchesOf(ctx context.Context, chatID string, msgs []UIMessage) []BranchMessage {
	docs, ok := h.Store.(store.Docs)
	if !ok {
		return nil
	}
	d, err := docs.GetDoc(ctx, chatID, branchesDoc)
	if err != nil {
		return nil
	}
	known := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		known[m.ID] = true
	}
	// A later drop can hold the parent of an earlier one (an edit above
	// a regenerated answer), so parents are looked for until none is
	// found.
	var out []BranchMessage
	rest := decodeBranches(d.Data)
	for found := true; found; {
		found = false
		left := rest[:0]
		for _, b := range rest {
			switch {
			case b.Message.ID == "" || known[b.Message.ID]:
			case b.ParentID != "" && !known[b.ParentID]:
				left = append(left, b)
			default:
				known[b.Message.ID], found = true, true
				out = append(out, b)
			}
		}
		rest = left
	}
	return out
}
