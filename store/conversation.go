package store

import (
	"bytes"
	"context"
	"errors"
)

// ChatlessName is the name, among the documents of no chat, of the
// document called name of a conversation that is not a chat of the store:
// name, a slash, and the conversation id. Names of that form are reserved
// for conversations' documents.
func ChatlessName(conversationID, name string) string { return name + "/" + conversationID }

// GetConversationDoc returns the document called name of the conversation:
// the document of the chat whose id is conversationID if there is one, else
// the document of no chat named [ChatlessName](conversationID, name). When
// neither exists the error wraps [ErrNotFound]. An empty conversationID has
// only the document of no chat.
func GetConversationDoc(ctx context.Context, docs Docs, conversationID, name string) (*Doc, error) {
	if conversationID != "" {
		d, err := docs.GetDoc(ctx, conversationID, name)
		if !errors.Is(err, ErrNotFound) {
			return d, err
		}
	}
	return docs.GetDoc(ctx, "", ChatlessName(conversationID, name))
}

// UpdateConversationDoc is [UpdateDoc] for the document called name of a
// conversation: the document [GetConversationDoc] finds is given to fn and
// written where it is; when there is none, fn gets a new one (Version 0,
// no Data), which is written as a document of the chat whose id is
// conversationID if that chat exists, and as a document of no chat
// otherwise. When fn leaves the Data of an existing document as it was,
// nothing is written. fn must change only the document's Data (and may be
// called more than once, as with UpdateDoc). It returns the document as
// stored.
func UpdateConversationDoc(ctx context.Context, docs Docs, conversationID, name string, fn func(*Doc) error) (*Doc, error) {
	for {
		d, err := GetConversationDoc(ctx, docs, conversationID, name)
		isNew := errors.Is(err, ErrNotFound)
		switch {
		case isNew && conversationID != "":
			d, err = &Doc{ChatID: conversationID, Name: name}, nil
		case isNew:
			d, err = &Doc{Name: ChatlessName(conversationID, name)}, nil
		}
		if err != nil {
			return nil, err
		}
		old := bytes.Clone(d.Data)
		if err := fn(d); err != nil {
			return nil, err
		}
		if !isNew && bytes.Equal(old, d.Data) {
			return d, nil
		}
		err = docs.PutDoc(ctx, d)
		if isNew && d.ChatID != "" && errors.Is(err, ErrNotFound) {
			// No such chat: the conversation's document is of no chat.
			d.ChatID, d.Name = "", ChatlessName(conversationID, name)
			err = docs.PutDoc(ctx, d)
		}
		if !errors.Is(err, ErrConflict) {
			if err != nil {
				return nil, err
			}
			return d, nil
		}
	}
}
