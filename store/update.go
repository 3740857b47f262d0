package store

import (
	"context"
	"errors"
)

// UpdateChat applies fn to the stored chat and writes the result, as one
// optimistic transaction: when the write conflicts with another writer, it
// reads the chat again and calls fn again, until a write succeeds, fn
// fails (its error is returned) or ctx is done. fn must change only the
// chat it is given, since it may be called more than once. It returns the
// chat as written.
//
// A missing chat is an error wrapping [ErrNotFound], and a corrupt one a
// [*CorruptError]; fn is not called for either.
func UpdateChat(ctx context.Context, chats Chats, id string, fn func(*Chat) error) (*Chat, error) {
	for {
		c, err := chats.GetChat(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := fn(c); err != nil {
			return nil, err
		}
		err = chats.PutChat(ctx, c)
		if !errors.Is(err, ErrConflict) {
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
}

// UpdateDoc is [UpdateChat] for a document: a missing document is given
// to fn as a new one (Version 0, no Data). The chat must exist.
func UpdateDoc(ctx context.Context, docs Docs, chatID, name string, fn func(*Doc) error) (*Doc, error) {
	for {
		d, err := docs.GetDoc(ctx, chatID, name)
		if errors.Is(err, ErrNotFound) {
			d, err = &Doc{ChatID: chatID, Name: name}, nil
		}
		if err != nil {
			return nil, err
		}
		if err := fn(d); err != nil {
			return nil, err
		}
		err = docs.PutDoc(ctx, d)
		if !errors.Is(err, ErrConflict) {
			if err != nil {
				return nil, err
			}
			return d, nil
		}
	}
}
