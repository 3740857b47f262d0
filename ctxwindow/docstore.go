package ctxwindow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/store"
)

// SummaryDoc is the name of the document of a chat in which a [DocStore]
// keeps the chat's summary.
const SummaryDoc = "summary"

// DocStore is a [SummaryStore] over the documents of a versioned
// conversation store ([store.Docs]): a conversation's summary is the
// document [SummaryDoc] of the chat with the conversation's id (the id
// given with agentloop.WithConversationID, which the aisdk handler sets to
// the chat id), holding the Summary's JSON. The summary then lives in the
// chat's database and goes with the chat when it is deleted.
//
// A conversation with no chat in the store has no summary, and saving one
// for it fails with an error wrapping [store.ErrNotFound]. A document that
// does not decode loads as an error (the Manager then summarizes afresh,
// and its next save replaces the document). Saves name the version they
// read and retry on a conflict; as the SummaryStore contract says, the last
// save wins. A DocStore is safe for concurrent use.
type DocStore struct {
	docs store.Docs
}

// NewDocStore returns a SummaryStore over docs.
func NewDocStore(docs store.Docs) *DocStore { return &DocStore{docs: docs} }

// LoadSummary implements [SummaryStore].
func (d *DocStore) LoadSummary(ctx context.Context, id string) (Summary, bool, error) {
	if id == "" {
		return Summary{}, false, ErrEmptyID
	}
	doc, err := d.docs.GetDoc(ctx, id, SummaryDoc)
	if errors.Is(err, store.ErrNotFound) {
		return Summary{}, false, nil
	}
	if err != nil {
		return Summary{}, false, err
	}
	var s Summary
	if err := json.Unmarshal(doc.Data, &s); err != nil {
		return Summary{}, false, fmt.Errorf("ctxwindow: the summary of conversation %q (version %d) does not decode: %w", id, doc.Version, err)
	}
	return s, true, nil
}

// SaveSummary implements [SummaryStore].
func (d *DocStore) SaveSummary(ctx context.Context, id string, s Summary) error {
	if id == "" {
		return ErrEmptyID
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = store.UpdateDoc(ctx, d.docs, id, SummaryDoc, func(doc *store.Doc) error {
		doc.Data = data
		return nil
	})
	return err
}
