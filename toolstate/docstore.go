package toolstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/store"
)

// DocName is the name of the document of a chat in which a [DocStore]
// keeps the chat's tool states.
const DocName = "toolstate"

// DocStore is a [Store] over the documents of a versioned conversation
// store ([store.Docs]): a conversation's state is the document [DocName]
// of the chat with the conversation's id, as [Marshal] writes it. Tool
// states then live in the same database as the chats (SQLite, or
// PostgreSQL shared by several replicas), and deleting a chat deletes them.
//
// Update is an optimistic read-modify-write: it reads the document, calls
// fn, and writes the result naming the version it read; when another
// writer (on any replica) got there first, it reads again and calls fn
// again. Concurrent updates so lose nothing, without a lock; fn may be
// called more than once and must only change the state it is given. An
// update that leaves the state as it was writes nothing.
//
// The chat must exist: an Update of a conversation that has no chat in the
// store fails with an error wrapping [store.ErrNotFound] (Load returns a
// fresh state, Delete and Discard do nothing). A DocStore is safe for
// concurrent use.
type DocStore struct {
	docs store.Docs
}

// NewDocStore returns a Store over docs.
func NewDocStore(docs store.Docs) *DocStore { return &DocStore{docs: docs} }

// Load implements [Store].
func (d *DocStore) Load(ctx context.Context, id string) (*State, error) {
	doc, err := d.get(ctx, id)
	if err != nil || doc == nil {
		if err == nil {
			return NewState(Config{}), nil
		}
		return nil, err
	}
	return decodeDoc(id, doc)
}

// Update implements [Store].
func (d *DocStore) Update(ctx context.Context, id string, fn func(*State) error) error {
	for {
		doc, err := d.get(ctx, id)
		if err != nil {
			return err
		}
		s := NewState(Config{})
		if doc == nil {
			doc = &store.Doc{ChatID: id, Name: DocName}
		} else if s, err = decodeDoc(id, doc); err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
		data, err := Marshal(s)
		if err != nil {
			return fmt.Errorf("toolstate: conversation %q: %w", id, err)
		}
		if doc.Version != 0 && bytes.Equal(data, doc.Data) {
			return nil
		}
		doc.Data = data
		err = d.docs.PutDoc(ctx, doc)
		if !errors.Is(err, store.ErrConflict) {
			if err != nil {
				return fmt.Errorf("toolstate: conversation %q: %w", id, err)
			}
			return nil
		}
	}
}

// Delete implements [Store].
func (d *DocStore) Delete(ctx context.Context, id string) error {
	return d.remove(ctx, id, func(*store.Doc) bool { return true })
}

// Discard implements [Store]: a document that does not decode is deleted
// (the store keeps no copy of it).
func (d *DocStore) Discard(ctx context.Context, id string) error {
	return d.remove(ctx, id, func(doc *store.Doc) bool {
		_, err := decodeDoc(id, doc)
		return err != nil
	})
}

// remove deletes the conversation's document when drop says so, retrying
// on a conflict with the document as it then is.
func (d *DocStore) remove(ctx context.Context, id string, drop func(*store.Doc) bool) error {
	for {
		doc, err := d.get(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && doc == nil) {
			return nil
		}
		if err != nil {
			return err
		}
		if !drop(doc) {
			return nil
		}
		err = d.docs.DeleteDoc(ctx, id, DocName, doc.Version)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case errors.Is(err, store.ErrConflict):
			continue
		case err != nil:
			return fmt.Errorf("toolstate: conversation %q: %w", id, err)
		}
		return nil
	}
}

// get returns the conversation's document, or nil (and no error) when
// there is none.
func (d *DocStore) get(ctx context.Context, id string) (*store.Doc, error) {
	if id == "" {
		return nil, ErrEmptyID
	}
	doc, err := d.docs.GetDoc(ctx, id, DocName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // no document, or no chat: PutDoc tells them apart
	}
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	return doc, nil
}

// decodeDoc decodes a stored document; the error names the conversation.
func decodeDoc(id string, doc *store.Doc) (*State, error) {
	s, err := Unmarshal(doc.Data)
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q (document %q, version %d): %w", id, DocName, doc.Version, err)
	}
	return s, nil
}
